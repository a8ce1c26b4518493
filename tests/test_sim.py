"""The simulator's rooms: the state and its row merges, spawning, the observation registry, the
configs' checks and the one gravity, and the env's public seams."""

import dataclasses
import math

import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv, Simulator, spawn
from offroad_env.config import HeightScanConfig, SimConfig, TaskConfig
from offroad_env.config import OBS_TERMS
from offroad_env.dynamics import SkidSteerParams
from offroad_env.observations import TERMS
from offroad_env.physics.models import MODELS
from offroad_env.state import CORE_FIELDS, STREAM_FIELDS, SimState, join_fields
from offroad_env.vehicle import husky

FLAT = terrain.FlatConfig(size=(20.0, 20.0), resolution=(0.1, 0.1))


def sim(n=4, dtype=torch.float32, **kw):
    s = Simulator(SimConfig(**{"terrain": FLAT, "num_maps": 1, **kw}), n, dtype=dtype)
    s.set_keys(torch.arange(n, dtype=torch.int64) * 7919 + 1, torch.ones(n, dtype=torch.bool))
    s.reset(torch.ones(n, dtype=torch.bool))
    return s


# ------------------------------------------------------------------ state
def test_state_put_restart_and_restore_take_rows_and_keep_layouts():
    fields = join_fields(("core", CORE_FIELDS), ("skid", MODELS["skid_steer"].fields))
    st = SimState.zeros(4, 4, 2, fields=fields)
    assert st.wheel_omega.shape == (4, 4) and st.wheel_omega.stride() == (1, 4)
    mask = torch.tensor([True, False, True, False])
    st.put(mask, x=torch.arange(4.0), goal_w=torch.ones(4, 2))
    assert st.x.tolist() == [0.0, 0.0, 2.0, 0.0]
    assert st.goal_w[:, 0].tolist() == [1.0, 0.0, 1.0, 0.0]
    snap = st.copy()
    st.put(mask, idx=torch.tensor([1, 3]), x=torch.tensor([5.0, 6.0]),
           wheel_omega=torch.full((2, 4), 3.0))
    assert st.x.tolist() == [0.0, 5.0, 2.0, 6.0]
    assert st.wheel_omega.stride() == (1, 4) and st.wheel_omega[1].tolist() == [3.0] * 4
    st.keys = torch.full((4,), 9, dtype=torch.int64)
    st.restart(torch.tensor([False, True, False, False]), y=torch.full((4,), 2.0))
    assert st.x.tolist() == [0.0, 0.0, 2.0, 6.0] and st.y.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert st.wheel_omega[1].tolist() == [0.0] * 4 and st.keys.tolist() == [9] * 4
    st.restore(torch.tensor([False, False, False, True]), snap)
    assert st.x.tolist() == [0.0, 0.0, 2.0, 0.0]
    assert STREAM_FIELDS == ("keys", "counters")


def test_every_state_field_restarts_on_reset_except_the_streams():
    s = sim(2, dynamics="skid_steer")
    for _ in range(5):
        s.step(torch.ones(2, 2))
    before = s.state.copy()
    s.reset(torch.tensor([True, False]))
    st = s.state
    assert {"wheel_omega", "accel_bias_s", "margin", "keys"} <= set(st.fields)
    for name in st.fields:
        new, old = getattr(st, name), getattr(before, name)
        assert torch.equal(new[1], old[1]), name  # the other row is untouched
    assert st.steps[0] == 0 and (st.wheel_omega[0] == 0).all() and st.vx_b[0] == 0
    assert (st.counters[0] > before.counters[0])  # the stream goes on


# ------------------------------------------------------------------ spawning
def test_goals_keep_the_distance_range_and_the_margin_over_1e5_resets():
    maps = terrain.make_heightmap(FLAT)  # 20 x 20 m: a 12 x 12 m free area
    task = TaskConfig(goal_distance=(2.0, 6.0), spawn_margin=4.0)
    n = 100_000
    g = torch.Generator().manual_seed(0)
    s = spawn.spawn_with_redraws(lambda k, adv: torch.rand(n, k, generator=g),
                                 torch.ones(n, dtype=torch.bool), maps, husky(), task, None)
    d = torch.hypot(s.goal_x - s.x, s.goal_y - s.y)
    assert float(d.min()) >= 2.0 - 1e-4 and float(d.max()) <= 6.0 + 1e-4  # clamping broke this
    for v in (s.x, s.y, s.goal_x, s.goal_y):
        assert float(v.min()) >= -6.0 - 1e-5 and float(v.max()) <= 6.0 + 1e-5
    assert (s.map_index == 0).all() and (s.yaw.abs() <= math.pi).all()
    start = torch.tensor([[1.0, -2.0, 0.5]]).expand(n, 3)
    p = spawn.spawn_with_redraws(lambda k, adv: torch.rand(n, k, generator=g),
                                 torch.ones(n, dtype=torch.bool), maps, husky(), task, start)
    assert (p.x == 1.0).all() and (p.yaw == 0.5).all()
    assert float(torch.hypot(p.goal_x - 1.0, p.goal_y + 2.0).min()) >= 2.0 - 1e-4


def test_a_goal_range_the_map_cannot_hold_is_refused_up_front():
    with pytest.raises(ValueError, match="goal_distance"):
        Simulator(SimConfig(terrain=FLAT, num_maps=1, task=TaskConfig(goal_distance=(30.0, 40.0))),
                  1)


