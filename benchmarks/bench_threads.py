"""Training throughput by torch thread count, on idle cores and with other work on them
(issue 27, item 10): where the default ``--threads`` should be; and OpenMP's wait policy
(issue 46): its own default (spin a while, then sleep) against ``OMP_WAIT_POLICY=PASSIVE``.

    python benchmarks/bench_threads.py [--num-envs 256] [--repeats 3] [--threads 1 2 0]
        [--wait omp passive]

Each case trains ``train.ppo`` (OffroadNav-v1, 256 envs x 64 steps, 8 iterations) in a fresh
process and reports env-steps/s of training after the first iteration (start-up left out),
the median of ``repeats`` runs. "busy" runs ``busy`` single-threaded spin loops (other work on
the machine) beside the training. ``--threads 0`` is the default: the physical cores capped at
the free ones (:func:`offroad_env.core.devices.default_threads`).
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


def train_rate(threads: int, num_envs: int, iterations: int, wait: str = "passive") -> float:
    """env-steps/s of a ``train.ppo`` run after its first iteration. ``wait``: "passive" runs
    it with ``OMP_WAIT_POLICY=PASSIVE``; "omp" without the variable (OpenMP's own default)."""
    out = Path(tempfile.mkdtemp()) / "run"
    argv = ["--num-envs", str(num_envs), "--total-steps", str(num_envs * 64 * iterations),
            "--no-progress", "--print-every", "0", "--out", str(out), "--threads", str(threads),
            "--no-tensorboard"]
    args = [sys.executable, "-m", "train.ppo", *argv]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("OMP_WAIT_POLICY", None)
    if wait == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
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
    p.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count(), 0],
                   help="--threads values of train.ppo (0: its default)")
    p.add_argument("--wait", nargs="+", default=["omp", "passive"], choices=["omp", "passive"],
                   help="OpenMP's wait: its own default (omp) or PASSIVE")
    a = p.parse_args()
    cores = os.cpu_count()
    print(f"{cores} cores; train.ppo OffroadNav-v1, {a.num_envs} envs x 64 steps, "
          f"{a.iterations} iterations, median of {a.repeats}")
    print("| cores in use by other work | --threads | OpenMP wait | env-steps/s of training |")
    print("|---|---|---|---|")
    for busy in (0, a.busy):
        stop = mp.Event()
        spinners = [mp.Process(target=_spin, args=(stop,)) for _ in range(busy)]
        for s in spinners:
            s.start()
        time.sleep(1.0)
        try:
            for threads in a.threads:
                for wait in a.wait:
                    rates = [train_rate(threads, a.num_envs, a.iterations, wait)
                             for _ in range(a.repeats)]
                    label = "0 (default)" if threads == 0 else str(threads)
                    print(f"| {busy} | {label} | {wait} | {statistics.median(rates):,.0f} "
                          f"({', '.join(f'{r:,.0f}' for r in rates)}) |", flush=True)
        finally:
            stop.set()
            for s in spinners:
                s.join()


if __name__ == "__main__":
    main()
