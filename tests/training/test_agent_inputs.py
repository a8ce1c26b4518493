"""An agent's inputs besides the observation (:mod:`train.common.inputs`): the actor's wide scan
and cost scan (``--actor-inputs wide_scan``, ``cost_scan``) and the asymmetric critic's privileged columns (``--critic-inputs
privileged``). Their columns read the true state and map (checked against a plane's closed form
and the curriculum's own record of families and levels), the actor never sees the critic's, and
a run trained with them benches and evaluates on the suite's own observation."""

import json

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import terrain
from offroad_env import OffroadVectorEnv, TaskConfig
from train import bench, ppo
from train.common.agent import Agent
from train.common.checkpoint import load_checkpoint
from train import evaluate
from train.common.inputs import (COST_SCAN, COST_WALL, CORRIDOR_POINTS, WIDE_SCAN, CostScan,
                                 CriticInputs, WideScan, WithInputs)

from test_suite_training import TINY, _write  # the same tiny suite


def _plane_env(slope=0.05, n=3):
    x = np.linspace(-20, 20, 81)
    h = slope * x[None, :] + 0.0 * x[:, None]
    return OffroadVectorEnv(num_envs=n, dynamics="unicycle", ground="four_wheel",
                            heightmap=terrain.HeightMap(h, 0.5, dtype=torch.float64),
                            max_episode_steps=40, autoreset_mode=AutoresetMode.SAME_STEP)


def test_the_corridor_reads_a_plane_and_the_state_columns_are_the_state():
    slope = 0.05
    env = _plane_env(slope)
    inputs = CriticInputs(env)
    names = [p[0] for p in inputs.layout]
    assert names == ["corridor", "wheel_soil", "time"]  # no level stack: no family or level
    K = env.vehicle.num_wheels
    assert inputs.dim == CORRIDOR_POINTS + 2 * K + 1
    env.reset(seed=0)
    for _ in range(7):
        env.step(torch.tensor([[0.6, 0.2]] * 3))
    cols = inputs()
    v = env.state_view()
    assert cols.shape == (3, inputs.dim) and cols.dtype == torch.float32
    # the plane z = slope x: the point at fraction f of the way to the goal lies
    # slope * f * (goal_x - base_x) above the ground under base_link, which is z_base - h
    bx, bz = v.base_position_w[:, 0], v.base_position_w[:, 2]
    gx = v.goal_w[:, 0].double()
    f = torch.arange(1, CORRIDOR_POINTS + 1, dtype=torch.float64) / CORRIDOR_POINTS
    want = slope * (bx[:, None] + f * (gx - bx)[:, None]) - bz[:, None]
    assert torch.allclose(cols[:, :CORRIDOR_POINTS].double(), want, atol=1e-5)
    assert bool((cols[:, CORRIDOR_POINTS - 1] != cols[:, 0]).any())  # the goal lies off-level
    # the wheels' soil state and the elapsed time, as the state holds them
    soil = cols[:, CORRIDOR_POINTS:CORRIDOR_POINTS + 2 * K]
    assert torch.equal(soil[:, :K], torch.zeros(3, K) if v.wheel_sinkage is None
                       else v.wheel_sinkage.float())
    assert torch.allclose(cols[:, -1], v.steps.float() / 40)


def test_the_family_and_level_columns_are_the_curriculums(tmp_path):
    from train.common.envconfig import env_kwargs
    from wrappers import TerrainCurriculum

    kw = env_kwargs("offroad_env/OffroadTraverse-v1", {"suite": _write(TINY, tmp_path / "t.json")})
    env = TerrainCurriculum(OffroadVectorEnv(num_envs=8, config=kw["config"]), 1)
    inputs = CriticInputs(env)
    assert [p[0] for p in inputs.layout][:2] == ["family", "level"]
    env.reset(seed=1)
    cols = inputs()
    F = len(TINY.families)
    assert torch.equal(cols[:, :F].argmax(1), env.families)
    assert torch.equal(cols[:, :F].sum(1), torch.ones(8))
    assert torch.allclose(cols[:, F], env.levels.float() / (TINY.num_levels - 1))


