"""The step rate by batch size, eager and compiled, on 1 and 2 threads (and the package's own
choice): where two threads are slower than one, and what the small-batch rule buys.

    python benchmarks/bench_step_rate.py [--dynamics rigid_body] [--n 1 32 256 4096]
        [--modes eager compiled] [--threads 1 2 auto] [--steps 20] [--repeats 5] [--busy 0]

Each case runs in a fresh process: ``OffroadVectorEnv(num_envs=n, dynamics=...)`` (the default
task), zero actions, ``sim.step`` timed over ``steps`` steps ``repeats`` times after a warm-up
(the compile left out), the median. ``--threads 1`` / ``2``: torch's thread count, with the
small-batch rule off (``offroad_env.core.devices.SINGLE_THREAD_BELOW = 0``: the package before
the rule); ``auto``: 2 threads with the rule on (the package's default: batches of fewer rows
than ``SINGLE_THREAD_BELOW`` step on one thread). ``--busy k`` runs k single-threaded spin
loops beside each case (other work on the machine). Prints a markdown table of env-steps/s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASE = r"""
import json, statistics, sys, time, torch
sys.path.insert(0, {root!r})
import offroad_env.core.devices as devices
from offroad_env import OffroadVectorEnv
n, dyn, compiled, threads, steps, repeats = {n}, {dyn!r}, {compiled}, {threads!r}, {steps}, {repeats}
if threads == "auto":
    torch.set_num_threads(2)
else:
    torch.set_num_threads(int(threads))
    devices.SINGLE_THREAD_BELOW = 0
env = OffroadVectorEnv(num_envs=n, dynamics=dyn, max_episode_steps=10**9, compile=compiled)
env.reset(seed=0)
sim = env.unwrapped.sim
a = torch.zeros(n, sim.action_dim, dtype=sim.dtype)
for _ in range(3):
    sim.step(a)
ts = []
for _ in range(repeats):
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step(a)
    ts.append((time.perf_counter() - t0) / steps)
print(json.dumps(statistics.median(ts)))
"""


def _spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def run_case(n, dyn, compiled, threads, steps, repeats) -> float:
    code = CASE.format(root=str(ROOT), n=n, dyn=dyn, compiled=compiled, threads=threads,
                       steps=steps, repeats=repeats)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dynamics", default="rigid_body")
    p.add_argument("--n", type=int, nargs="+", default=[1, 32, 256, 4096])
    p.add_argument("--modes", nargs="+", default=["eager", "compiled"],
                   choices=["eager", "compiled"])
    p.add_argument("--threads", nargs="+", default=["1", "2", "auto"])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--busy", type=int, default=0)
    a = p.parse_args(argv)
    stop = mp.Event()
    spinners = [mp.Process(target=_spin, args=(stop,)) for _ in range(a.busy)]
    for s in spinners:
        s.start()
    time.sleep(0.5 if a.busy else 0.0)
    print(f"{a.dynamics}, {os.cpu_count()} cores, {a.busy} busy; env-steps/s (ms a step), "
          f"median of {a.repeats} x {a.steps} steps")
    print("| N | mode | " + " | ".join(f"threads {t}" for t in a.threads) + " |")
    print("|---|---|" + "---|" * len(a.threads))
    try:
        for n in a.n:
            for mode in a.modes:
                cells = []
                for t in a.threads:
                    s = run_case(n, a.dynamics, mode == "compiled", t, a.steps, a.repeats)
                    cells.append(f"{n / s:,.0f} ({s * 1e3:.1f} ms)")
                print(f"| {n} | {mode} | " + " | ".join(cells) + " |", flush=True)
    finally:
        stop.set()
        for s in spinners:
            s.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
