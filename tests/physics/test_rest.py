"""The physical model's reset is its own rest (offroad_env.physics.rest): what a user sees first.

Each test resets braked vehicles through the public simulator (``sim.reset`` with a given start
pose) and holds the brake. The references are independent of the solver: the weight (the
ground's vertical forces sum to m g, the IMU reads g), the soil's forward pressure integral
(the rut carries the wheel's load: :func:`offroad_env.physics.soil.support`), and the compliant
tilt-table closed form of ``test_rigid_body`` (the side slope at which the model tips).
"""

import math

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv, TaskConfig
from offroad_env.physics.rigid_params import RigidBodyParams, suspension
from offroad_env.physics.soil import SOILS, support
from offroad_env.physics.vehicle import preset
from offroad_env.task.task import EndReason
from test_rigid_body import compliant_side_tip

F64 = torch.float64
G = 9.81


def _reset(beta=0.0, soil=None, mu=0.8, vehicle="husky", n=2, yaw=0.0, size=40.0):
    """A braked reset at the map's centre on a side slope of ``beta`` [deg] (soil by name);
    returns the simulator."""
    plane = terrain.PlaneConfig(size=(size, size), resolution=(0.1, 0.1), slope_x=0.0,
                                slope_y=math.tan(math.radians(beta)))
    env = OffroadVectorEnv(num_envs=n, dynamics="rigid_body", terrain=plane, num_maps=1,
                           max_episode_steps=1000, dtype=F64, vehicle=vehicle,
                           dynamics_params=RigidBodyParams(
                               mu=mu, soil=None if soil is None else SOILS[soil]))
    sim = env.sim
    sim.reset(torch.ones(n, dtype=torch.bool),
              start_pose=torch.tensor([[0.0, 0.0, yaw]] * n, dtype=F64),
              goal=torch.tensor([[0.4 * size] * 2] * n, dtype=F64))
    return sim


def _hold(sim, seconds=3.0):
    """Brake for ``seconds``; returns ``(how far the base moved [m] (N,), end reasons of the
    rows that ended (dict row -> name))``."""
    st = sim.state
    p0 = st.contact.base_position.clone()
    ended = {}
    for _ in range(int(round(seconds / sim.cfg.dt))):
        _, _, term, info = sim.step(torch.zeros(sim.n, 2, dtype=F64))
        for i in torch.nonzero(term).flatten().tolist():
            ended.setdefault(i, EndReason(int(info["end_reason"][i])).name)
        if ended:
            break
    return (st.contact.base_position - p0).norm(dim=1), ended


@pytest.mark.parametrize("beta,soil", [(0.0, None), (0.0, "dry_sand"), (0.0, "snow"),
                                       (30.0, None)])
def test_the_first_observation_is_the_rest_and_the_rest_stays(beta, soil):
    sim = _reset(beta, soil)
    st, gc, v = sim.state, sim.state.contact, sim.vehicle
    mg = v.mass * G
    # the IMU reads g, the ground's vertical forces (normal and friction) carry m g
    assert st.accel_s.norm(dim=1).tolist() == pytest.approx([G] * 2, rel=1e-3)
    assert gc.normal_force.sum(1).tolist() == pytest.approx([mg] * 2, rel=1e-3)
    assert bool(gc.converged.all()) and bool(gc.stable.all())
    # rolled by beta and by the sag of the load transferred downhill: each side's load is
    # m g (cos(beta) / 2 -+ sin(beta) h / track), on two springs of stiffness k a side (to
    # 0.5 deg: the model's contacts move across the tread as it rolls, body_contact.EDGE_TILT,
    # which moves the arms; this closed form keeps them at the mid-planes)
    b, t = math.radians(beta), v.track_width
    k = suspension(v, RigidBodyParams(), G).k[0]
    shift = mg * math.sin(b) * (v.wheel_radius + v.com[2]) / t
    phi = math.atan(2 * shift / (2 * k) / t)
    assert float(gc.roll[0]) == pytest.approx(b + phi, abs=math.radians(0.5))
    if soil is not None:
        # each rut carries its wheel's normal load by the soil's own pressure integral
        N = gc.normal_force[0]  # vertical = normal on flat ground
        held = support(SOILS[soil], v.wheel_width, v.wheel_radius, st.wheel_sinkage[0],
                       static=True)
        assert held.tolist() == pytest.approx(N.tolist(), rel=0.01)
        assert float(st.wheel_sinkage.min()) > 0.005
    rut0 = st.wheel_sinkage.clone()
    # the first step starts from that state: no jolt
    sim.step(torch.zeros(2, 2, dtype=F64))
    assert st.accel_s.norm(dim=1).tolist() == pytest.approx([G] * 2, rel=0.01)
    assert sim.state.contact.normal_force.sum(1).tolist() == pytest.approx([mg] * 2, rel=0.01)
    assert (st.wheel_sinkage - rut0).abs().max() < 1e-3
    moved, ended = _hold(sim, 3.0)
    assert not ended
    assert float(moved.max()) < 1e-3