def test_the_wide_scan_reads_a_plane_on_its_grid():
    slope = 0.05
    env = _plane_env(slope)
    scan = WideScan(env)
    nx, ny = WIDE_SCAN.shape
    assert (nx, ny) == (13, 9) and scan.dim == 117
    env.reset(seed=2)
    for _ in range(5):
        env.step(torch.tensor([[0.5, -0.3]] * 3))
    cols = scan()
    v = env.state_view()
    # grid point (i, j) lies f_i ahead and l_j left of base_link, yaw-aligned; on z = slope x
    # its height relative to base_link is slope * x - z_base
    f = 2.0 + (torch.arange(nx, dtype=torch.float64) - 6) * 0.5
    lft = (torch.arange(ny, dtype=torch.float64) - 4) * 0.5
    F, Lf = (g.reshape(1, -1) for g in torch.meshgrid(f, lft, indexing="ij"))
    yaw = v.yaw.double()[:, None]
    x = v.base_position_w[:, :1] + torch.cos(yaw) * F - torch.sin(yaw) * Lf
    want = slope * x - v.base_position_w[:, 2:3]
    assert torch.allclose(cols.double(), want, atol=1e-5)
    assert float(want.max() - want.min()) > 0.2  # the plane shows across the grid


def test_the_cost_scan_reads_walls_open_ground_and_the_maps_edge_where_they_lie():
    # a flat 16 x 16 m map at 0.1 m with a 1-m ridge along x in [2.0, 2.1]: a wall
    x = np.arange(161) * 0.1 - 8.0
    h = np.zeros((161, 161))
    h[:, (x >= 1.99) & (x <= 2.11)] = 1.0
    env = OffroadVectorEnv(num_envs=16, dynamics="unicycle", ground="four_wheel",
                           heightmap=terrain.HeightMap(h, 0.1, dtype=torch.float64),
                           task=TaskConfig(goal_distance=(2.0, 5.0), spawn_margin=1.5),
                           max_episode_steps=40, autoreset_mode=AutoresetMode.SAME_STEP)
    scan = CostScan(env)
    nx, ny = COST_SCAN.shape
    assert (nx, ny) == (16, 11) and scan.dim == 176
    env.reset(seed=3)
    for _ in range(4):
        env.step(torch.tensor([[0.4, 0.3]] * 16))
    cols = scan().double()
    v = env.state_view()
    assert cols.shape == (16, 176)
    # grid point (i, j) lies f_i ahead and l_j left of base_link, yaw-aligned (closed form)
    f = 2.0 + (torch.arange(nx, dtype=torch.float64) - 7.5) * 0.4
    lft = (torch.arange(ny, dtype=torch.float64) - 5) * 0.4
    F, Lf = (g.reshape(1, -1) for g in torch.meshgrid(f, lft, indexing="ij"))
    yaw = v.yaw.double()[:, None]
    px = v.base_position_w[:, :1] + torch.cos(yaw) * F - torch.sin(yaw) * Lf
    py = v.base_position_w[:, 1:2] + torch.sin(yaw) * F + torch.cos(yaw) * Lf
    off = (px.abs() > 8.05) | (py.abs() > 8.05)
    on_ridge = ~off & ((px - 2.05).abs() < 0.1)
    # 2 m from any wall (the ridge, the map's edge): open flat ground, cost 1 per metre
    open_ = ((px - 2.05).abs() > 2.0) & (px.abs() < 6.0) & (py.abs() < 6.0)
    assert int(off.sum()) > 0 and int(on_ridge.sum()) > 0 and int(open_.sum()) > 20
    assert bool((cols[off] == COST_WALL).all()) and bool((cols[on_ridge] == COST_WALL).all())
    assert bool((cols[open_] == 0.0).all())
    assert bool(((cols >= 0) & (cols <= COST_WALL)).all())
    # within the body's reach of the ridge the wall-side factor (x1000) shows
    near = ~off & ((px - 2.05).abs() > 0.15) & ((px - 2.05).abs() < 0.4) & (py.abs() < 7.0)
    assert int(near.sum()) > 0 and bool((cols[near] >= 3.0).all())


def test_the_wrapper_appends_the_columns_and_a_finished_episode_keeps_its_last_ones():
    base = _plane_env(n=2)
    inputs = CriticInputs(base)
    env = WithInputs(base, [inputs])
    D = env.single_observation_space.shape[0]  # the actor's: the space is the env's
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, D + inputs.dim) and env.dim == inputs.dim
    assert torch.equal(obs[:, D:], inputs())
    for _ in range(40):
        before = inputs()
        obs, _, term, trunc, info = env.step(torch.tensor([[0.0, 0.0]] * 2))
    assert bool(trunc.all())  # the step limit, 40
    assert torch.equal(obs[:, D:], inputs())  # the new episodes'
    assert float(obs[0, -1]) == 0.0
    # the finished episodes' final columns are those of the state a step before their end
    assert torch.equal(info["final_obs"][:, D:], before)


