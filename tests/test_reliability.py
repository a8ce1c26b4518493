"""Nothing wrong said silently: end reasons, goals, spawns, actions and infos (each case failed
on the code before its fix)."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env import EndReason, OffroadEnv, OffroadVectorEnv


def _grid(fn, size=20.0, res=0.1):
    x = np.arange(-size / 2, size / 2 + res / 2, res)
    X, Y = np.meshgrid(x, x)
    return terrain.HeightMap(torch.tensor(fn(X, Y), dtype=torch.float32), (res, res))


def _drive(env, action, steps):
    """Step until the episode ends; returns (end reason, |roll|, |pitch|, settled) of that step."""
    for _ in range(steps):
        _, _, term, trunc, info = env.step(torch.tensor([action]))
        if bool(term[0] | trunc[0]):
            v = env.state_view()
            return (int(info["end_reason"][0]), abs(float(v.roll[0])), abs(float(v.pitch[0])),
                    bool(v.contact.settled[0]))
    return None


def test_driving_into_a_hole_ends_as_hole_not_tip_over():
    hm = _grid(lambda X, Y: np.where((X > 2.0) & (X < 3.5) & (np.abs(Y) < 1.5), np.nan, 0.0))
    for ground in ("rigid_contact", "four_wheel"):
        env = OffroadVectorEnv(num_envs=1, heightmap=hm, ground=ground, max_episode_steps=400)
        env.reset(seed=0, options={"start_pose": torch.tensor([[0.0, 0.0, 0.0]])})
        end = _drive(env, [0.5, 0.0], 300)
        assert end is not None and end[0] == EndReason.HOLE, (ground, end)


def test_the_foot_of_a_wall_is_not_a_tip_over_until_a_limit_is_passed():
    # a 70 degree wall: the kinematic vehicle is forced up it; the old step ended the episode as
    # tip-over at 15 degrees of pitch from an unconverged pose (the rest there is stable)
    hm = _grid(lambda X, Y: np.clip((X - 2.0) * math.tan(math.radians(70)), 0.0, 3.0))
    env = OffroadVectorEnv(num_envs=1, heightmap=hm, ground="rigid_contact",
                           max_episode_steps=400)
    env.reset(seed=0, options={"start_pose": torch.tensor([[0.0, 0.0, 0.0]])})
    reason, roll, pitch, settled = _drive(env, [0.5, 0.0], 300)
    assert reason == EndReason.TIP_OVER
    assert pitch > env.sim.pitch_limit or roll > env.sim.roll_limit or settled, (pitch, settled)


def test_every_rigid_spawn_is_a_stable_rest_and_no_episode_ends_on_its_first_step():
    env = OffroadVectorEnv(num_envs=2048, task="nav_rough", ground="rigid_contact")
    env.reset(seed=0)
    v = env.state_view()
    c = v.contact
    assert bool(c.converged.all() & c.stable.all() & ~c.hole.any())
    assert bool((v.roll.abs() < env.sim.roll_limit).all() & (v.pitch.abs() < env.sim.pitch_limit)
                .all())
    _, _, term, _, info = env.step(torch.zeros(2048, 2))
    assert not bool(term.any()), info["end_reason"][term].tolist()
    # the redraws come from each env's own stream: sub-env i is still the single env s + i
    single = OffroadEnv(task="nav_rough", ground="rigid_contact")
    for i in (0, 5, 2047):
        single.reset(seed=i)
        assert float(single.sim.state.x[0]) == float(v.x[i])


def test_no_goal_is_reached_on_the_first_step():
    env = OffroadVectorEnv(num_envs=4096, terrain=terrain.PerlinConfig(
        size=(20.0, 20.0), resolution=(0.1, 0.1)), num_maps=1)
    env.reset(seed=1)
    v = env.state_view()
    d = torch.hypot(v.goal_w[:, 0] - v.x, v.goal_w[:, 1] - v.y)  # from the spawn (rear axle)
    lo, hi = env.config.task.goal_distance
    assert float(d.min()) > lo - 1e-4 and float(d.max()) < hi + 1e-4
    _, _, _, _, info = env.step(torch.zeros(4096, 2))
    assert not bool((info["end_reason"] == EndReason.GOAL_REACHED).any())
