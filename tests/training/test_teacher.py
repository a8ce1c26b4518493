"""The privileged teacher (``--teacher path``, :mod:`train.ppo.teacher`): its labels are the map
planner's turn in the actor's own action space (nothing to correct on open ground, a turn round a
block the straight line drives into), the update regresses the actor's mean turn on them, and a
run with it trains, logs the teacher's weight and falls back to plain PPO when the weight is 0.
The rollout teacher (``--teacher rollout``): its labels are the planner's own wheel speeds in
the actor's space, and all its rows are planned together."""

import csv
import json
import math

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import terrain
from offroad_env import OffroadVectorEnv
from train import ppo
from train.common.agent import Agent
from train.ppo.algorithm import RolloutBuffer, update
from train.ppo.teacher import PathTeacher, teacher_loss, teacher_weight

from test_suite_training import TINY, _write  # the same tiny suite


def _env(block: bool, n: int = 1):
    """A flat 24 x 24 m world at 0.1 m, with a 1-m-high block (x in [2.5, 3.5], y in [-1.2,
    0.5]) where ``block``; the skid-steered Husky's kinematic model."""
    x = np.arange(-12.0, 12.0 + 1e-9, 0.1)
    h = np.zeros((x.size, x.size))
    if block:
        xx, yy = np.meshgrid(x, x)  # rows are y
        h[(xx >= 2.5) & (xx <= 3.5) & (yy >= -1.2) & (yy <= 0.5)] = 1.0
    env = OffroadVectorEnv(num_envs=n, vehicle="husky", dynamics="skid_steer",
                           ground="four_wheel",
                           heightmap=terrain.HeightMap(h, 0.1, origin=(-12.0, -12.0),
                                                       dtype=torch.float64),
                           max_episode_steps=100, autoreset_mode=AutoresetMode.SAME_STEP)
    return env


def _reset(env, goals):
    n = len(goals)
    obs, _ = env.reset(seed=0, options={
        "start_pose": torch.zeros(n, 3, dtype=torch.float64),
        "goal": torch.tensor(goals, dtype=torch.float64)})
    return obs


def _agent(env, action_map):
    from train.common.agent import goal_column
    from train.common.checkpoint import obs_layout
    D = env.single_observation_space.shape[0]
    goal_col = goal_column(obs_layout(env)) if action_map == "residual" else None
    return Agent(D, 2, (8,), action_map=action_map, goal_col=goal_col)


def test_on_open_ground_the_teacher_turns_as_the_straight_line():
    """With nothing in the way the teacher steers at the goal: the twist label is the straight
    line's turn ``clip(2 * bearing)``, and the residual label, the correction, is 0 (to
    float32's rounding of the observation's goal)."""
    env = _env(block=False, n=3)
    goals = [[8.0, 0.0], [8.0, 8.0 * math.tan(0.2)], [8.0, -8.0 * math.tan(0.3)]]
    obs = _reset(env, goals)
    v = env.state_view()  # the bearing from base_link, where the observation's goal is
    rel = v.goal_w - v.base_position_w[:, :2]
    bearing = torch.atan2(rel[:, 1], rel[:, 0]).float()
    assert torch.allclose(bearing, torch.tensor([0.0, 0.2, -0.3]), atol=0.05)
    twist = PathTeacher(env, _agent(env, "twist"), rows=3).labels(obs)
    assert torch.allclose(twist, (2 * bearing).clamp(-1, 1), atol=1e-4)
    resid = PathTeacher(env, _agent(env, "residual"), rows=3).labels(obs)
    assert resid.abs().max() < 1e-4


def test_the_teacher_turns_round_a_block_the_straight_line_drives_into():
    """A 1-m wall across the straight line, its short side to the left: the straight line
    says go straight (turn 0), the teacher says turn left (a correction > 0.3), and on open
    ground beside it the same teacher says nothing."""
    env = _env(block=True, n=2)
    obs = _reset(env, [[8.0, 0.0], [-8.0, 6.0]])  # row 1: away from the block
    teacher = PathTeacher(env, _agent(env, "residual"), rows=2)
    lab = teacher.labels(obs)
    assert lab[0] > 0.3
    assert lab[1].abs() < 1e-4
    assert teacher.policy.num_fields == 2
    teacher.max_fields = 1  # more kept than allowed: dropped and computed again, the same
    assert torch.equal(teacher.labels(obs), lab) and teacher.policy.num_fields == 2


