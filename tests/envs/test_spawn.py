"""Spawns and goals: distance ranges and margins, holes avoided, per-env determinism."""

import math

import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv, Simulator, spawn
from offroad_env.config import SimConfig, TaskConfig
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