@pytest.mark.parametrize("name", ["husky", "rc_truck"])
def test_a_braked_reset_holds_below_its_tilt_table_angle_and_tips_above(name):
    # the model's own tilt-table angle (the compliant closed form that test_rigid_body checks
    # the tilting table against, within 1 deg): 2 deg below it a reset stays put for 3 s,
    # 2 deg above it the vehicle tips (mu 3: it cannot slide first)
    want = compliant_side_tip(preset(name))
    sim = _reset(want - 2.0, mu=3.0, vehicle=name, n=1)
    assert bool(sim.state.contact.stable.all())
    moved, ended = _hold(sim, 3.0)
    assert not ended and float(moved.max()) < 0.01, (want, moved, ended)
    sim = _reset(want + 2.0, mu=3.0, vehicle=name, n=1)
    _, ended = _hold(sim, 3.0)
    assert ended == {0: "TIP_OVER"}, (want, ended)


def test_a_reset_past_the_slide_limit_slides_and_the_spawn_check_says_so():
    # 30 deg at mu 0.5 < tan(30 deg): friction cannot hold the rest; a drawn spawn there is
    # refused (``converged`` False) and a given start slides at once
    with pytest.warns(UserWarning, match="no stable rest"):
        sim = _reset(30.0, mu=0.5)
    assert not bool(sim.state.contact.converged.any())
    moved, _ = _hold(sim, 1.0)
    a = G * (math.sin(math.radians(30)) - 0.5 * math.cos(math.radians(30)))
    assert float(moved.min()) > 0.5 * (0.5 * a * 1.0 ** 2)  # half the free slide's distance


@pytest.mark.parametrize("beta,mu", [(30.0, 0.8), (40.0, 3.0), (50.0, 3.0)])
def test_random_spawns_on_slopes_rest_braked(beta, mu):
    # 64 spawns drawn by the env (random headings) on planes within the Husky's static limits
    # (tip: about 58 deg sideways; slide: atan(mu)): 20 braked steps end none of them
    plane = terrain.PlaneConfig(size=(30.0, 30.0), resolution=(0.1, 0.1), slope_x=0.0,
                                slope_y=math.tan(math.radians(beta)))
    env = OffroadVectorEnv(num_envs=64, dynamics="rigid_body", terrain=plane, num_maps=1,
                           max_episode_steps=1000, dynamics_params=RigidBodyParams(mu=mu),
                           task=TaskConfig(goal_distance=(4.0, 6.0)))
    env.reset(seed=1)
    p0 = env.sim.state.contact.base_position.clone()
    for _ in range(20):
        _, _, term, trunc, _ = env.step(torch.zeros(64, 2))
        assert not bool((term | trunc).any())
    assert float((env.sim.state.contact.base_position - p0).norm(dim=1).max()) < 0.01


def test_a_slope_friction_cannot_hold_anywhere_warns_and_starts_sliding():
    # 40 deg at mu 0.8 < tan(40 deg): every heading slides, so no spawn rests; after the
    # redraws the env says so once and starts the vehicles where they slide (a steep map's
    # honest start; a training run on it goes on), and a slope past the tip limits raises
    plane = terrain.PlaneConfig(size=(30.0, 30.0), resolution=(0.1, 0.1), slope_x=0.0,
                                slope_y=math.tan(math.radians(40.0)))
    env = OffroadVectorEnv(num_envs=4, dynamics="rigid_body", terrain=plane, num_maps=1,
                           dynamics_params=RigidBodyParams(mu=0.8))
    with pytest.warns(UserWarning, match="slide at once"):
        env.reset(seed=1)
    assert not bool(env.sim.state.contact.converged.any())
    steep = terrain.PlaneConfig(size=(30.0, 30.0), resolution=(0.1, 0.1), slope_x=0.0,
                                slope_y=math.tan(math.radians(75.0)))
    env = OffroadVectorEnv(num_envs=4, dynamics="rigid_body", terrain=steep, num_maps=1,
                           dynamics_params=RigidBodyParams(mu=3.0))
    with pytest.raises(RuntimeError, match="no stable spawn"):
        env.reset(seed=1)


