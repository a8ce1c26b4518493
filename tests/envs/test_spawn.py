"""Spawns and goals: distance ranges and margins, holes avoided, per-env determinism."""

import math
import warnings
from dataclasses import replace

import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv, Simulator
from offroad_env.core import spawn
from offroad_env.sim.config import SimConfig, TaskConfig
from offroad_env.physics.vehicle import husky

from env_util import FLAT20 as FLAT


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


def test_spawns_and_goals_avoid_holes_and_stay_per_env_deterministic():
    import terrain as T
    holes = T.HolesConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), count=60,
                          radius_range=(0.5, 1.2), keep_center=0.0)
    venv = OffroadVectorEnv(num_envs=512, terrain=holes, num_maps=2)
    venv.reset(seed=3)
    sim = venv.sim
    st = sim.state
    assert not bool(st.contact.hole.any())
    assert torch.isfinite(sim.maps.height(st.goal_w[:, 0], st.goal_w[:, 1], st.map_index)).all()
    # without the redraw a good share of these spawns would touch a hole
    plain = spawn.draw_spawn(torch.rand(512, 8, generator=torch.Generator().manual_seed(0)),
                             sim.maps, sim.cfg.task, None)
    assert spawn.in_hole(sim.maps, sim.vehicle, plain, True).float().mean() > 0.2
    single = OffroadEnv(terrain=holes, num_maps=2)
    for i in (0, 7, 300):
        obs, _ = single.reset(seed=3 + i)
        assert float(single.sim.state.x[0]) == float(st.x[i])
        assert float(single.sim.state.goal_w[0, 1]) == float(st.goal_w[i, 1])


def _bearing_to_goal(st) -> torch.Tensor:
    """``(N,)`` the goal's bearing from the rear axle's heading [rad], wrapped to (-pi, pi]."""
    b = torch.atan2(st.goal_w[:, 1] - st.y, st.goal_w[:, 0] - st.x) - st.yaw
    return torch.atan2(torch.sin(b), torch.cos(b))


@pytest.mark.parametrize("spread", [0.0, 0.5, math.pi])
def test_starts_face_their_goals_within_the_heading_spread(spread):
    """``start_heading_spread`` s: the heading is the goal's bearing plus U(-s, s), so the
    goal's bearing from the vehicle is uniform on [-s, s] (mean |bearing| s / 2, the uniform's
    standard error at 4096 draws s / sqrt(12 * 4096) < 0.005 s; checked at 0.02 s)."""
    task = TaskConfig(goal_distance=(2.0, 6.0), start_heading_spread=spread)
    venv = OffroadVectorEnv(num_envs=4096, terrain=FLAT, num_maps=1, task=task)
    venv.reset(seed=5)
    b = _bearing_to_goal(venv.sim.state).abs()
    assert float(b.max()) <= spread + 1e-5
    assert abs(float(b.mean()) - spread / 2) <= 0.02 * spread + 1e-6
    assert (venv.sim.state.yaw.abs() <= math.pi + 1e-6).all()
    single = OffroadEnv(terrain=FLAT, num_maps=1, task=task)  # still sub-env i of the vector env
    single.reset(seed=5 + 9)
    assert float(single.sim.state.yaw[0]) == float(venv.sim.state.yaw[9])
    # a given goal is faced too; a given start pose keeps its heading
    goal = torch.tensor([[3.0, 4.0]], dtype=torch.float64).expand(4096, 2)
    venv.reset(seed=6, options={"goal": goal})
    assert float(_bearing_to_goal(venv.sim.state).abs().max()) <= spread + 1e-5
    pose = torch.tensor([[0.0, 0.0, 2.0]], dtype=torch.float64).expand(4096, 3)
    venv.reset(seed=6, options={"start_pose": pose})
    assert torch.allclose(venv.sim.state.yaw, torch.full((4096,), 2.0, dtype=venv.sim.state.yaw.dtype))


def test_the_default_heading_is_independent_of_the_goal():
    venv = OffroadVectorEnv(num_envs=4096, terrain=FLAT, num_maps=1,
                            task=TaskConfig(goal_distance=(2.0, 6.0)))
    venv.reset(seed=5)
    b = _bearing_to_goal(venv.sim.state).abs()
    assert abs(float(b.mean()) - math.pi / 2) < 0.05 and float(b.max()) > 3.1


@pytest.mark.parametrize("bad", [-0.1, 4.0, float("nan")])
def test_a_heading_spread_outside_0_pi_is_refused(bad):
    with pytest.raises(ValueError, match="start_heading_spread"):
        TaskConfig(start_heading_spread=bad)
    with pytest.raises(ValueError, match="start_heading_spread needs task kind 'nav'"):
        TaskConfig(kind="velocity", start_heading_spread=0.0)


def _plane(deg: float, az: float = 0.0, n: int = 201, res: float = 0.1):
    """``(n, n)`` heights of a plane rising at ``deg`` toward azimuth ``az`` [rad], centred."""
    c = (torch.arange(n, dtype=torch.float64) - (n - 1) / 2) * res
    y, x = torch.meshgrid(c, c, indexing="ij")
    return math.tan(math.radians(deg)) * (x * math.cos(az) + y * math.sin(az))


