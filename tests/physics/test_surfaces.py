"""Rigid surfaces of their own friction in a material map (issue 24, "the cell's mu"): each
wheel of the physical model takes the friction of the surface under it."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.physics.surfaces import SURFACES

F64 = dict(dtype=torch.float64)
G = 9.81
N_CELLS = 301  # 30 m at 0.1 m; column 150 is x = 0


def _env(beta_deg=0.0, materials=None, names=None, mu=0.8, dynamics="rigid_body"):
    """The Husky (velocity task, float64) on a plane rising along +x by ``beta_deg``."""
    x = (np.arange(N_CELLS) - 150) * 0.1
    z = np.tile(x * math.tan(math.radians(beta_deg)), (N_CELLS, 1))
    hm = terrain.HeightMap(z, 0.1, materials=materials, material_names=names)
    params = RigidBodyParams(mu=mu) if dynamics == "rigid_body" else None
    return OffroadVectorEnv(num_envs=1, heightmap=hm, dynamics=dynamics, task="velocity",
                            dynamics_params=params, dtype=torch.float64)


def _braked(env, seconds):
    """x of the body [m] along the plane each step of ``seconds``, braked (zero wheel speeds),
    from rest at the origin facing up the slope."""
    env.reset(seed=0, options={"start_pose": torch.tensor([[0.0, 0.0, 0.0]], **F64)})
    xs = []
    for _ in range(int(round(seconds / 0.05))):
        env.step(torch.zeros(1, 2, **F64))
        xs.append(float(env.unwrapped.state_view().x[0]))
    return np.asarray(xs)


def test_a_map_all_of_one_surface_is_the_env_at_that_mu_bit_for_bit():
    ones = np.ones((N_CELLS, N_CELLS), int)
    ice = _braked(_env(20.0, ones, ("hard", "ice")), 1.0)
    assert np.array_equal(ice, _braked(_env(20.0, mu=SURFACES["ice"]), 1.0))
    assert not np.array_equal(ice, _braked(_env(20.0), 1.0))


@pytest.mark.parametrize("name,holds", [("dry_concrete", True), ("gravel", False),
                                        ("wet_grass", False), ("ice", False)])
def test_braked_on_a_20_deg_slope_each_surface_holds_or_slides_as_its_mu_says(name, holds):
    # tan(20 deg) = 0.364: dry concrete (0.75) holds; gravel (0.35, atan 19.3 deg) slides
    # slowly, at 0.13 m/s^2; wet grass (0.20) and ice (0.10) faster: g (sin - mu cos) within 10 %
    beta = math.radians(20.0)
    mu = SURFACES[name]
    assert holds == (math.tan(beta) < mu)
    xs = _braked(_env(20.0, np.ones((N_CELLS, N_CELLS), int), ("hard", name)), 3.0)
    if math.tan(beta) < mu:
        assert abs(xs[-1] - xs[9]) < 0.01  # drift under 1 cm in 2.5 s
    else:
        v1, v2 = (xs[20] - xs[19]) / 0.05, (xs[59] - xs[58]) / 0.05
        accel = (v2 - v1) / 1.95 / math.cos(beta)  # along the slope
        want = -G * (math.sin(beta) - mu * math.cos(beta))
        assert accel == pytest.approx(want, rel=0.10), (name, accel, want)


def test_each_wheel_takes_the_friction_under_it():
    """Rear wheels on ice, front wheels on concrete (an edge at x = 0: the Husky's rear axle at
    x = -0.256 m), braked on 20 deg: the front wheels' friction holds the body, so it slides
    less than all on ice and more than all on concrete."""
    half = np.zeros((N_CELLS, N_CELLS), int)
    half[:, 150:] = 1
    names = ("ice", "dry_concrete")
    env = _env(20.0, half, names)
    env.reset(seed=0, options={"start_pose": torch.tensor([[-0.256, 0.0, 0.0]], **F64)})
    x0 = float(env.unwrapped.state_view().x[0])
    for _ in range(20):
        env.step(torch.zeros(1, 2, **F64))
    mixed = x0 - float(env.unwrapped.state_view().x[0])
    all_ice = _braked(_env(20.0, np.zeros((N_CELLS, N_CELLS), int), names), 1.0)
    assert 0.0 <= mixed < 0.5 * (0.0 - all_ice[-1])


def test_surfaces_are_refused_by_the_models_of_one_friction():
    ice = np.zeros((N_CELLS, N_CELLS), int)
    ice[:, 150:] = 1
    with pytest.raises(ValueError, match=r"holds the soils or surfaces \['ice'\]"):
        _env(0.0, ice, ("hard", "ice"), dynamics="skid_steer")
    with pytest.raises(ValueError, match="unknown material 'glass'"):
        _env(0.0, ice, ("hard", "glass"))


@pytest.mark.slow
def test_the_compiled_step_on_surfaces_matches_the_eager_one():
    from env_util import ruts_after_random_steps
    stripes = np.zeros((N_CELLS, N_CELLS), int)
    stripes[:, 140:160] = 1
    stripes[:, 160:] = 2
    hm = terrain.HeightMap(np.zeros((N_CELLS, N_CELLS)), 0.1, materials=stripes,
                           material_names=("hard", "ice", "gravel"))
    runs = {c: ruts_after_random_steps(c, heightmap=hm) for c in (False, True)}
    assert torch.allclose(runs[True][1], runs[False][1], atol=1e-4)


# ------------------------------------------------------------- declared surfaces (issue 67)
def _declared_env(beta_deg, defs, name="my/ground", mu=0.8):
    """The Husky on a plane of one declared material ``name`` (``defs``: its declaration)."""
    x = (np.arange(N_CELLS) - 150) * 0.1
    z = np.tile(x * math.tan(math.radians(beta_deg)), (N_CELLS, 1))
    hm = terrain.HeightMap(z, 0.1, materials=np.ones((N_CELLS, N_CELLS), int),
                           material_names=("hard", name), material_defs=defs)
    return OffroadVectorEnv(num_envs=1, heightmap=hm, dynamics="rigid_body", task="velocity",
                            dynamics_params=RigidBodyParams(mu=mu), dtype=torch.float64)


def test_a_declared_surface_is_the_env_at_its_mu_bit_for_bit():
    # a friction no table holds (Verti-Bench's patches: 0.6255)
    xs = _braked(_declared_env(20.0, {"my/ground": {"mu": 0.6255}}), 1.0)
    assert np.array_equal(xs, _braked(_env(20.0, mu=0.6255), 1.0))
    # its rolling resistance, given as the vehicle's own, changes nothing either
    same = _braked(_declared_env(20.0, {"my/ground": {"mu": 0.6255, "c_rr": 0.02}}), 1.0)
    assert np.array_equal(same, xs)


def _distance_after(c_rr, seconds=2.0):
    """How far [m] the Husky drives in ``seconds`` at full wheel speed from rest on flat
    ground of a declared surface of rolling resistance ``c_rr`` (friction 3: grip never caps
    the drive)."""
    env = _declared_env(0.0, {"my/ground": {"mu": 3.0, "c_rr": c_rr}})
    env.reset(seed=0, options={"start_pose": torch.tensor([[0.0, 0.0, 0.0]], **F64)})
    for _ in range(int(round(seconds / 0.05))):
        env.step(torch.ones(1, 2, **F64))
    return float(env.unwrapped.state_view().x[0])


def test_a_declared_rolling_resistance_slows_the_drive_and_stalls_it_past_the_motors():
    """The motors carry at most ``4 T_max / r`` against ``c_rr m g``: past ``c* = 4 T_max / (m
    g r)`` (1.05 for the Husky) they cannot keep it rolling; below it the drive slows as the
    resistance grows."""
    from offroad_env.physics.vehicle import husky

    v = husky()
    c_star = v.wheel_torque / (v.mass * G / 4 * v.wheel_radius)
    free = _distance_after(0.02)
    half = _distance_after(0.5 * c_star)
    stalled = _distance_after(1.5 * c_star)
    assert free > 1.5
    assert 0.5 * free < half < free
    assert stalled < 0.2 * free


def test_declarations_are_refused_where_they_enter():
    with pytest.raises(ValueError, match=r"material_defs\['my/mud'\]: missing \['K', 'c'"):
        _declared_env(0.0, {"my/mud": {"n": 1.1, "k_c": 0.0, "k_phi": 2e6, "phi_deg": 30}},
                      name="my/mud")
    with pytest.raises(ValueError, match=r"material_defs\['my/ground'\].mu must be a finite"):
        _declared_env(0.0, {"my/ground": {"mu": float("nan")}})
    with pytest.raises(ValueError, match="'ice' is a built-in surface; declare yours under"):
        _declared_env(0.0, {"ice": {"mu": 0.2}}, name="ice")
    with pytest.raises(ValueError, match=r"declared soil 'my/mud': Soil.n must be in"):
        _declared_env(0.0, {"my/mud": {"n": 3.0, "k_c": 0.0, "k_phi": 2e6, "c": 0.0,
                                       "phi_deg": 30.0, "K": 0.01}}, name="my/mud")
    with pytest.raises(ValueError, match="unknown material 'my/other'.*the map's declared"):
        _declared_env(0.0, {"my/ground": {"mu": 0.5}}, name="my/other")
    a = terrain.HeightMap(np.zeros((3, 3)), 1.0, material_defs={"x/g": {"mu": 0.5}})
    b = terrain.HeightMap(np.zeros((3, 3)), 1.0, material_defs={"x/g": {"mu": 0.6}})
    with pytest.raises(ValueError, match="'x/g' is declared two ways"):
        terrain.HeightMap.stack([a, b])
    assert terrain.HeightMap.stack([a, a]).material_defs == {"x/g": {"mu": 0.5}}
    assert a[0].material_defs == a.material_defs