@pytest.mark.parametrize("name", ["husky", "rc_truck"])
def test_the_energy_margin_reaches_zero_at_the_tilt_table_angle(name):
    # the observed energy margin over the tip judgement's own support points: positive 2 deg
    # below the model's tilt-table angle, negative 2 deg above it (where the force-angle
    # margin over hub-minus-r points warned 4 deg early, issue 44)
    want = compliant_side_tip(preset(name))
    sim = _reset(want - 2.0, mu=3.0, vehicle=name, n=1)
    assert float(sim.state.energy_margin[0]) > 0
    sim = _reset(want + 2.0, mu=3.0, vehicle=name, n=1)
    assert float(sim.state.energy_margin[0]) < 0


def test_a_given_start_that_cannot_rest_is_kept_and_said():
    with pytest.warns(UserWarning, match="no stable rest"):
        sim = _reset(30.0, mu=0.5)  # friction cannot hold 30 deg at mu 0.5
    assert not bool(sim.state.contact.converged.any())


@pytest.mark.parametrize("soil", list(SOILS))
def test_a_wheels_load_on_soil_meets_a_bisection_to_the_last_digit(soil):
    """The rest's load on soil (a bracketed root search of ``spring(c) = ratio_n W`` with
    ``c + Z(W) = p``) against 80 halvings of the load itself, in float64, over compressions
    below and past the bump stop's onset and wheels tilted off the normal: within 1e-8
    relative (the search's 8 rounds; the bisection resolves to 2^-80)."""
    from types import SimpleNamespace

    from offroad_env.physics import rest
    from offroad_env.physics.soil import sinkage
    s = SOILS[soil]
    gen = torch.Generator().manual_seed(3)
    k, k_b, s_max = 1.2e5, 1.2e6, 0.025
    lay = SimpleNamespace(k=torch.tensor(k, dtype=F64), k_b=torch.tensor(k_b, dtype=F64),
                          s_max=torch.tensor(s_max, dtype=F64))
    p = torch.rand(4, 2000, generator=gen, dtype=F64) * 0.08 - 0.01
    ratio = 0.7 + 0.3 * torch.rand(4, 2000, generator=gen, dtype=F64)
    F, stiff, z = rest._wheel_loads(lay, p, ratio, torch.ones(2000, dtype=torch.bool), s,
                                    None, 0.25, 0.165)

    def spring(c):
        return k * c.clamp_min(0) + k_b * (c - s_max).clamp_min(0)

    lo = torch.zeros_like(p)
    hi = torch.where(p > 0, spring(p), lo)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        more = spring(p - sinkage(s, 0.25, 0.165, mid / ratio, static=True)) > mid
        lo, hi = torch.where(more, mid, lo), torch.where(more, hi, mid)
    ref = 0.5 * (lo + hi)
    assert ((F - ref).abs() / ref.clamp_min(1.0)).max() < 1e-8
    assert torch.equal(F[p <= 0], torch.zeros_like(F[p <= 0]))
    # the rut is the load's sinkage, and the series stiffness lies below the spring's
    assert torch.allclose(z, sinkage(s, 0.25, 0.165, F / ratio, static=True), atol=0, rtol=0)
    # the stiffness is dF/dp: against a central difference of the load, away from the kink
    h = 1e-7
    up = rest._wheel_loads(lay, p + h, ratio, torch.ones(2000, dtype=torch.bool), s, None,
                           0.25, 0.165)[0]
    dn = rest._wheel_loads(lay, p - h, ratio, torch.ones(2000, dtype=torch.bool), s, None,
                           0.25, 0.165)[0]
    smooth = (p > 1e-3) & ((p - z - s_max).abs() > 1e-4)
    fd = (up - dn) / (2 * h)
    assert torch.allclose(stiff[smooth], fd[smooth], rtol=2e-3), \
        ((stiff - fd).abs() / fd)[smooth].max()
