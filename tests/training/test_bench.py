"""OffroadBench: a tiny suite runs in the default tests, bit for bit twice; the CLI."""

import json
from dataclasses import replace

import pytest

from train import bench
from train.bench import SuiteSpec, load_suite, run_suite, suite_tasks
from train.common.suite import suite_env

TINY = SuiteSpec(name="tiny", families=("slopes", "ditches"), num_levels=2, worlds=1, pairs=3,
                 size=(16.0, 16.0), resolution=(0.2, 0.2), goal_distance=(5.0, 7.0),
                 time_limit_s=8.0)


def test_the_shipped_suite_is_the_issues_thousand_tasks():
    spec = load_suite("offroad-bench-v0")
    assert spec.num_tasks == 1000 and spec.version == 0
    assert spec.families == ("slopes", "ditches", "boulders", "steps", "rough")
    with pytest.raises(ValueError, match="unknown suite"):
        load_suite("no-such-suite")
    with pytest.raises(ValueError, match="pairs must be an int >= 1, got 0"):
        replace(spec, pairs=0)
    with pytest.raises(ValueError, match="goal_distance"):
        replace(spec, goal_distance=(12.0, 8.0))


def test_tasks_are_deterministic_in_the_map_and_facing_their_goals():
    env = suite_env(TINY, 1)
    maps = env.unwrapped.terrain
    t1, t2 = suite_tasks(TINY, maps), suite_tasks(TINY, maps)
    assert all((t1[k] == t2[k]).all() for k in t1)
    assert len(t1["map_index"]) == TINY.num_tasks == 12
    x0, x1, y0, y1 = maps.bounds
    for (sx, sy, yaw), (gx, gy) in zip(t1["start"], t1["goal"]):
        d = ((gx - sx) ** 2 + (gy - sy) ** 2) ** 0.5
        assert 5.0 <= d <= 7.0 and x0 + 2 <= gx <= x1 - 2 and y0 + 2 <= gy <= y1 - 2
    other = suite_tasks(replace(TINY, pair_seed=2), maps)
    assert not (other["start"] == t1["start"]).all()


def test_a_tiny_suite_gives_identical_json_twice_and_sound_metrics():
    a = run_suite(TINY, "heuristic")
    b = run_suite(TINY, "heuristic")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    o = a["overall"]
    assert o["episodes"] == 12
    rates = [o[f"{k}_rate"] for k in ("success", "tip_over", "hole", "off_map", "time_limit")]
    assert sum(rates) == pytest.approx(1.0)
    lo, hi = o["success_ci95"]
    assert lo <= o["success_rate"] <= hi
    assert a["by_family"]["slopes"]["0"]["episodes"] == 3
    assert o["max_abs_roll_deg"] >= o["mean_abs_roll_deg"] >= 0
    assert o["energy_j"] > 0  # climbing and accelerating a 56.6 kg body takes work
    # level 0 of these families is gentle: the heuristic gets there
    assert a["by_family"]["slopes"]["0"]["success_rate"] == 1.0