def test_the_update_regresses_the_actors_turn_on_the_labels():
    """An update with a large teacher weight on a batch whose labelled rows all say 0.7 brings
    the actor's mean turn there (the regression works on the rows it names, whatever their
    place in the batch), and the loss it logs falls."""
    torch.manual_seed(0)
    T, N, D = 4, 16, 6
    agent = Agent(D, 2, (16,), action_map="twist")
    opt = torch.optim.Adam(agent.parameters(), lr=1e-2)
    rows = torch.tensor([1, 5, 9, 13])
    buf = RolloutBuffer.zeros(T, N, D, 2, "cpu", teacher_rows=4)
    buf.obs.normal_()
    buf.teach.fill_(0.7)
    cfg = ppo.PPOConfig(num_envs=N, num_steps=T, num_minibatches=2, update_epochs=4)
    losses = []
    for _ in range(15):
        with torch.no_grad():
            d = agent.distribution(buf.obs.reshape(-1, D))
            buf.act.copy_(d.sample().reshape(T, N, 2))
            buf.logp.copy_(d.log_prob(buf.act.reshape(-1, 2)).sum(-1).reshape(T, N))
        stats, n = update(agent, opt, buf, buf.obs[-1], cfg, _NoDist(), teacher_rows=rows,
                          teacher_weight=50.0)
        losses.append(stats["teacher_loss"] / n)
    z = agent.normalize(buf.obs[:, rows].reshape(-1, D))
    assert losses[-1] < 0.05 * losses[0]
    assert torch.allclose(agent.mean(z, normalized=True)[:, 1], torch.full((T * 4,), 0.7),
                          atol=0.1)
    with torch.no_grad():
        assert float(teacher_loss(agent, z, torch.full((T * 4,), 0.7))) < 0.01
    # without a weight the update is plain PPO's: no teacher statistic
    stats, _ = update(agent, opt, buf, buf.obs[-1], cfg, _NoDist(), teacher_rows=rows)
    assert "teacher_loss" not in stats


class _NoDist:
    """One process: the :class:`train.common.distributed.Dist` calls the update makes."""

    def average_gradients(self, params):
        pass

    def mean(self, x):
        return x

    def batch_moments(self, x):
        x = x.reshape(-1, x.shape[-1])
        return x.mean(0), x.var(0, unbiased=False), x.shape[0]


def test_the_weight_falls_linearly_to_zero_and_options_are_checked():
    assert teacher_weight(2.0, 10, 0) == 2.0 and teacher_weight(2.0, 10, 5) == 1.0
    assert teacher_weight(2.0, 10, 10) == 0.0 == teacher_weight(2.0, 10, 30)
    with pytest.raises(ValueError, match="teacher must be one of"):
        ppo.PPOConfig(teacher="reference")
    with pytest.raises(ValueError, match="teacher_rows must be an int >= 1"):
        ppo.PPOConfig(teacher="path", teacher_rows=0)
    with pytest.raises(ValueError, match="teacher_coef"):
        ppo.PPOConfig(teacher="path", teacher_coef=-1.0)
    with pytest.raises(ValueError, match="path option"):
        ppo.PPOConfig(teacher="path", teacher_options="cell=-1")
    env = _env(block=False, n=2)
    with pytest.raises(ValueError, match="'twist' or 'residual' action map"):
        PathTeacher(env, _agent(env, "direct"), rows=2)
    with pytest.raises(ValueError, match=r"teacher_rows must be an int >= 1, got 0"):
        PathTeacher(env, _agent(env, "twist"), rows=0)
    # more rows than envs label every env (the suite preset's 256 on a small run)
    assert PathTeacher(env, _agent(env, "twist"), rows=3).rows.tolist() == [0, 1]


@pytest.mark.parametrize("teacher, extra", [
    ("path", ["--actor-inputs", "wide_scan"]), ("rollout", ["--teacher-options", "H=10"])])
def test_a_run_with_the_teacher_trains_and_logs_its_weight(tmp_path, teacher, extra):
    path = _write(TINY, tmp_path / "tiny.json")
    out = tmp_path / "run"
    args = ["--suite", path, "--out", str(out), "--num-envs", "8", "--num-steps", "8",
            "--total-steps", "256", "--num-minibatches", "2", "--hidden", "8",
            "--no-compile-env", "--curriculum-init-level", "1", "--validate-every", "0",
            "--no-progress", "--no-tensorboard", "--teacher", teacher, "--teacher-rows", "3",
            "--teacher-steps", "128", *extra]
    assert ppo.main(args) == 0
    plain = json.loads((out / "config.json").read_text())
    assert plain["teacher"] == teacher and plain["teacher_rows"] == 3
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert [float(r["teacher_weight"]) for r in rows] == [1.0, 0.5, 0.0, 0.0]
    loss = [r["teacher_loss"] for r in rows]
    assert all(float(x) >= 0 for x in loss[:2]) and loss[2:] == ["", ""]  # not computed at 0


