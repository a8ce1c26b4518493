"""Benchmark: a masked reset's cost against the rows it resets (issue 46).

    python benchmarks/bench_resets.py [--suite offroad-bench-v1] [--num-envs 4096]
        [--rows 1 16 64 256] [--repeats 5] [--threads 2]

Builds the env that ``train.ppo --suite`` trains on (the suite's traverse tasks on its training
grid, the physical model), resets it once, then times ``sim.reset(mask)`` on ``--repeats``
random masks of each row count (the same masks for every run: a fixed generator) and prints the
median milliseconds, with the build-and-first-reset time. Eager; the env's own threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offroad_env import OffroadVectorEnv  # noqa: E402
from train.envconfig import env_kwargs  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v1")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--rows", type=int, nargs="+", default=[1, 16, 64, 256])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    n = a.num_envs
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {a.threads} threads, torch "
          f"{torch.__version__}, suite {a.suite}, N = {n}")
    t0 = time.perf_counter()
    env = OffroadVectorEnv(num_envs=n, **env_kwargs("offroad_env/OffroadTraverse-v0",
                                                     {"suite": a.suite}))
    env.reset(seed=0)
    print(f"build and first reset: {time.perf_counter() - t0:.1f} s")
    gen = torch.Generator().manual_seed(1)
    print("| rows reset | median ms | ms per row |")
    print("|---|---|---|")
    for k in a.rows:
        ts = []
        for _ in range(a.repeats):
            mask = torch.zeros(n, dtype=torch.bool)
            mask[torch.randperm(n, generator=gen)[:k]] = True
            t = time.perf_counter()
            env.sim.reset(mask)
            ts.append(time.perf_counter() - t)
        med = 1000 * statistics.median(ts)
        print(f"| {k} | {med:.0f} | {med / k:.2f} |", flush=True)


if __name__ == "__main__":
    main()
