"""Benchmark: the physical model (``dynamics="rigid_body"``) against skid-steer + rigid contact,
side by side in one process, the vector env at N = 4096 on the default 40 x 40 m Perlin maps
(0.1 m grid), float32, default tip rule (force-angle), NEXT_STEP autoreset, random actions.

    python benchmarks/bench_rigid_body.py [--n 4096] [--rounds 3] [--seconds 3] [--eager-only]

Prints, per round, env-steps/s of each (compiled and eager), then the medians, the physical
model's substeps per step and its cost per substep. Compiling the physical model takes minutes
(its substeps are unrolled into one graph).
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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