# ------------------------------------------------------------------ observations
def test_the_observation_registry_is_the_one_list_of_terms():
    assert OBS_TERMS == tuple(TERMS)
    with pytest.raises(ValueError, match="obs_terms"):
        SimConfig(obs_terms=("z_rel", "speedometer"))


def test_every_term_computes_its_declared_size_within_its_bounds():
    cfg_terms = tuple(t for t in TERMS if t != "height_scan")
    s = sim(3, obs_terms=cfg_terms, height_scan=HeightScanConfig(size=(0.4, 0.2)))
    obs = s.step(torch.rand(3, 2) * 2 - 1)[0]
    layout = s.obs_layout
    assert [name for name, _, _ in layout] == list(cfg_terms) + ["height_scan"]
    assert layout[0][1] == 0 and layout[-1][2] == obs.shape[1] == s.obs_dim
    for (_, _, stop), (_, start, _) in zip(layout, layout[1:]):
        assert stop == start
    lo, hi = s.obs_bounds()
    assert (obs.numpy() >= lo).all() and (obs.numpy() <= hi).all()
    for name, start, stop in layout:
        raw = TERMS[name].compute(s.state, s.maps, s.cfg)
        assert raw.shape == (3, stop - start), name


# ------------------------------------------------------------------ configs and gravity
@pytest.mark.parametrize("kw, match", [
    (dict(d_eps=-1.0), "d_eps"), (dict(d_eps=float("nan")), "d_eps"),
    (dict(gravity=0.0), "gravity"), (dict(dynamics="tank"), "dynamics"),
    (dict(ground="lcp"), "ground")])
def test_sim_config_rejects_bad_values(kw, match):
    with pytest.raises(ValueError, match=match):
        SimConfig(**kw)


@pytest.mark.parametrize("kw, match", [
    (dict(resolution=0.0), "resolution"), (dict(clip=-1.0), "clip"),
    (dict(size=(1.0, float("inf"))), "size"), (dict(forward_offset=float("nan")), "forward")])
def test_height_scan_config_rejects_bad_values(kw, match):
    with pytest.raises(ValueError, match=match):
        HeightScanConfig(**kw)


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SimConfig().dt = 0.1
    with pytest.raises(dataclasses.FrozenInstanceError):
        HeightScanConfig().clip = 1.0


def test_one_gravity_reaches_the_loads_the_imu_and_the_skid_steer_slope():
    g = 3.71  # Mars
    slope = terrain.PlaneConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), slope_x=0.3)
    s = Simulator(SimConfig(terrain=slope, num_maps=1, gravity=g, dynamics="skid_steer",
                            ground="rigid_contact", skid=SkidSteerParams(mu=0.0, c_rr=0.0)),
                  1, dtype=torch.float64)
    s.set_keys(torch.tensor([1]), torch.ones(1, dtype=torch.bool))
    s.reset(torch.ones(1, dtype=torch.bool), torch.tensor([[0.0, 0.0, 0.0]]))
    gc = s.state.contact
    assert float(gc.normal_force.sum()) == pytest.approx(s.vehicle.mass * g, rel=1e-9)
    assert float(torch.linalg.vector_norm(s.state.accel_s)) == pytest.approx(g, rel=1e-9)
    pitch = float(gc.pitch)
    assert pitch == pytest.approx(-math.atan(0.3), abs=1e-6)  # nose up the slope
    s.step(torch.zeros(1, 2))  # frictionless: it slides back at g sin(pitch)
    assert float(s.state.vx_b) == pytest.approx(s.cfg.dt * g * math.sin(pitch), rel=1e-6)


# ------------------------------------------------------------------ public seams
def test_seams_reset_hooks_terrain_draws_and_the_state_view():
    env = OffroadVectorEnv(num_envs=3, terrain=FLAT, num_maps=1)
    seen = []
    env.add_reset_hook(lambda m: seen.append(m.clone()))
    env.reset(seed=0)
    assert len(seen) == 1 and seen[0].all()
    u1, u2 = env.draw_uniform(4, salt=5), env.draw_uniform(4, salt=5)
    assert torch.equal(u1, u2) and not torch.equal(u1, env.draw_uniform(4, salt=6))
    single = OffroadEnv(terrain=FLAT, num_maps=1)
    single.reset(seed=2)
    assert torch.equal(single.draw_uniform(4, salt=5)[0], u1[2])  # sub-env 2 = seed 0 + 2
    view = env.state_view()
    assert view.base_position_w.shape == (3, 3) and view.contact.normal_force.shape == (3, 4)
    assert env.reward_terms == tuple(f.name for f in dataclasses.fields(
        env.config.task.weights))
    other = terrain.make_heightmap(dataclasses.replace(FLAT, size=(10.0, 10.0)))
    with pytest.raises(ValueError, match="cover"):
        env.set_terrain(other)
    hill = terrain.make_heightmap(terrain.PlaneConfig(size=(20.0, 20.0), resolution=(0.1, 0.1),
                                                      slope_x=0.0, height=1.0))
    env.set_terrain(hill)
    env.reset(seed=0)
    assert torch.allclose(env.state_view().contact.position[:, 2],
                          torch.full((3,), 1.0 + env.vehicle.wheel_radius), atol=1e-5)
