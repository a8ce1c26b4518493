"""train/: PPO pieces against their definitions, a smoke run with resume, checkpoints that fail
clearly, evaluation of the baselines, and (slow) learning on OffroadNav-v1."""

import csv
import dataclasses
import json
import math

import pytest
import torch

from offroad_env import make_config
from train.common import envconfig
from train.ppo import trainer as ppo
from train import evaluate as ev
from train.common.logs import summary_json


def _smoke_cfg(out, **kw):
    base = dict(num_envs=16, num_steps=8, total_steps=16 * 8 * 3, num_minibatches=2,
                update_epochs=2, hidden=(16,), out=str(out), progress=False, seed=3)
    base.update(kw)
    return ppo.PPOConfig(**base)


# ---------------------------------------------------------------- the maths
def test_gae_matches_its_definition_and_closed_form():
    g = torch.Generator().manual_seed(0)
    T, N, gamma, lam = 7, 3, 0.9, 0.8
    r, v = torch.randn(T, N, generator=g), torch.randn(T, N, generator=g)
    d = (torch.rand(T, N, generator=g) < 0.25).float()
    nv = torch.randn(N, generator=g)
    adv = ppo.compute_gae(r, v, d, nv, gamma, lam)
    # the definition, term by term: A_t = sum_k (gamma lam)^k delta_{t+k} within the episode
    vals = torch.cat((v, nv[None]), 0)
    for n in range(N):
        for t in range(T):
            total, w = 0.0, 1.0
            for k in range(t, T):
                nonterm = 1.0 - d[k, n]
                delta = r[k, n] + gamma * vals[k + 1, n] * nonterm - v[k, n]
                total += w * delta
                if d[k, n]:
                    break
                w *= gamma * lam
            assert adv[t, n] == pytest.approx(float(total), abs=1e-5)
    # lam = 1, no ends: A_0 + V_0 = discounted return + gamma^T V_T
    adv1 = ppo.compute_gae(r, v, torch.zeros_like(r), nv, gamma, 1.0)
    disc = sum(gamma ** k * r[k] for k in range(T)) + gamma ** T * nv
    torch.testing.assert_close(adv1[0] + v[0], disc, atol=1e-5, rtol=0)


def test_truncation_is_bootstrapped_termination_is_not():
    r = torch.tensor([1.0, 1.0, 1.0, 1.0])
    term = torch.tensor([False, True, False, True])
    trunc = torch.tensor([False, False, True, True])
    v = torch.tensor([5.0, 5.0, 5.0, 5.0])
    out = ppo.bootstrap_truncated(r, term, trunc, v, 0.9)
    assert out.tolist() == [1.0, 1.0, 1.0 + 0.9 * 5.0, 1.0]


def test_running_obs_stats_equal_the_batch_moments():
    agent = ppo.Agent(3, 2, (8,))
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(100, 3, generator=g) * 2 + 1, torch.randn(50, 3, generator=g) - 3
    agent.update_obs_stats(a)
    agent.update_obs_stats(b)
    allx = torch.cat((a, b))
    torch.testing.assert_close(agent.obs_mean, allx.mean(0), atol=1e-4, rtol=0)
    torch.testing.assert_close(agent.obs_var, allx.var(0, unbiased=False), atol=1e-3, rtol=1e-3)


# ---------------------------------------------------------------- a smoke run
def test_smoke_run_logs_checkpoints_and_resumes(tmp_path):
    out = tmp_path / "run"
    s = ppo.train(_smoke_cfg(out))
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [1, 2, 3]
    for col in ("global_step", "return_mean", "length_mean", "success_rate", "tip_over_rate",
                "reward/progress", "reward/tilt", "policy_loss", "value_loss", "approx_kl"):
        assert col in rows[0], col
    assert int(rows[-1]["global_step"]) == 3 * 16 * 8 == s["global_step"]
    # the training rate is end to end (rollout and update), under the rollout's alone
    assert all(0 < float(r["steps_per_s"]) < float(r["rollout_steps_per_s"]) for r in rows)
    state = torch.load(out / "checkpoint.pt", weights_only=True)
    assert state["iteration"] == 3 and state["format"] == ppo.CHECKPOINT_FORMAT
    # nothing is overwritten without force
    with pytest.raises(FileExistsError, match="--force"):
        ppo.train(_smoke_cfg(out))
    assert ppo.main(["--out", str(out), "--num-envs", "16", "--num-steps", "8",
                     "--total-steps", "128", "--no-progress"]) == 2
    # resume: continues the iteration count and appends to the log
    before = dict(torch.load(out / "checkpoint.pt", weights_only=True)["model"])
    ppo.train(_smoke_cfg(out, total_steps=16 * 8 * 5), resume=str(out / "checkpoint.pt"))
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [1, 2, 3, 4, 5]
    after = torch.load(out / "checkpoint.pt", weights_only=True)
    assert after["global_step"] == 5 * 16 * 8
    assert not torch.equal(before["actor_log_std"], after["model"]["actor_log_std"]) or \
        not torch.equal(before["critic.0.weight"], after["model"]["critic.0.weight"])


