"""The public seams wrappers and training use: reset hooks, terrain, draws, the state view."""

import dataclasses

import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv

from env_util import FLAT20 as FLAT


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
