"""End-to-end PPO training throughput (issue 28): env-steps/s of ``train.ppo.train`` itself,
rollouts and updates, the first iteration (start-up, compiles) left out.

    python benchmarks/bench_train.py [--configs old fast] [--iterations 6] [--repeats 3]
                                     [--env-id offroad_env/OffroadNav-v1] [--threads 0]
    python benchmarks/bench_train.py --torchrun [--configs fast]

Each named configuration (:data:`CONFIGS`) trains for ``iterations`` iterations in a fresh
temporary run folder; its rate is ``(iterations - 1) * batch / (t_last - t_first)`` from the
run's own ``progress.csv`` (``time_s`` is the wall time at the end of each iteration). The
configurations alternate within each repeat (so machine noise hits both alike) and the median of
``repeats`` is printed, with the ratio to the first configuration.

``--torchrun``: each configuration as one process and as two torchrun ranks (each stepping half
the environments, so the global batch is the same; ``--threads`` 2 and 1), through the command
line. On the project's 2-core machine two ranks cannot show a speed-up (each has one core, and
the single process already uses both); the point is that the distributed path costs little. The
GPU command, for a machine with GPUs:

    torchrun --standalone --nproc_per_node=<GPUs> -m train.ppo --device cuda --num-envs 4096 \\
        --total-steps 50000000 --no-progress --out runs/gpu
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from train.ppo import PRESETS, PPOConfig, train  # noqa: E402

#: the configurations compared, over ``PPOConfig``'s defaults: ``old`` is the defaults before
#: issue 28 (the ``classic`` preset: N = 256, T = 64, 4 epochs x 4 minibatches, two 128 x 128
#: MLPs), ``defaults`` those after it (N = 1024, T = 16, 64 x 64; ``balanced`` in the runs of
#: docs/benchmarks-history.md "Training speed")
CONFIGS = {
    "old": PRESETS["classic"],
    "defaults": {},
    "wide_batch": dict(num_envs=4096, num_steps=16, update_epochs=4, num_minibatches=4),
    "fast": PRESETS["fast"],
    "fast_4x4": dict(num_envs=4096, num_steps=16, update_epochs=4, num_minibatches=4,
                     hidden=(64, 64)),
    "fast_3x4": dict(num_envs=2048, num_steps=32, update_epochs=3, num_minibatches=4,
                     hidden=(64, 64)),
    "fast_compiled": dict(num_envs=4096, num_steps=16, update_epochs=2, num_minibatches=2,
                          hidden=(64, 64), compile_env=True),
    # the defaults with the agent's passes compiled, then the env's step too
    "defaults_cpolicy": dict(compile_policy=True),
    "defaults_compiled": dict(compile_policy=True, compile_env=True),
}


def run(name: str, iterations: int, env_id: str, threads: int) -> float:
    """Env-steps/s of configuration ``name`` over ``iterations`` iterations (the first left
    out)."""
    over = CONFIGS[name]
    base = PPOConfig(env_id=env_id, threads=threads, progress=False, print_every=0,
                     tensorboard=False, checkpoint_every=0)
    cfg = dataclasses.replace(base, **over)
    cfg = dataclasses.replace(cfg, total_steps=cfg.batch_size * iterations)
    with tempfile.TemporaryDirectory() as out:
        cfg = dataclasses.replace(cfg, out=out)
        train(cfg)
        return _rate(Path(out) / "progress.csv", cfg.batch_size)


def _rate(progress_csv: Path, batch: int) -> float:
    with open(progress_csv) as f:
        times = [float(r["time_s"]) for r in csv.DictReader(f)]
    return (len(times) - 1) * batch / (times[-1] - times[0])


def run_ranks(name: str, ranks: int, iterations: int, env_id: str) -> float:
    """Env-steps/s of configuration ``name`` trained through the command line by ``ranks``
    processes (torchrun for 2), each with ``num_envs / ranks`` environments."""
    cfg = dataclasses.replace(PPOConfig(), **CONFIGS[name])
    per = cfg.num_envs // ranks
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        args = ["-m", "train.ppo", "--env-id", env_id, "--num-envs", str(per),
                "--num-steps", str(cfg.num_steps), "--update-epochs", str(cfg.update_epochs),
                "--num-minibatches", str(cfg.num_minibatches), "--hidden",
                *map(str, cfg.hidden), "--total-steps", str(cfg.batch_size * iterations),
                "--no-progress", "--no-tensorboard", "--print-every", "0", "--out", str(out),
                "--threads", str(2 // ranks)] + (["--compile-env"] if cfg.compile_env else [])
        bin_dir = Path(sys.executable).parent
        cmd = ([str(bin_dir / "torchrun"), "--standalone", f"--nproc_per_node={ranks}"] + args
               if ranks > 1 else [sys.executable] + args)
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True)
        return _rate(out / "progress.csv", cfg.batch_size)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", nargs="+", default=["old", "defaults", "fast"], choices=list(CONFIGS))
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--env-id", default="offroad_env/OffroadNav-v1")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--torchrun", action="store_true")
    a = ap.parse_args()
    if a.torchrun:
        for c in a.configs:
            for ranks in (1, 2):
                rates = [run_ranks(c, ranks, a.iterations, a.env_id) for _ in range(a.repeats)]
                print(f"| {c} | {ranks} process(es) | {statistics.median(rates):,.0f} "
                      f"env-steps/s | {', '.join(f'{x:,.0f}' for x in rates)} |", flush=True)
        return
    rates = {c: [] for c in a.configs}
    for r in range(a.repeats):
        for c in a.configs:
            rates[c].append(run(c, a.iterations, a.env_id, a.threads))
            print(f"repeat {r + 1}: {c}: {rates[c][-1]:,.0f} env-steps/s", flush=True)
    first = statistics.median(rates[a.configs[0]])
    print(f"\n{a.env_id}, {a.iterations} iterations (first left out), median of {a.repeats}:")
    for c in a.configs:
        m = statistics.median(rates[c])
        print(f"| {c} | {m:,.0f} env-steps/s | {m / first:.2f} x | "
              f"{', '.join(f'{x:,.0f}' for x in rates[c])} |")


if __name__ == "__main__":
    main()
