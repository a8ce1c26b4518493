"""Benchmark: the physical model (``dynamics="rigid_body"``) against skid-steer + rigid contact,
side by side in one process, the vector env at N = 4096 on the default 40 x 40 m Perlin maps
(0.1 m grid), float32, default tip rule (force-angle), NEXT_STEP autoreset, random actions.

    python benchmarks/bench_rigid_body.py [--n 4096] [--rounds 3] [--seconds 3] [--eager-only]
        [--pairs 40] [--block-s 1.0]

Prints, per round, env-steps/s of each (compiled and eager), then the medians, the physical
model's substeps per step and its cost per substep. Compiling the physical model takes minutes
(its substeps are unrolled into one graph).

Then the **paired ratio** (``--pairs``, default 40): the two models of a mode stepped in
alternating blocks of steps of about ``--block-s`` seconds each (default 1; a block of 0.1 s held
2 rigid_body steps, and the cache's refill after each switch weighed on them), the ratio of their
rates taken per pair and the median of the pairs reported with its interquartile range. Load
that comes and goes on a shared 2-core VM then hits both sides of a pair alike; the rounds'
medians above, taken seconds apart, moved the ratio between 0.35 and 0.55 for the same code.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_envs import rate  # noqa: E402

from offroad_env import OffroadVectorEnv  # noqa: E402
from offroad_env.physics.rigid_params import RigidBodyParams, substeps  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eager-only", action="store_true")
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--block-s", type=float, default=1.0,
                    help="seconds of steps in each block of a pair")
    args = ap.parse_args()
    if args.pairs < 2:
        ap.error(f"--pairs must be >= 2 (a median and quartiles), got {args.pairs}")
    if not args.block_s > 0:
        ap.error(f"--block-s must be > 0, got {args.block_s}")
    torch.set_num_threads(args.threads)
    torch._dynamo.config.recompile_limit = 64
    n = args.n
    combos = {"skid_steer + rigid_contact": dict(dynamics="skid_steer", ground="rigid_contact"),
              "rigid_body": dict(dynamics="rigid_body")}
    modes = (False,) if args.eager_only else (False, True)
    envs = {}
    for name, kw in combos.items():
        for comp in modes:
            t0 = time.time()
            e = OffroadVectorEnv(num_envs=n, max_episode_steps=500, compile=comp, **kw)
            e.reset(seed=0)
            with torch.inference_mode():
                e.step(torch.zeros(n, 2))
            print(f"{name} {'compiled' if comp else 'eager'}: built in {time.time() - t0:.0f} s",
                  flush=True)
            envs[(name, comp)] = e
    acts = torch.rand(n, 2) * 2 - 1
    rates = {k: [] for k in envs}
    for rnd in range(args.rounds):
        for key, e in envs.items():
            with torch.inference_mode():
                r = rate(lambda: e.step(acts), n, args.seconds)
            rates[key].append(r)
            print(rnd, key, f"{r:,.0f}", flush=True)
    p = RigidBodyParams()
    dt = envs[("rigid_body", False)].sim.cfg.dt
    subs = substeps(dt, p)
    print(f"\nN = {n}, {args.threads} threads, medians of {args.rounds} rounds of "
          f"{args.seconds:g} s; rigid_body: {subs} substeps of {dt / subs * 1e3:g} ms a step")
    med = {k: statistics.median(v) for k, v in rates.items()}
    for comp in modes:
        ref, phys = med[("skid_steer + rigid_contact", comp)], med[("rigid_body", comp)]
        label = "compiled" if comp else "eager"
        print(f"{label:9s} skid_steer + rigid_contact {ref:12,.0f}  rigid_body {phys:12,.0f}  "
              f"ratio {phys / ref:.2f}  ({1e9 / (phys * subs):.0f} ns per env-substep)")
    for comp in modes:
        ratios = paired_ratios(envs[("skid_steer + rigid_contact", comp)],
                               envs[("rigid_body", comp)], acts, args.pairs, args.block_s)
        q1, q2, q3 = statistics.quantiles(ratios, n=4)
        print(f"{'compiled' if comp else 'eager':9s} paired ratio rigid_body / skid_steer + "
              f"rigid_contact: median {q2:.3f} (interquartile {q1:.3f}-{q3:.3f}) over "
              f"{len(ratios)} pairs of {args.block_s:g}-s blocks")


def paired_ratios(ref_env, env, acts, pairs: int, block_s: float = 1.0) -> list[float]:
    """Per pair, ``rate(env) / rate(ref_env)`` of two back-to-back blocks of steps of about
    ``block_s`` each (the order alternates from pair to pair)."""
    def steps_for(e):
        t0 = time.perf_counter()
        e.step(acts)
        return max(1, int(block_s / max(time.perf_counter() - t0, 1e-6)))

    def block(e, k):
        t0 = time.perf_counter()
        for _ in range(k):
            e.step(acts)
        return k / (time.perf_counter() - t0)

    out = []
    with torch.inference_mode():
        k_ref, k = steps_for(ref_env), steps_for(env)
        for i in range(pairs):
            if i % 2:
                r_ref = block(ref_env, k_ref)
                r = block(env, k)
            else:
                r = block(env, k)
                r_ref = block(ref_env, k_ref)
            out.append(r / r_ref)
    return out


if __name__ == "__main__":
    main()
