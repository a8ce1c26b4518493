"""Benchmark: look-ahead against the live step, and the cost of snapshots (issue 45).

For M rows: the live step (``sim.step``, no autoreset, no resets: the episode limit is far
off) and ``env.lookahead(snapshot, (H, M, A))`` from a snapshot of the same rows, timed in
alternating pairs (one look-ahead of H steps against H live steps), the ratio of their
env-step rates per pair, median and interquartile range over the pairs. Then ``get_state`` and
``set_state`` per environment [us] and a snapshot's bytes per environment.

    python benchmarks/bench_lookahead.py [--model unicycle] [--m 4096] [--h 10] [--pairs 7]
        [--compile] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offroad_env import OffroadVectorEnv  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="unicycle")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--h", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    M, H = args.m, args.h
    env = OffroadVectorEnv(num_envs=M, dynamics=args.model, max_episode_steps=10**9,
                           compile=args.compile)
    env.reset(seed=0)
    sim = env.unwrapped.sim
    g = torch.Generator().manual_seed(0)
    acts = torch.rand(H, M, 2, generator=g) * 2 - 1
    snap = env.get_state()
    env.lookahead(snap, acts)  # builds (and compiles) the look-ahead simulator
    for h in range(H):  # warm the live step
        sim.step(acts[h])
    ratios, live_rates, look_rates = [], [], []
    for _ in range(args.pairs):
        t0 = time.perf_counter()
        for h in range(H):
            sim.step(acts[h])
        t_live = time.perf_counter() - t0
        t0 = time.perf_counter()
        env.lookahead(snap, acts)
        t_look = time.perf_counter() - t0
        live_rates.append(M * H / t_live)
        look_rates.append(M * H / t_look)
        ratios.append(t_live / t_look)
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(f"{args.model}, M = {M}, H = {H}, {'compiled' if args.compile else 'eager'}, "
          f"{torch.get_num_threads()} thread(s)")
    print(f"  live step {statistics.median(live_rates):,.0f} env-steps/s, look-ahead "
          f"{statistics.median(look_rates):,.0f}; ratio {statistics.median(ratios):.2f} "
          f"(IQR {q[0]:.2f}-{q[2]:.2f}, {args.pairs} pairs)")
    reps = 5
    t0 = time.perf_counter()
    for _ in range(reps):
        s = env.get_state()
    t_get = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    for _ in range(reps):
        env.set_state(s)
    t_set = (time.perf_counter() - t0) / reps
    nbytes = sum(v.numel() * v.element_size() for v in s.tensors.values())
    print(f"  get_state {1e6 * t_get / M:.2f} us/env, set_state {1e6 * t_set / M:.2f} us/env, "
          f"{nbytes / M:.0f} bytes/env")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