@pytest.mark.parametrize("deg,az", [(0.0, 0.0), (10.0, 0.3), (30.0, 2.0), (60.0, -1.0)])
def test_ground_slope_is_the_tangent_of_a_planes_slope(deg, az):
    maps = terrain.HeightMap(_plane(deg, az), 0.1)
    g = torch.Generator().manual_seed(0)
    x, y = (torch.rand(64, generator=g) - 0.5) * 16, (torch.rand(64, generator=g) - 0.5) * 16
    s = spawn.ground_slope(maps, x, y, torch.zeros(64, dtype=torch.int64))
    assert s.dtype == torch.float64
    torch.testing.assert_close(s, torch.full_like(s, math.tan(math.radians(deg))),
                               rtol=2e-6, atol=2e-6)  # float32 heights


def _draw(maps, task, n=4096, seed=0):
    g = torch.Generator().manual_seed(seed)
    return spawn.spawn_with_redraws(lambda k, adv: torch.rand(n, k, generator=g),
                                    torch.ones(n, dtype=torch.bool), maps, husky(), task, None)


def test_a_slope_limit_draws_starts_and_goals_on_flatter_ground():
    # the west half flat, the east half a 30 deg ramp: without a limit about 40 % of starts and
    # of goals lie on the ramp; with 12 deg none (each point judged by the fitted plane)
    h = _plane(30.0).clamp_min(0.0)
    maps = terrain.HeightMap(h, 0.1)
    free = TaskConfig(goal_distance=(2.0, 6.0), spawn_margin=2.0)
    s = _draw(maps, free)
    steep = lambda px, py: spawn.ground_slope(maps, px, py, s.map_index) > math.tan(  # noqa: E731
        math.radians(12.0))
    assert 0.25 < float(steep(s.x, s.y).double().mean()) < 0.6
    assert 0.25 < float(steep(s.goal_x, s.goal_y).double().mean()) < 0.6
    s = _draw(maps, TaskConfig(goal_distance=(2.0, 6.0), spawn_margin=2.0,
                               max_start_slope_deg=12.0))
    assert not bool(steep(s.x, s.y).any()) and not bool(steep(s.goal_x, s.goal_y).any())
    d = torch.hypot(s.goal_x - s.x, s.goal_y - s.y)  # the other rules still hold
    assert float(d.min()) >= 2.0 - 1e-4 and float(d.max()) <= 6.0 + 1e-4
    # a limit every point meets changes no draw: the streams advance as without one
    a, b = _draw(maps, free, seed=5), _draw(maps, replace(free, max_start_slope_deg=90.0), seed=5)
    assert all(torch.equal(u, v) for u, v in zip(a, b))


def test_slope_limits_per_map_and_a_map_without_flat_ground_keeps_its_draws():
    maps = terrain.HeightMap(torch.stack((_plane(20.0), _plane(20.0, 1.0))), 0.1)
    task = TaskConfig(goal_distance=(2.0, 6.0), spawn_margin=2.0, max_start_slope_deg=(12.0, 25.0))
    with pytest.warns(UserWarning, match=r"max_start_slope_deg in 64 draws on maps \[0\]"):
        s = _draw(maps, task, n=512)
    # map 0 has nothing that flat, and still holds its half of the rows (a row redraws on its
    # first map: 512 draws, 4.4 sigma)
    assert 0.4 < float((s.map_index == 0).double().mean()) < 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a map is named once
        _draw(maps, task, n=512, seed=1)
    with pytest.raises(ValueError, match="3 limits; the stack has 2 maps"):
        spawn.slope_limits(maps, replace(task, max_start_slope_deg=(12.0, 25.0, 30.0)))
    with pytest.raises(ValueError, match="max_start_slope_deg"):
        Simulator(SimConfig(terrain=FLAT, num_maps=2,
                            task=TaskConfig(max_start_slope_deg=(12.0, 13.0, 14.0))), 1)


@pytest.mark.parametrize("bad", [0.0, -5.0, 91.0, float("nan"), True, "12", (), (12.0, 0.0)])
def test_a_slope_limit_outside_0_90_is_refused(bad):
    with pytest.raises(ValueError, match="max_start_slope_deg"):
        TaskConfig(max_start_slope_deg=bad)


def test_a_json_list_of_slope_limits_becomes_a_tuple():
    assert TaskConfig(max_start_slope_deg=[12, 38.0]).max_start_slope_deg == (12, 38.0)


def test_a_slope_limit_keeps_the_single_env_equal_to_the_vector_envs_row():
    task = TaskConfig(max_start_slope_deg=4.0)
    hills = terrain.PerlinConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), amplitude=0.5,
                                 frequency=0.1)
    venv = OffroadVectorEnv(num_envs=64, terrain=hills, num_maps=2, task=task)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every row found ground that flat
        venv.reset(seed=11)
    st = venv.sim.state
    tilt = spawn.ground_slope(venv.sim.maps, st.x, st.y, st.map_index)
    assert float(tilt.max()) <= math.tan(math.radians(4.0)) + 0.01  # a placed start may settle
    free = OffroadVectorEnv(num_envs=64, terrain=hills, num_maps=2)
    free.reset(seed=11)
    st0 = free.sim.state
    assert float(spawn.ground_slope(free.sim.maps, st0.x, st0.y, st0.map_index).max()) > 0.09
    single = OffroadEnv(terrain=hills, num_maps=2, task=task)
    for i in (0, 9, 63):
        single.reset(seed=11 + i)
        assert float(single.sim.state.x[0]) == float(st.x[i])
        assert float(single.sim.state.goal_w[0, 0]) == float(st.goal_w[i, 0])