def test_the_traversability_read_every_kth_sample_keeps_a_planes_cost():
    """``PathConfig.sample``: on a plane of slope 0.1 at 0.025 m, the cost read every 4th sample
    (``sample=0.1``) is the full map's inside the map (a plane's slope is the same at any
    spacing: ``1 + slope_weight (atan 0.1 / theta_max)^2`` per metre), on a grid of 0.1-m cells
    (4 x round(0.15 / 0.1) samples, the ratio 1.4999...) where the full map's are 0.15 m (6)."""
    from train.planners.path import PathConfig, traversability
    env = _env(block=False)
    x = np.arange(0.0, 8.0 + 1e-9, 0.025)
    maps = terrain.HeightMap(0.1 * x[None, :] + 0.0 * x[:, None], 0.025, dtype=torch.float64)
    full, s_full = traversability(maps, env.vehicle, 0.8, cfg=PathConfig())
    coarse, s_coarse = traversability(maps, env.vehicle, 0.8, cfg=PathConfig(sample=0.1))
    assert (s_full, s_coarse) == (6, 4)
    assert coarse.shape[-1] == math.ceil(x.size / 4)
    inner_full = full[0, 8:-8, 8:-8]
    inner_coarse = coarse[0, 12:-12, 12:-12]
    assert torch.allclose(inner_full, inner_full[0, 0]) and torch.allclose(inner_coarse,
                                                                          inner_full[0, 0])
    assert 1.0 < float(inner_full[0, 0]) < 3.0


def test_the_rollout_teachers_labels_are_the_planners_wheel_speeds_in_the_actors_space():
    """``--teacher rollout``: on open ground the planner plays the straight line, so the
    residual label (the correction) is 0; before a wall across the straight line it plays
    another candidate, and the label corrects the turn. Either way the actor's map of the label
    (``Agent.to_env``) gives back the planner's own wheel speeds, and all rows are planned at
    once, again every ``replan`` labels."""
    from train.ppo.teacher import RolloutTeacher
    for block, goals in ((False, [[8.0, 0.0], [8.0, 2.0]]), (True, [[8.0, 0.0], [-8.0, 6.0]])):
        env = _env(block=block, n=2)
        obs = _reset(env, goals)
        for action_map in ("residual", "twist"):
            agent = _agent(env, action_map)
            teacher = RolloutTeacher(env, agent, rows=2, options="R=5,H=40,library=straight")
            lab = teacher.labels(obs)
            assert lab.shape == (2, 2) and teacher.planner.clock == 1
            wheels = teacher.planner(obs)  # the same state: the candidates it chose
            if action_map == "residual":
                assert torch.allclose(agent.to_env(lab, obs), wheels, atol=1e-5)
            else:  # the twist of the wheels, inside 0.95 of the tanh bound
                l, r = wheels.unbind(-1)
                twist = torch.stack(((l + r) / 2, (r - l) / 2), -1).clamp(-0.95, 0.95)
                assert torch.allclose(lab, twist, atol=1e-6)
            if action_map == "residual":
                if block:  # the straight line drives into the wall: a turn corrects it
                    assert lab[0, 1].abs() > 0.2
                else:
                    assert lab.abs().max() < 1e-4
    # the clock: the rows are planned together at labels 0, R, 2R, ...
    planned = []
    plan = teacher.planner._plan
    teacher.planner._plan = lambda rows, steps: (planned.append(rows.tolist()), plan(rows, steps))
    teacher.planner.clock = 0
    for _ in range(11):
        teacher.labels(obs)
    assert planned == [[0, 1]] * 3


def test_the_loss_of_two_column_labels_is_both_columns_squared_error():
    agent = Agent(4, 2, (8,), action_map="twist")
    z = torch.randn(5, 4)
    y = torch.rand(5, 2) - 0.5
    with torch.no_grad():
        mu = agent.mean(z, normalized=True)
        assert torch.allclose(teacher_loss(agent, z, y), ((mu - y) ** 2).sum(1).mean())
        assert torch.allclose(teacher_loss(agent, z, y[:, 1]), ((mu[:, 1] - y[:, 1]) ** 2).mean())