def test_the_actor_never_reads_the_critics_columns():
    torch.manual_seed(0)
    D, P = 6, 4
    agent = Agent(D, 2, (8,), critic_dim=P)
    obs = torch.randn(5, D)
    full = torch.cat((obs, torch.randn(5, P)), 1)
    other = torch.cat((obs, torch.randn(5, P)), 1)
    agent.update_obs_stats(torch.randn(64, D + P) * 3 + 1)
    assert torch.equal(agent.mean(obs), agent.mean(full))
    assert torch.equal(agent.act(obs, deterministic=True), agent.act(other, deterministic=True))
    assert not torch.equal(agent.value(full), agent.value(other))  # the critic reads them
    with pytest.raises(ValueError, match="critic reads 10 columns"):
        agent.value(obs)
    with pytest.raises(ValueError, match="takes 6 or 10"):
        agent.mean(torch.randn(5, 7))
    with pytest.raises(ValueError, match="critic_dim"):
        Agent(D, 2, critic_dim=-1)
    # without privileged columns the agent is the one it was: the same parameters and buffers
    plain = Agent(D, 2, (8,))
    assert {k: v.shape for k, v in plain.state_dict().items()} == {
        "critic.0.weight": (8, D), "critic.0.bias": (8,), "critic.2.weight": (1, 8),
        "critic.2.bias": (1,), "actor_mean.0.weight": (8, D), "actor_mean.0.bias": (8,),
        "actor_mean.2.weight": (2, 8), "actor_mean.2.bias": (2,), "actor_log_std": (2,),
        "obs_mean": (D,), "obs_var": (D,), "obs_count": ()}


@pytest.mark.parametrize("inputs", [["--critic-inputs", "privileged"],
                                    ["--actor-inputs", "wide_scan"],
                                    ["--actor-inputs", "cost_scan"]])
def test_a_run_with_its_own_inputs_benches_and_evaluates_on_the_suites_observation(tmp_path,
                                                                                  inputs):
    path = _write(TINY, tmp_path / "tiny.json")
    out = tmp_path / "run"
    args = ["--suite", path, "--out", str(out), "--num-envs", "8", "--num-steps", "8",
            "--total-steps", "128", "--num-minibatches", "2", "--hidden", "8",
            "--no-compile-env", "--curriculum-init-level", "1", "--validate-every", "0",
            "--no-progress", "--no-tensorboard"] + inputs
    assert ppo.main(args) == 0
    plain = json.loads((out / "config.json").read_text())
    assert plain[inputs[0][2:].replace("-", "_")] == inputs[1]
    agent, state = load_checkpoint(out / "checkpoint.pt")
    F = len(TINY.families)
    suite_obs = sum(t[2] - t[1] for t in state["obs_layout"])
    if inputs[1] == "privileged":
        assert state["critic_dim"] == agent.critic_dim == F + 1 + CORRIDOR_POINTS + 2 * 4 + 1
        assert state["obs_dim"] == suite_obs
    else:
        assert state["critic_dim"] == 0 and agent.actor_inputs == inputs[1]
        assert state["obs_dim"] == suite_obs + {"wide_scan": 117, "cost_scan": 176}[inputs[1]]
    # the policy acts on the suite's observation, which has no privileged columns
    assert bench.main(["--suite", path, "--policy", f"ppo={out / 'checkpoint.pt'}",
                       "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    res = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert res["ppo"]["tasks"] == TINY.num_tasks
    assert evaluate.main([str(out / "checkpoint.pt"), "--episodes", "2", "--out",
                          str(tmp_path / "ev"), "--no-progress"]) == 0
    # a resumed run goes on with the same inputs, and refuses others
    more = [a if a != "128" else "256" for a in args]
    assert ppo.main(more + ["--resume", str(out / "checkpoint.pt")]) == 0
    assert ppo.main([a for a in more if a not in inputs]
                    + ["--resume", str(out / "checkpoint.pt")]) == 2
    with pytest.raises(ValueError, match="critic_inputs must be one of"):
        ppo.PPOConfig(critic_inputs="teacher")
    with pytest.raises(ValueError, match="actor_inputs must be one of"):
        ppo.PPOConfig(actor_inputs="lidar")