def test_the_cli_writes_json_table_and_plot_and_refuses_to_overwrite(tmp_path, capsys):
    spec = tmp_path / "tiny.json"
    d = {k: list(v) if isinstance(v, tuple) else v for k, v in TINY.__dict__.items()}
    spec.write_text(json.dumps(d))
    out = tmp_path / "out"
    assert bench.main(["--suite", str(spec), "--policy", "random", "careful", "--out",
                       str(out)]) == 0
    res = json.loads((out / "bench.json").read_text())
    assert set(res) == {"random", "careful"}
    assert "| slopes |" in (out / "bench.md").read_text()
    assert bench.main(["--suite", str(spec), "--policy", "random", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert bench.main(["--suite", str(spec), "--policy", "nonsense", "--out",
                       str(tmp_path / "o2")]) == 2


@pytest.mark.slow
def test_the_full_suite_separates_careless_driving_on_the_upper_levels():
    # offroad-bench-v0, 1000 tasks (about 20 s): the straight-line heuristic tips on the
    # top-level hills, ditches and boulders, and nowhere on the bottom levels
    res = run_suite(load_suite("offroad-bench-v0"), "heuristic")
    fams = res["by_family"]
    for fam in ("slopes", "ditches", "boulders"):
        assert fams[fam]["9"]["tip_over_rate"] >= 0.2, fam
    assert all(fams[f][str(lv)]["tip_over_rate"] == 0.0 for f in fams for lv in range(3))
    assert res["overall"]["episodes"] == 1000


def test_evaluate_runs_a_checkpoint_on_a_suite_named_by_policy(tmp_path, capsys):
    # the issue's command: offroad-env evaluate --suite SUITE --policy CKPT|random|heuristic
    # (an untrained network saved as train.ppo saves it, on the suite env's layout)
    from train import evaluate
    from train.common.agent import Agent
    from train.common.checkpoint import obs_layout, save_checkpoint
    from train.ppo import PPOConfig
    spec = tmp_path / "tiny.json"
    d = {k: list(v) if isinstance(v, tuple) else v for k, v in TINY.__dict__.items()}
    spec.write_text(json.dumps(d))
    env = suite_env(TINY, 1)
    cfg = PPOConfig(env_id="offroad_env/OffroadTraverse-v1", hidden=(8,))
    agent = Agent(env.single_observation_space.shape[0], 2, cfg.hidden, cfg.init_log_std)
    (tmp_path / "run").mkdir()
    ckpt = tmp_path / "run" / "checkpoint.pt"
    save_checkpoint(ckpt, agent, None, cfg, obs_layout(env), 0, 0)
    env.close()
    out = tmp_path / "ev"
    assert evaluate.main(["--suite", str(spec), "--policy", str(ckpt), "--out", str(out)]) == 0
    res = json.loads((out / "bench.json").read_text())
    assert set(res) == {"run"} and res["run"]["overall"]["episodes"] == TINY.num_tasks
    # LABEL=PATH names a checkpoint in the table; two of the same name are an error
    assert bench.main(["--suite", str(spec), "--policy", f"PPO tiny={ckpt}", "heuristic",
                       "--out", str(tmp_path / "lab")]) == 0
    assert set(json.loads((tmp_path / "lab" / "bench.json").read_text())) == {"PPO tiny",
                                                                             "heuristic"}
    assert "| family | PPO tiny: success / tip-over / stuck" in (tmp_path / "lab" / "bench.md").read_text()
    assert bench.main(["--suite", str(spec), "--policy", str(ckpt), str(ckpt), "--out",
                       str(tmp_path / "dup")]) == 2
    # --sampled: the training rollout's draws, seeded: two runs give the same JSON
    for k in (1, 2):
        assert bench.main(["--suite", str(spec), "--policy", str(ckpt), "--sampled", "--out",
                           str(tmp_path / f"s{k}"), "--no-progress"]) == 0
    s1, s2 = ((tmp_path / f"s{k}" / "bench.json").read_text() for k in (1, 2))
    assert s1 == s2 and set(json.loads(s1)) == {"run (sampled)"}
    assert evaluate.main(["--suite", str(spec), "--policy", "no/such.pt", "--out",
                          str(tmp_path / "e2")]) == 2
    assert "neither a checkpoint file nor one of" in capsys.readouterr().err


def test_a_suite_run_shows_its_progress_and_eta_without_tqdm(monkeypatch, capsys):
    """Issue 27, item 9: a long suite run reports progress on stderr; a base install without
    tqdm gets plain lines with the share done, the rate and the ETA, and one notice of what the
    missing extras leave out. The results are the same with and without the report."""
    import sys

    from train.common import logs
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    monkeypatch.setattr(logs, "_NOTICED", set())
    quiet = run_suite(TINY, "heuristic")
    capsys.readouterr()
    bar = logs.Progress(10, desc="x", every_s=0.0)
    bar.update(4)
    err = capsys.readouterr().err
    assert "tqdm is not installed: no progress bars" in err
    assert "x  40% 4/10 step," in err and "ETA 0:00:0" in err
    shown = run_suite(TINY, "heuristic", progress=True, label="heuristic")
    err = capsys.readouterr().err
    assert "tqdm is not installed" not in err  # said once per process
    assert err.splitlines()[-1].startswith("heuristic ")  # the last line, early end or not
    assert "step/s, ETA" in err.splitlines()[-1]
    assert json.dumps(shown) == json.dumps(quiet)


def test_a_suite_on_the_physical_model_with_soil_and_the_stuck_end():
    """Issue 26 groundwork: the heuristics drive the physical model (skid steering: wheel
    speeds); a suite may hold the soft-soil family and end tasks as stuck; two runs agree."""
    spec = replace(TINY, name="tiny-physical", dynamics="rigid_body",
                   families=("slopes", "soft_soil"), stuck_time_s=1.0, time_limit_s=6.0)
    a = run_suite(spec, "heuristic")
    assert json.dumps(a, sort_keys=True) == json.dumps(run_suite(spec, "heuristic"),
                                                        sort_keys=True)
    cell = a["overall"]
    rates = ("success", "tip_over", "hole", "off_map", "time_limit", "stuck")
    assert sum(cell[f"{r}_rate"] for r in rates) == pytest.approx(1.0)
    assert cell["success_rate"] > 0 and "stuck_ci95" in cell
    with pytest.raises(ValueError, match="stuck_time_s must be a number > 0 or null"):
        replace(TINY, stuck_time_s=-1.0)
    from train.planners.baselines import baseline
    from offroad_env import OffroadVectorEnv
    from offroad_env.physics.rigid_params import RigidBodyParams
    env = OffroadVectorEnv(num_envs=2, dynamics="rigid_body", vehicle="rc_truck",
                           dynamics_params=RigidBodyParams(steering="ackermann"))
    with pytest.raises(ValueError, match="with skid steering, not 'ackermann'"):
        baseline("heuristic", env, 0)


def test_a_chunked_suite_on_two_torchrun_ranks_writes_one_processs_json(tmp_path):
    # the chunks (4 tasks each: 3 chunks of 12) and the threads per process are the suite's,
    # so two ranks, each running every other chunk, step every task in the rows one process
    # does; rank 0 gathers and writes byte-identical files
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    spec = tmp_path / "tiny.json"
    d = {k: list(v) if isinstance(v, tuple) else v for k, v in TINY.__dict__.items()}
    spec.write_text(json.dumps(d))
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    common = ["-m", "train.bench", "--suite", str(spec), "--policy", "random", "heuristic",
              "--chunk-tasks", "4", "--no-progress"]
    one = subprocess.run([sys.executable] + common + ["--out", str(tmp_path / "one")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    torchrun = Path(sys.executable).parent / "torchrun"
    two = subprocess.run([str(torchrun), "--standalone", "--nproc_per_node=2"] + common
                         + ["--out", str(tmp_path / "two")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = ((tmp_path / x / "bench.json").read_bytes() for x in ("one", "two"))
    assert a == b
    res = json.loads(a)
    assert res["heuristic"]["tasks"] == 12 and res["heuristic"]["suite"]["chunk_tasks"] == 4
    assert two.stdout.count("wrote") == 1  # rank 0 alone writes
    # a chunked run's threads are the suite's
    assert bench.main(["--suite", str(spec), "--policy", "random", "--chunk-tasks", "4",
                       "--threads", "2", "--out", str(tmp_path / "x")]) == 2


def test_chunks_are_the_suites_and_checked_where_they_enter():
    assert replace(TINY, chunk_tasks=5).chunks() == [(0, 0, 5), (0, 5, 10), (0, 10, 12)]
    assert TINY.chunks() == [(0, 0, 12)]
    with pytest.raises(ValueError, match="chunk_tasks must be an int >= 1 or null, got 0"):
        replace(TINY, chunk_tasks=0)
    # a chunked run in one process equals the whole group's run in its outcomes' count
    a = run_suite(replace(TINY, chunk_tasks=5), "heuristic")
    assert a["overall"]["episodes"] == 12
    assert len(a["per_task"]["end_reason"]) == 12


def test_a_run_that_stops_goes_on_from_its_last_whole_chunk(tmp_path, monkeypatch):
    """Issue 45's leftover: a suite run kept each chunk's outcomes as it ended; after a crash
    the same run reads them back and runs only the rest, with the same results."""
    spec = replace(TINY, chunk_tasks=5)  # 3 chunks
    whole = run_suite(spec, "heuristic")
    keep = tmp_path / "chunks"
    from train.bench import run as bench_run

    real, calls = bench_run._run_group, []

    def dies_on_the_third(*args, **kw):
        calls.append(kw["rows"])
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(*args, **kw)

    monkeypatch.setattr(bench_run, "_run_group", dies_on_the_third)
    with pytest.raises(RuntimeError, match="killed"):
        run_suite(spec, "heuristic", keep=keep, identity="heuristic")
    assert len(list(keep.glob("chunk-*.npz"))) == 2
    calls.clear()
    monkeypatch.setattr(bench_run, "_run_group", lambda *a, **kw: calls.append(kw["rows"]) or real(
        *a, **kw))
    again = run_suite(spec, "heuristic", keep=keep, identity="heuristic")
    assert calls == [(10, 12)]  # only the chunk that had not ended
    assert json.dumps(again, sort_keys=True) == json.dumps(whole, sort_keys=True)
    # another policy (or suite, or code) does not read them
    calls.clear()
    run_suite(spec, "careful", keep=keep, identity="careful")
    assert len(calls) == 3
    with pytest.raises(ValueError, match="needs the policy's identity"):
        run_suite(spec, "heuristic", keep=keep)
