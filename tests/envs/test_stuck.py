"""The ``stuck`` end (TaskConfig.stuck_time): no progress toward the goal for T seconds is a
truncation with its own reason, in both faces, and counted by the curriculum and the suite."""

import dataclasses

import numpy as np
import pytest
import torch

import offroad_env
from offroad_env import EndReason, OffroadEnv, OffroadVectorEnv
from offroad_env.sim.config import TaskConfig, make_config
from wrappers.curriculum import next_levels


def _venv(n=3, stuck_time=1.0, **kw):
    cfg = make_config("nav")
    cfg = dataclasses.replace(cfg, task=dataclasses.replace(cfg.task, stuck_time=stuck_time,
                                                            **kw))
    return OffroadVectorEnv(num_envs=n, config=cfg, dtype=torch.float64)


def test_an_idle_vehicle_is_stuck_after_stuck_time_and_truncated_not_terminated():
    env = _venv(stuck_time=1.0)
    env.reset(seed=0)
    dt = env.unwrapped.sim.cfg.dt
    steps = int(round(1.0 / dt))
    for k in range(steps):
        _, _, term, trunc, info = env.step(torch.zeros(3, 2))
        if k < steps - 1:
            assert not bool((term | trunc).any())
    assert bool(trunc.all()) and not bool(term.any())
    assert info["end_reason"].tolist() == [int(EndReason.STUCK)] * 3
    assert EndReason.STUCK.label == "stuck"


def test_the_stuck_reward_term_is_one_on_the_stuck_step_only_and_weighted():
    from offroad_env.task.rewards import RewardWeights
    cfg = make_config("nav")
    w = dataclasses.replace(cfg.task.weights, stuck=-4.0)
    cfg = dataclasses.replace(cfg, task=dataclasses.replace(cfg.task, stuck_time=0.5, weights=w))
    env = OffroadVectorEnv(num_envs=2, config=cfg, dtype=torch.float64)
    env.reset(seed=1)
    steps = int(round(0.5 / env.unwrapped.sim.cfg.dt))
    ref = OffroadVectorEnv(num_envs=2, config=dataclasses.replace(cfg, task=dataclasses.replace(
        cfg.task, weights=dataclasses.replace(w, stuck=0.0))), dtype=torch.float64)
    ref.reset(seed=1)
    for k in range(steps):
        _, r, _, trunc, info = env.step(torch.zeros(2, 2))
        _, r0, _, _, _ = ref.step(torch.zeros(2, 2))
        expect = 1.0 if k == steps - 1 else 0.0
        assert info["reward/stuck"].tolist() == [expect, expect]
        torch.testing.assert_close(r, r0 - 4.0 * expect)
    assert bool(trunc.all()) and RewardWeights().stuck == 0.0


def test_driving_toward_the_goal_is_progress_and_circling_is_not():
    env = _venv(n=1, stuck_time=2.0, stuck_progress=0.1)
    env.reset(seed=4)
    sim = env.unwrapped.sim
    st = sim.state
    # steer toward the goal: the distance falls, the stall counter keeps resetting
    for _ in range(30):
        v = env.unwrapped.state_view()
        goal = st.goal_w[0] - torch.stack((v.x[0], v.y[0])).to(st.goal_w.dtype)
        bearing = torch.atan2(goal[1], goal[0]) - v.yaw[0]
        turn = float(torch.atan2(torch.sin(bearing), torch.cos(bearing)))
        _, _, term, trunc, info = env.step(torch.tensor([[0.6 - 0.5 * turn, 0.6 + 0.5 * turn]]))
        assert not bool(trunc.any())
    assert int(st.stall_steps[0]) < 5
    # turning on the spot makes no progress: stuck 2 s later
    steps = 0
    while True:
        _, _, term, trunc, info = env.step(torch.tensor([[-0.5, 0.5]]))
        steps += 1
        if bool(term | trunc):
            break
    assert int(info["end_reason"][0]) == EndReason.STUCK and bool(trunc[0])
    assert abs(steps * sim.cfg.dt - 2.0) <= 5 * sim.cfg.dt  # the last progress came within 5 steps


def test_the_single_env_reports_stuck_as_a_truncation():
    cfg = make_config("nav")
    cfg = dataclasses.replace(cfg, task=dataclasses.replace(cfg.task, stuck_time=0.5))
    env = OffroadEnv(config=cfg)
    env.reset(seed=0)
    for _ in range(200):
        _, _, term, trunc, info = env.step(np.zeros(2, dtype=np.float32))
        if term or trunc:
            break
    assert trunc and not term and info["end_reason"] == EndReason.STUCK


def test_stuck_is_checked_and_counted():
    with pytest.raises(ValueError, match="stuck_time must be a number > 0"):
        TaskConfig(stuck_time=0.0)
    with pytest.raises(ValueError, match="stuck_time needs task kind 'nav'"):
        TaskConfig(kind="velocity", stuck_time=5.0)
    with pytest.raises(ValueError, match="stuck_progress must be a finite number >= 0"):
        TaskConfig(stuck_progress=float("nan"))
    # the curriculum takes a stuck episode down a level, as a failure
    levels = torch.tensor([3, 3])
    reason = torch.tensor([int(EndReason.STUCK), int(EndReason.GOAL_REACHED)])
    assert next_levels(levels, reason, torch.zeros(2), 10, torch.zeros(2)).tolist() == [2, 4]
    # off by default: the built-in tasks never end stuck
    assert TaskConfig().stuck_time is None and offroad_env.make_config("nav").task.stuck_time is None
