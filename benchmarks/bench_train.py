"""Training throughput end to end (env steps per second of training, rollouts and updates):
one process against two torchrun ranks on this machine, the same total steps.

    python benchmarks/bench_train.py [--env-id ID] [--num-envs N] [--total-steps S]

Each rank of the 2-process run steps ``num_envs / 2`` envs, so the global batch is the same.
On the project's 2-core machine two ranks cannot show a speed-up (each has one core, and the
single process already uses both). The GPU command, for a machine with GPUs:

    torchrun --standalone --nproc_per_node=<GPUs> -m train.ppo --device cuda --num-envs 4096 \\
        --total-steps 50000000 --no-progress --out runs/gpu
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(ranks: int, env_id: str, num_envs: int, total: int) -> float:
    out = Path(tempfile.mkdtemp()) / "run"
    per = num_envs // ranks
    args = ["-m", "train.ppo", "--env-id", env_id, "--num-envs", str(per), "--total-steps",
            str(total), "--no-progress", "--out", str(out), "--threads", str(2 // ranks)]
    bin_dir = Path(sys.executable).parent
    cmd = ([str(bin_dir / "torchrun"), "--standalone", f"--nproc_per_node={ranks}"] + args
           if ranks > 1 else [sys.executable] + args)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    rows = list(csv.DictReader(open(out / "progress.csv")))
    first, last = rows[0], rows[-1]  # the first iteration holds the start-up, left out
    steps = int(last["global_step"]) - int(first["global_step"])
    return steps / (float(last["time_s"]) - float(first["time_s"]))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="offroad_env/OffroadNav-v0")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--total-steps", type=int, default=256 * 64 * 12)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    for ranks in (1, 2):
        rates = sorted(run(ranks, a.env_id, a.num_envs, a.total_steps) for _ in range(a.repeats))
        print(f"{ranks} process(es), {a.num_envs} envs in all: median "
              f"{rates[len(rates) // 2]:,.0f} env-steps/s of training "
              f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})", flush=True)


if __name__ == "__main__":
    main()
