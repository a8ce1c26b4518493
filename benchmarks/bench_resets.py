"""Benchmark: a masked reset's cost against the rows it resets (issue 46).

    python benchmarks/bench_resets.py [--suite offroad-bench-v1] [--num-envs 4096]
        [--rows 1 16 64 256] [--repeats 5] [--threads 2]

Builds the env that ``train.ppo --suite`` trains on (the suite's traverse tasks on its training
grid, the physical model), resets it once, then times ``sim.reset(mask)`` on ``--repeats``
random masks of each row count (the same masks for every run: a fixed generator) and prints the
median milliseconds, with the build-and-first-reset time. Eager; the env's own threads.

The reset's last part is the observation: the vector env's autoreset passes the step's
observations (``sim.reset(mask, obs=obs)``), and only the reset rows are observed again. The
last two columns time that part alone on the state after each reset: observing all N rows (what
every reset did before) and observing the reset rows.
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
from train.common.envconfig import env_kwargs  # noqa: E402


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
    env = OffroadVectorEnv(num_envs=n, **env_kwargs("offroad_env/OffroadTraverse-v1",
                                                     {"suite": a.suite}))
    env.reset(seed=0)
    print(f"build and first reset: {time.perf_counter() - t0:.1f} s")
    gen = torch.Generator().manual_seed(1)
    print("| rows reset | median ms | ms per row | observe all N, ms | observe the rows, ms |")
    print("|---|---|---|---|---|")
    sim = env.sim
    for k in a.rows:
        ts, full, rows = [], [], []
        for _ in range(a.repeats):
            mask = torch.zeros(n, dtype=torch.bool)
            mask[torch.randperm(n, generator=gen)[:k]] = True
            t = time.perf_counter()
            obs = sim.reset(mask)
            ts.append(time.perf_counter() - t)
            t = time.perf_counter()
            full_obs = sim.observe()
            full.append(time.perf_counter() - t)
            t = time.perf_counter()
            idx = torch.nonzero(mask).flatten()
            part = sim.observer(sim.state.rows(idx), sim.maps)
            rows.append(time.perf_counter() - t)
            assert torch.allclose(part, full_obs[idx], rtol=1e-6, atol=1e-6)
            assert torch.equal(obs, full_obs)
        med, f, r = (1000 * statistics.median(x) for x in (ts, full, rows))
        print(f"| {k} | {med:.0f} | {med / k:.2f} | {f:.1f} | {r:.1f} |", flush=True)


if __name__ == "__main__":
    main()