def test_a_short_run_rounds_up_to_whole_iterations_and_prints_valid_json(tmp_path, capsys):
    """Issue 27, item 4: 200 steps of 16 x 8 is not whole iterations: it trains 256 and says
    so; with no finished episode the summary's statistics are null (not NaN) with a note."""
    import json

    def strict(const):
        raise ValueError(f"not JSON: {const}")

    assert ppo.main(["--out", str(tmp_path / "r"), "--num-envs", "16", "--num-steps", "8",
                     "--total-steps", "200", "--hidden", "16", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "total_steps 200 is not a whole number of iterations of 128 env steps" in err
    assert "training 256 (2 iterations)" in err
    summary = json.loads(out, parse_constant=strict)
    assert summary["global_step"] == 256 and summary["window_episodes"] == 0
    assert summary["return_mean"] is None and summary["success_rate"] is None
    assert summary["note"].startswith("no finished episodes yet")


def test_training_is_deterministic_per_seed(tmp_path):
    ppo.train(_smoke_cfg(tmp_path / "a"))
    ppo.train(_smoke_cfg(tmp_path / "b"))
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)["model"]
    for k in a:
        assert torch.equal(a[k], b[k]), k


# ---------------------------------------------------------------- bad input
class _Evil:
    pass


def test_bad_checkpoints_and_ids_are_clear_errors(tmp_path):
    with pytest.raises(ppo.CheckpointError, match="does not exist"):
        ppo.load_checkpoint(tmp_path / "none.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(ppo.CheckpointError, match="junk.pt is not an offroad-env checkpoint"):
        ppo.load_checkpoint(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")
    with pytest.raises(ppo.CheckpointError, match="not an offroad-env PPO checkpoint"):
        ppo.load_checkpoint(tmp_path / "other.pt")
    # an arbitrary pickled object: weights_only refuses it
    # (and torch's advice to load it with weights_only=False is never passed on: issue 27)
    torch.save({"format": ppo.CHECKPOINT_FORMAT, "x": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(ppo.CheckpointError, match="is not an offroad-env checkpoint") as err:
        ppo.load_checkpoint(tmp_path / "evil.pt")
    assert "weights_only" not in str(err.value) and "trust" not in str(err.value)
    # a truncated file
    ppo.train(_smoke_cfg(tmp_path / "run", total_steps=128))
    data = (tmp_path / "run" / "checkpoint.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(ppo.CheckpointError, match="cut.pt is not an offroad-env checkpoint"):
        ppo.load_checkpoint(tmp_path / "cut.pt")
    # a run folder instead of its checkpoint
    with pytest.raises(ppo.CheckpointError, match=r"is a directory, not a checkpoint file; the "
                                                  r"run's checkpoint is .*checkpoint.pt"):
        ppo.load_checkpoint(tmp_path / "run")
    # another observation layout: the velocity task has a command instead of the goal
    venv = ppo.make_vec_env("offroad_env/OffroadVelocity-v1", 2)
    with pytest.raises(ppo.CheckpointError, match="observation layout"):
        ppo.load_checkpoint(tmp_path / "run" / "checkpoint.pt", venv)
    with pytest.raises(ValueError, match="unknown env id"):
        ppo.make_vec_env("offroad_env/Nope-v0", 2)
    with pytest.raises(ValueError, match="num_envs"):
        ppo.PPOConfig(num_envs=0)
    assert ppo.main(["--env-id", "Nope-v9", "--out", str(tmp_path / "x")]) == 2
    assert ev.main([str(tmp_path / "junk.pt")]) == 2
    assert ev.main(["--policy", "heuristic", "--env-id", "offroad_env/OffroadVelocity-v1",
                    "--out", str(tmp_path / "e")]) == 2


# ---------------------------------------------------------------- evaluation
def test_heuristic_reaches_goals_on_easy_terrain_and_random_does_not():
    h = ev.evaluate("heuristic", "offroad_env/OffroadNav-v1", episodes=64)
    r = ev.evaluate("random", "offroad_env/OffroadNav-v1", episodes=64)
    assert h["success_rate"] > 0.9 and r["success_rate"] < 0.2
    assert sum(h["end_reasons"].values()) == 64
    # time to goal: at least the straight-line time at 1 m/s from >= 4 m - goal radius
    assert h["time_to_goal_s"] > 3.5
    assert 0 < h["mean_abs_roll_deg"] <= h["max_abs_roll_deg"] < 60


def test_evaluate_cli_writes_json_plots_and_frames(tmp_path, capsys):
    ppo.train(_smoke_cfg(tmp_path / "run", total_steps=128))
    ck = str(tmp_path / "run" / "checkpoint.pt")
    out = tmp_path / "ev"
    assert ev.main([ck, "--episodes", "8", "--baselines", "--out", str(out),
                    "--max-episode-steps", "40"]) == 0
    res = json.loads((out / "eval.json").read_text())
    assert set(res) == {"checkpoint", "random", "heuristic"}
    for r in res.values():
        assert r["episodes"] == 8 and r["terrain_seed"] == 1000
        assert len(r["per_episode"]["end_reason"]) == 8
    assert (out / "frames.png").stat().st_size > 1000
    assert (out / "eval_outcomes.png").exists()
    assert "heuristic" in capsys.readouterr().out
    assert ev.main([ck, "--episodes", "8", "--out", str(out)]) == 2  # exists, no --force
    assert ev.main([ck, "--episodes", "8", "--out", str(out), "--force",
                    "--max-episode-steps", "10"]) == 0


# ---------------------------------------------------------------- learning (slow)
@pytest.mark.slow
def test_ppo_learns_easy_navigation(tmp_path):
    s = ppo.train(ppo.PPOConfig(total_steps=1_000_000, out=str(tmp_path), progress=False))
    assert s["success_rate"] >= 0.8
    agent, _ = ppo.load_checkpoint(s["checkpoint"])
    res = ev.evaluate(lambda obs: agent.act(obs, deterministic=True), "offroad_env/OffroadNav-v1",
                      episodes=128)
    assert res["success_rate"] >= 0.8 and res["tip_over_rate"] < 0.05


@pytest.mark.slow
def test_compiled_env_training_matches_the_eager_run(tmp_path, monkeypatch):
    """``compile_env`` trains on the compiled step: the same rollouts up to rounding, so the
    first iteration's logged statistics agree with the eager run's."""
    made = []
    real = ppo.make_vec_env
    monkeypatch.setattr(ppo, "make_vec_env", lambda *a, **k: made.append(real(*a, **k))
                        or made[-1])
    ppo.train(_smoke_cfg(tmp_path / "e", total_steps=16 * 8))
    ppo.train(_smoke_cfg(tmp_path / "c", total_steps=16 * 8, compile_env=True))
    assert [m.unwrapped.sim.compiled for m in made] == [False, True]
    e = next(csv.DictReader(open(tmp_path / "e" / "progress.csv")))
    c = next(csv.DictReader(open(tmp_path / "c" / "progress.csv")))
    assert json.loads((tmp_path / "c" / "config.json").read_text())["compile_env"] is True
    for col in ("reward/progress", "reward/tilt", "value_loss"):
        assert float(c[col]) == pytest.approx(float(e[col]), rel=1e-3, abs=1e-4), col


def test_ppo_loss_is_the_clipped_surrogate_by_its_definition():
    """:func:`train.ppo.algorithm.ppo_loss` against the clipped-surrogate loss computed by hand,
    row by row, with the value loss and the statistics it reports."""
    from train.ppo.algorithm import STATS, ppo_loss
    torch.manual_seed(0)
    agent = ppo.Agent(3, 2, (8,))
    B = 6
    z, act = torch.randn(B, 3), torch.randn(B, 2)
    logp_old = torch.randn(B) * 0.3 - 2.0
    adv, ret, val = torch.randn(B), torch.randn(B), torch.randn(B)
    loss, stats = ppo_loss(agent, z, act, logp_old, adv, ret, val, 0.2, False, 0.5, 0.01)
    with torch.no_grad():
        mean = agent.actor_mean(z)
        std = agent.actor_log_std.exp()
        a_n = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg, kl, clipped = [], [], 0
        for i in range(B):  # the log-density of a diagonal Gaussian, written out
            lp = sum(-0.5 * ((act[i, j] - mean[i, j]) / std[j]) ** 2 - torch.log(std[j])
                     - 0.5 * math.log(2 * math.pi) for j in range(2))
            r = torch.exp(lp - logp_old[i])
            pg.append(max(-a_n[i] * r, -a_n[i] * min(max(r, 0.8), 1.2)))
            kl.append((r - 1) - torch.log(r))
            clipped += int(abs(r - 1) > 0.2)
        v = agent.critic(z).squeeze(-1)
        v_loss = 0.5 * ((v - ret) ** 2).mean()
        entropy = sum(0.5 + 0.5 * math.log(2 * math.pi) + torch.log(std[j]) for j in range(2))
        want = torch.stack(pg).mean() + 0.5 * v_loss - 0.01 * entropy
    assert float(loss.detach()) == pytest.approx(float(want), rel=1e-5, abs=1e-6)
    got = dict(zip(STATS, stats.tolist()))
    assert got["policy_loss"] == pytest.approx(float(torch.stack(pg).mean()), rel=1e-5, abs=1e-6)
    assert got["value_loss"] == pytest.approx(float(v_loss), rel=1e-5)
    assert got["entropy"] == pytest.approx(float(entropy), rel=1e-5)
    assert got["approx_kl"] == pytest.approx(float(torch.stack(kl).mean()), rel=1e-4, abs=1e-7)
    assert got["clip_frac"] == pytest.approx(clipped / B, rel=1e-6)
    assert loss.requires_grad and not stats.requires_grad


@pytest.mark.slow
def test_compiled_passes_equal_the_eager_ones_and_train(tmp_path):
    """``compile_policy``: the compiled rollout forward and minibatch loss (with its backward
    pass) give the eager values and gradients up to rounding, and a run trains with them."""
    from train.ppo.algorithm import Passes
    torch.manual_seed(0)
    agent = ppo.Agent(5, 2, (16, 16), action_map="twist")
    eager, comp = Passes.make(False), Passes.make(True)
    z = torch.randn(64, 5)
    for a, b in zip(eager.heads(agent, z), comp.heads(agent, z)):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    mb = (z, torch.randn(64, 2), torch.randn(64) - 2.0, torch.randn(64), torch.randn(64),
          torch.randn(64))
    grads = []
    for p in (eager, comp):
        agent.zero_grad(set_to_none=True)
        loss, stats = p.loss(agent, *mb, 0.2, True, 0.5, 0.0)
        loss.backward()
        grads.append((loss.detach(), stats, [q.grad.clone() for q in agent.parameters()]))
    (l0, s0, g0), (l1, s1, g1) = grads
    torch.testing.assert_close(l1, l0, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(s1, s0, rtol=1e-4, atol=1e-6)
    for x, y in zip(g0, g1):
        torch.testing.assert_close(y, x, rtol=1e-4, atol=1e-6)
    ppo.train(_smoke_cfg(tmp_path / "e", total_steps=16 * 8))
    ppo.train(_smoke_cfg(tmp_path / "c", total_steps=16 * 8, compile_policy=True))
    e = next(csv.DictReader(open(tmp_path / "e" / "progress.csv")))
    c = next(csv.DictReader(open(tmp_path / "c" / "progress.csv")))
    assert json.loads((tmp_path / "c" / "config.json").read_text())["compile_policy"] is True
    for col in ("reward/progress", "value_loss", "policy_loss"):
        assert float(c[col]) == pytest.approx(float(e[col]), rel=1e-3, abs=1e-4), col


# ---------------------------------------------------------------- honest training statistics
def test_episode_window_keeps_the_last_finished_episodes():
    w = ppo.EpisodeWindow(4)
    assert w.stats()["window_episodes"] == 0 and w.stats()["success_rate"] != w.stats()[
        "success_rate"]  # NaN while empty
    w.add([1.0, 2.0, 3.0], [10, 20, 30], [4, 1, 4])
    w.add([5.0, 7.0], [50, 70], [5, 3])  # the first episode falls out
    s = w.stats()
    assert s["window_episodes"] == 4 and s["return_mean"] == pytest.approx(4.25)
    assert s["success_rate"] == 0.25 and s["tip_over_rate"] == 0.25
    assert s["hole_rate"] == 0.25 and s["time_limit_rate"] == 0.25 and s["length_mean"] == 42.5


def test_training_spreads_episode_starts_and_logs_the_window(tmp_path):
    ppo.train(_smoke_cfg(tmp_path / "r", max_episode_steps=12))
    rows = list(csv.DictReader(open(tmp_path / "r" / "progress.csv")))
    # spread starts: the 16 first episodes end over the first 12 steps, not all at step 12;
    # they are left out of the statistics, which count only whole episodes
    assert 0 < int(rows[0]["episodes"]) < 16 and int(rows[0]["window_episodes"]) == 0
    assert 0 < int(rows[-1]["window_episodes"]) <= 100


@pytest.mark.slow
def test_training_success_agrees_with_an_evaluation_of_the_same_policy(tmp_path):
    s = ppo.train(ppo.PPOConfig(num_envs=64, num_steps=64, total_steps=64 * 64 * 20,
                                out=str(tmp_path), progress=False, seed=1))
    assert s["window_episodes"] == 100
    agent, _ = ppo.load_checkpoint(s["checkpoint"])
    res = ev.evaluate(lambda obs: agent.act(obs), "offroad_env/OffroadNav-v1", episodes=512,
                      terrain_seed=0)  # the training maps, the stochastic policy
    # the window (100 episodes, still learning) against 512 episodes: within 0.15 (~3 s.e.);
    # per-iteration rates said 0.98 against 0.51
    assert abs(s["success_rate"] - res["success_rate"]) < 0.15, (s["success_rate"],
                                                                 res["success_rate"])


def test_training_with_the_terrain_curriculum_logs_the_mean_level(tmp_path):
    out = tmp_path / "cur"
    s = ppo.train(_smoke_cfg(out, env_id="offroad_env/OffroadTraverse-v1", curriculum=True,
                             curriculum_init_level=2))
    rows = list(csv.DictReader(open(out / "progress.csv")))
    levels = [float(r["mean_level"]) for r in rows]
    assert len(levels) == 3 and all(0.0 <= v <= 2.0 for v in levels)
    # the summary says its rates are the curriculum's levels', not the task's mix
    js = summary_json({**s, "window_episodes": 5})
    assert js["mean_level"] == levels[-1] and "curriculum" in js["note"]
    # and which levels it played: OffroadTraverse-v1's every level rests somewhere
    fams = make_config("traverse").terrain.families
    assert js["curriculum_top_levels"] == {f: 9 for f in fams}
    with pytest.raises(ValueError, match="LevelsConfig"):
        ppo.train(_smoke_cfg(tmp_path / "nav", curriculum=True))


def test_the_environment_is_configured_from_the_command_line_and_read_back(tmp_path, capsys):
    # a map file, another vehicle and dynamics, a task option and a reward weight, all from
    # the training command; config.json records them; evaluate rebuilds that environment
    import numpy as np
    import terrain as terrain_pkg
    from train import evaluate
    from train.ppo import trainer as ppo_mod
    heights = terrain_pkg.generate(terrain_pkg.PerlinConfig(size=(30.0, 30.0),
                                                            resolution=(0.2, 0.2)), 1)
    np.save(tmp_path / "map.npy", heights)
    out = tmp_path / "run"
    argv = ["--out", str(out), "--num-envs", "8", "--num-steps", "8", "--total-steps", "64",
            "--num-minibatches", "2", "--hidden", "8", "--no-progress",
            "--terrain", str(tmp_path / "map.npy"), "--vehicle", "six_wheel_rover",
            "--dynamics", "skid_steer", "--task-goal-distance", "3", "6", "--reward-tilt",
            "-0.5", "--obs-terms", "roll_pitch", "goal", "stability"]
    assert ppo_mod.main(argv) == 0
    spec = json.loads((out / "config.json").read_text())["env"]
    assert spec["sim"] == {"vehicle": "six_wheel_rover", "dynamics": "skid_steer",
                           "obs_terms": ["roll_pitch", "goal", "stability"]}
    assert spec["task"] == {"goal_distance": [3.0, 6.0]} and spec["reward"] == {"tilt": -0.5}
    assert spec["terrain"] == "inputs/map.npy"  # the run's copy (issue 27, item 5)
    assert spec["sources"] == {"terrain": str(tmp_path / "map.npy")}
    kw = envconfig.env_kwargs("offroad_env/OffroadNav-v1", spec, out)
    assert kw["heightmap"].shape == heights.shape and kw["config"].task.weights.tilt == -0.5
    # a task or reward option keeps the rest of the id's config: the traverse task keeps its
    # terrain levels, height scan and tip rule (a bare TaskConfig would have made it "nav")
    trav = envconfig.env_kwargs("offroad_env/OffroadTraverse-v1",
                                {"reward": {"stability": -0.25, "time": -0.5}})
    ref = make_config("traverse")
    assert trav["config"] == dataclasses.replace(ref, task=dataclasses.replace(
        ref.task, weights=dataclasses.replace(ref.task.weights, stability=-0.25, time=-0.5)))
    # evaluate rebuilds the same env (the layout check would fail otherwise)
    assert evaluate.main([str(out / "checkpoint.pt"), "--episodes", "4",
                          "--max-episode-steps", "20", "--out", str(tmp_path / "ev")]) == 0
    # a generator and its options; bad options are one-line errors
    gen = envconfig.env_kwargs("offroad_env/OffroadNav-v1", envconfig.env_spec_from_args({
        "env.terrain": "perlin", "env.terrain_options": ["amplitude=1.5", "size=30,30"]}))
    assert gen["terrain"].amplitude == 1.5 and gen["terrain"].size == (30.0, 30.0)
    for bad in (["--terrain", "perlin", "--terrain-option", "nonsense=1"],
                ["--terrain", "perlin", "--terrain-option", "amplitude=big"],
                ["--terrain-option", "amplitude=1"], ["--terrain", "no/such/map.png"]):
        assert ppo_mod.main(argv[:13] + bad + ["--out", str(tmp_path / "bad"), "--force"]) == 2
    assert "error" in capsys.readouterr().err


def test_torchrun_trains_on_two_ranks_with_one_log_and_identical_weights(tmp_path):
    # two CPU processes (gloo): each steps its own 16 envs; the log counts both ranks' steps;
    # the run ends by checking that the ranks' parameters are identical (else it fails)
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    torchrun = Path(sys.executable).parent / "torchrun"
    out = tmp_path / "ddp"
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    r = subprocess.run([str(torchrun), "--standalone", "--nproc_per_node=2", "-m", "train.ppo",
                        "--out", str(out), "--num-envs", "16", "--num-steps", "8",
                        "--total-steps", str(2 * 16 * 8 * 3), "--num-minibatches", "2",
                        "--hidden", "16", "--no-progress", "--threads", "1",
                        "--max-episode-steps", "6"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert [int(x["global_step"]) for x in rows] == [256, 512, 768]  # total over both ranks
    # with 6-step episodes both ranks' 16 envs end every few steps: more than one rank's worth
    assert sum(int(x["episodes"]) for x in rows) > 16 * 24 // 6
    assert json.loads((out / "config.json").read_text())["world_size"] == 2
    assert r.stdout.count('"global_step"') == 1  # rank 0 alone reports
    agent, state = ppo.load_checkpoint(out / "checkpoint.pt")
    assert state["global_step"] == 768
    # only rank 0 wrote, and only into --out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ddp"]
    assert not any(p.name.startswith("rank") for p in out.iterdir())


def test_rank_seeds_never_collide():
    from train.common.distributed import rank_seed
    N, W = 64, 4
    streams = [set(range(rank_seed(7, r, N, W, it), rank_seed(7, r, N, W, it) + N))
               for r in range(W) for it in range(3)]
    assert sum(len(s) for s in streams) == len(set().union(*streams))  # all disjoint
    assert rank_seed(7, 0, N, W) == 7  # rank 0 of a fresh run: the single-process seeds


def _grad_rank(rank, world, port, data, out):
    import os
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    from train.common.agent import Agent
    from train.common.distributed import Dist
    d = Dist("cpu")
    torch.manual_seed(0)
    agent = Agent(5, 2, (8,), -0.5)
    x, a = data
    half = x.shape[0] // world
    xs, acts = x[rank * half:(rank + 1) * half], a[rank * half:(rank + 1) * half]
    loss = -agent.distribution(xs).log_prob(acts).sum(-1).mean() + agent.value(xs).square().mean()
    loss.backward()
    d.average_gradients(agent.parameters())
    mean, var, n = d.batch_moments(xs)
    if rank == 0:  # numpy arrays: pickled by value (tensors would share file descriptors
        # that vanish when this process exits)
        out.put(([p.grad.numpy().copy() for p in agent.parameters()], mean.numpy().copy(),
                 var.numpy().copy(), n))
    d.barrier()
    d.close()


def test_two_ranks_with_half_the_data_each_give_the_one_process_gradient_and_moments():
    # one update of 2 ranks x N samples == one process with the 2N samples (the mean loss)
    import socket
    import torch.multiprocessing as mp
    from train.common.agent import Agent
    g = torch.Generator().manual_seed(1)
    x, a = torch.randn(64, 5, generator=g), torch.randn(64, 2, generator=g)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_grad_rank, args=(r, 2, port, (x, a), q)) for r in range(2)]
    for p in procs:
        p.start()
    grads, mean, var, n = q.get(timeout=120)
    grads = [torch.from_numpy(g) for g in grads]
    mean, var = torch.from_numpy(mean), torch.from_numpy(var)
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    torch.manual_seed(0)
    agent = Agent(5, 2, (8,), -0.5)
    loss = -agent.distribution(x).log_prob(a).sum(-1).mean() + agent.value(x).square().mean()
    loss.backward()
    for g1, p in zip(grads, agent.parameters()):
        torch.testing.assert_close(g1, p.grad, atol=1e-6, rtol=1e-5)
    assert n == 64
    torch.testing.assert_close(mean, x.double().mean(0))
    torch.testing.assert_close(var, x.double().var(0, unbiased=False))


def test_config_json_records_the_resolved_environment(tmp_path):
    out = tmp_path / "r"
    ppo.train(_smoke_cfg(out, env={"sim": {"dynamics": "skid_steer"}}))
    cfg = json.loads((out / "config.json").read_text())
    res = cfg["env_resolved"]
    assert res["dynamics"] == "skid_steer" and res["vehicle"] == "husky"
    assert res["terrain"]["type"] == "PerlinConfig" and res["task"]["weights"]["tilt"] == -0.05


def test_config_json_says_a_map_file_replaced_the_generator(tmp_path):
    """Issue 27, item 3: after training on a map file, the record does not name the default
    generator (PerlinConfig) as the run's terrain."""
    import numpy as np

    import terrain
    path = tmp_path / "m.npy"
    terrain.save(terrain.HeightMap(torch.tensor(np.zeros((81, 81)), dtype=torch.float32),
                                   (0.25, 0.25)), path)
    out = tmp_path / "r"
    ppo.train(_smoke_cfg(out, env={"terrain": str(path)}))
    res = json.loads((out / "config.json").read_text())["env_resolved"]
    assert res["heightmap"].startswith("HeightMap(maps=1, samples=(81, 81)")
    assert res["terrain"] == "not used: the run's map is 'heightmap'"
    assert "PerlinConfig" not in json.dumps(res)


def test_a_run_folder_is_self_contained(tmp_path, monkeypatch):
    """Issue 27, item 5: a run trained with a URDF and a map file given by relative paths
    evaluates and resumes from another folder, after the inputs are gone: the run folder holds
    copies (inputs/), and config.json records them and their resolved sources."""
    import shutil

    import numpy as np

    import terrain
    from offroad_env import data_file
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(data_file("husky.urdf"), work / "robot.urdf")
    terrain.save(terrain.HeightMap(np.zeros((81, 81)), (0.25, 0.25)), work / "m.npy")
    monkeypatch.chdir(work)
    assert ppo.main(["--out", "../run", "--num-envs", "8", "--num-steps", "8",
                     "--total-steps", "64", "--num-minibatches", "2", "--update-epochs", "1",
                     "--hidden", "16", "--no-progress", "--vehicle", "robot.urdf",
                     "--terrain", "m.npy"]) == 0
    run = tmp_path / "run"
    env = json.loads((run / "config.json").read_text())["env"]
    assert env["sim"]["vehicle"] == "inputs/robot.urdf" and env["terrain"] == "inputs/m.npy"
    assert env["sources"] == {"vehicle": str(work / "robot.urdf"), "terrain": str(work / "m.npy")}
    assert sorted(p.name for p in (run / "inputs").iterdir()) == ["m.json", "m.npy", "robot.urdf"]
    shutil.rmtree(work)  # the inputs are gone; the run folder is moved
    shutil.move(str(run), str(tmp_path / "moved"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ck = str(tmp_path / "moved" / "checkpoint.pt")
    assert ev.main([ck, "--episodes", "2", "--out", "ev", "--max-episode-steps", "5"]) == 0
    assert ppo.main(["--resume", ck, "--out", "../resumed", "--num-envs", "8", "--num-steps",
                     "8", "--total-steps", "128", "--num-minibatches", "2", "--update-epochs",
                     "1", "--hidden", "16", "--no-progress"]) == 0
    assert (tmp_path / "resumed" / "inputs" / "robot.urdf").is_file()
    # without its copies and sources, the error names both
    shutil.rmtree(tmp_path / "moved" / "inputs")
    with pytest.raises(FileNotFoundError, match="neither its copy .*robot.urdf nor its source"):
        envconfig.env_kwargs("offroad_env/OffroadNav-v1",
                             json.loads((tmp_path / "moved" / "config.json").read_text())["env"],
                             tmp_path / "moved")


@pytest.mark.integration  # tensorboard is in the integration extra
def test_tensorboard_tags_are_the_names_sb3_and_cleanrl_users_look_for(tmp_path):
    """Issue 27, item 8: rollout/ep_rew_mean, time/fps, losses/..., charts/learning_rate."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from train.common.logs import tb_tag
    assert tb_tag("return_mean") == "rollout/ep_rew_mean"
    assert tb_tag("tip_over_rate") == "rollout/tip_over_rate"
    assert tb_tag("reward/progress") == "reward/progress"
    out = tmp_path / "r"
    ppo.train(_smoke_cfg(out, tensorboard=True))
    acc = EventAccumulator(str(out / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"losses/value_loss", "losses/policy_loss", "losses/approx_kl", "time/fps",
            "charts/learning_rate"} <= tags, tags
    assert not tags & {"value_loss", "return_mean", "steps_per_s", "lr"}


def test_training_prints_a_line_every_few_iterations(tmp_path, capsys):
    """Issue 27, item 9: one line per ``print_every`` iterations on stderr (stdout keeps the
    JSON summary): steps, steps/s, and success and return over the window with its size."""
    assert ppo.main(["--out", str(tmp_path / "r"), "--num-envs", "16", "--num-steps", "32",
                     "--total-steps", str(16 * 32 * 6), "--num-minibatches", "2",
                     "--update-epochs", "1", "--hidden", "16", "--no-progress",
                     "--print-every", "2", "--max-episode-steps", "20"]) == 0
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.startswith("iter ")]
    assert [ln.split()[1] for ln in lines] == ["2/6", "4/6", "6/6"]
    rows = list(csv.DictReader(open(tmp_path / "r" / "progress.csv")))
    last = rows[-1]
    assert f"{int(last['global_step']):,} steps" in lines[-1]
    assert (f"success {float(last['success_rate']):.2f}  return "
            f"{float(last['return_mean']):.2f}  (window: {last['window_episodes']} episodes)"
            ) in lines[-1]
    json.loads(cap.out)  # the summary alone on stdout
    with pytest.raises(ValueError, match="print_every must be an int >= 0"):
        _smoke_cfg(tmp_path / "x", print_every=-1)


def test_a_compiled_run_says_first_that_it_compiles_and_where_its_cache_lies(monkeypatch):
    from train.common.logs import compile_notice
    assert compile_notice(False, False) is None
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/some/where/cache")
    line = compile_notice(True, False)
    assert "the env's step" in line and "agent" not in line and "/some/where/cache" in line
    assert "the agent's passes" in compile_notice(False, True)



def test_a_resumed_log_widens_its_header_to_new_columns_and_keeps_every_row(tmp_path):
    """A run resumed by a newer version that logs more columns (an end reason added, say):
    the CSV's header grows, the old rows keep their values (blank in the new column)."""
    import csv

    from train.common.logs import RunLog

    log = RunLog(tmp_path, append=False, tensorboard=False)
    log.write({"iteration": 1, "global_step": 10, "stuck_rate": 0.5})
    log.write({"iteration": 2, "global_step": 20, "stuck_rate": 0.25})
    again = RunLog(tmp_path, append=True, tensorboard=False)
    again.write({"iteration": 3, "global_step": 30, "stuck_rate": 0.0, "diverged_rate": 0.1})
    again.write({"iteration": 4, "global_step": 40, "stuck_rate": 0.0, "diverged_rate": 0.0})
    with open(tmp_path / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["iteration", "global_step", "stuck_rate", "diverged_rate"]
    assert [r["iteration"] for r in rows] == ["1", "2", "3", "4"]
    assert [r["diverged_rate"] for r in rows] == ["", "", "0.1", "0.0"]
    assert rows[1]["stuck_rate"] == "0.25"


def test_a_late_compile_switches_at_its_iteration_and_changes_nothing_else(tmp_path, monkeypatch):
    """``compile_after``: eager iterations, then the compiled step from the fixed iteration on.
    With the compile made the identity (the switch alone), the run equals an eager run bit for
    bit; the switch happens at the iteration asked, whatever the machine's speed."""
    import offroad_env.sim.simulator as simulator

    monkeypatch.setattr(simulator, "compile_fn", lambda fn, **kw: fn)
    seen = []
    real = ppo.switch_compiled

    def spy(env, bar):
        seen.append((len(list(csv.DictReader(open(tmp_path / "late" / "progress.csv")))),
                     env.unwrapped.sim.compiled))
        real(env, bar)
        seen.append(env.unwrapped.sim.compiled)
    monkeypatch.setattr(ppo, "switch_compiled", spy)
    ppo.train(_smoke_cfg(tmp_path / "late", total_steps=16 * 8 * 3, compile_env=True,
                         compile_after=2))
    ppo.train(_smoke_cfg(tmp_path / "eager", total_steps=16 * 8 * 3))
    assert seen == [(2, False), True]  # after two iterations, before the third
    a = torch.load(tmp_path / "late" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "eager" / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_compile_after_is_checked():
    with pytest.raises(ValueError, match="compile_after"):
        ppo.PPOConfig(compile_after=-1)
