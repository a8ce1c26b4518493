"""Training throughput by torch thread count, on idle cores and with other work on them
(issue 27, item 10): where the default ``--threads`` should be.

    python benchmarks/bench_threads.py [--num-envs 256] [--repeats 3]

Each case trains ``train.ppo`` (OffroadNav-v0, 256 envs x 64 steps, 8 iterations) in a fresh
process and reports env-steps/s of training after the first iteration (start-up left out),
the median of ``repeats`` runs. "busy" runs ``busy`` single-threaded spin loops (other work on
the machine) beside the training. ``--threads 0`` is the default: the physical cores capped at
the free ones (:func:`offroad_env.devices.default_threads`).
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def train_rate(threads: int, num_envs: int, iterations: int) -> float:
    out = Path(tempfile.mkdtemp()) / "run"
    args = [sys.executable, "-m", "train.ppo", "--num-envs", str(num_envs), "--total-steps",
            str(num_envs * 64 * iterations), "--no-progress", "--print-every", "0", "--out",
            str(out), "--threads", str(threads), "--no-tensorboard"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(args, check=True, env=env, capture_output=True)
    rows = list(csv.DictReader(open(out / "progress.csv")))
    first, last = rows[0], rows[-1]
    steps = int(last["global_step"]) - int(first["global_step"])
    return steps / (float(last["time_s"]) - float(first["time_s"]))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--busy", type=int, default=1, help="spin loops in the busy cases")
    a = p.parse_args()
    cores = os.cpu_count()
    print(f"{cores} cores; train.ppo OffroadNav-v0, {a.num_envs} envs x 64 steps, "
          f"{a.iterations} iterations, median of {a.repeats}")
    print("| cores in use by other work | --threads | env-steps/s of training |")
    print("|---|---|---|")
    for busy in (0, a.busy):
        stop = mp.Event()
        spinners = [mp.Process(target=_spin, args=(stop,)) for _ in range(busy)]
        for s in spinners:
            s.start()
        time.sleep(1.0)
        try:
            for threads in sorted({1, cores, 0}):
                rates = [train_rate(threads, a.num_envs, a.iterations) for _ in range(a.repeats)]
                label = "0 (default)" if threads == 0 else str(threads)
                print(f"| {busy} | {label} | {statistics.median(rates):,.0f} "
                      f"({', '.join(f'{r:,.0f}' for r in rates)}) |", flush=True)
        finally:
            stop.set()
            for s in spinners:
                s.join()


if __name__ == "__main__":
    main()
