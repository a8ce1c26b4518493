"""Benchmark: environment steps per second, side by side with Gymnasium's SyncVectorEnv.

    python benchmarks/bench_envs.py [--seconds 2] [--quick] [--compile-only] [--device cuda]

* ``OffroadVectorEnv`` at N = 1, 64, 1024, 4096, 16384 with unicycle + four-wheel and with
  skid-steer + rigid-contact (NEXT_STEP autoreset, 500-step episodes, zero-order random actions
  drawn once);
* ``gymnasium.vector.SyncVectorEnv`` over ``OffroadEnv`` at N = 64, the baseline a user would
  otherwise write;
* the single ``OffroadEnv``.

Float32, eager, on the default 40 x 40 m Perlin maps. Prints medians of repeated timed blocks;
copy the table into BENCHMARKS.md with the machine noted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gymnasium as gym  # noqa: E402

from offroad_env import OffroadEnv, OffroadVectorEnv  # noqa: E402

COMBOS = {"unicycle + four_wheel": dict(dynamics="unicycle", ground="four_wheel"),
          "skid_steer + rigid_contact": dict(dynamics="skid_steer", ground="rigid_contact")}


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def rate(step, n_envs, seconds, min_steps=5):
    """Median env-steps/s over 5 blocks of about ``seconds / 5`` each (a CUDA device is
    synchronized at the block ends)."""
    step()
    _sync()
    t0 = time.perf_counter()
    k = 0
    while k < min_steps or time.perf_counter() - t0 < seconds / 5:
        step()
        k += 1
    per_block = k
    rates = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(per_block):
            step()
        _sync()
        rates.append(per_block * n_envs / (time.perf_counter() - t0))
    return statistics.median(rates)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--compile-only", action="store_true",
                   help="only the torch.compile'd vector env at N = 1 and 4096")
    p.add_argument("--device", default="cpu",
                   help="torch device of the vector env (e.g. cuda); the SyncVectorEnv and "
                        "single-env baselines run on the CPU only")
    args = p.parse_args(argv)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"gymnasium {gym.__version__}")
    print("| env | model | N | threads | env-steps/s |")
    print("|---|---|---|---|---|")
    sizes = [1, 64, 1024, 4096] if args.quick else [1, 64, 1024, 4096, 16384]
    if args.compile_only:
        torch._dynamo.config.recompile_limit = 64
        for t in args.threads:
            torch.set_num_threads(t)
            for name, kw in COMBOS.items():
                for n in (1, 4096):
                    env = OffroadVectorEnv(num_envs=n, max_episode_steps=500, compile=True,
                                           device=args.device, **kw)
                    env.reset(seed=0)
                    acts = (torch.rand(n, 2) * 2 - 1).to(args.device)
                    with torch.inference_mode():
                        r = rate(lambda: env.step(acts), n, args.seconds)
                    print(f"| OffroadVectorEnv compiled | {name} | {n} | {t} | {r:,.0f} |",
                          flush=True)
        return
    for t in args.threads:
        torch.set_num_threads(t)
        for name, kw in COMBOS.items():
            for n in sizes:
                env = OffroadVectorEnv(num_envs=n, max_episode_steps=500, device=args.device,
                                       **kw)
                env.reset(seed=0)
                acts = (torch.rand(n, 2) * 2 - 1).to(args.device)
                with torch.inference_mode():
                    r = rate(lambda: env.step(acts), n, args.seconds)
                print(f"| OffroadVectorEnv | {name} | {n} | {t} | {r:,.0f} |", flush=True)
            if args.device != "cpu":
                continue
            sync = gym.vector.SyncVectorEnv(
                [lambda kw=kw: gym.wrappers.TimeLimit(OffroadEnv(**kw), 500)
                 for _ in range(64)])
            sync.reset(seed=0)
            a = np.random.default_rng(0).uniform(-1, 1, (64, 2)).astype(np.float32)
            with torch.inference_mode():
                r = rate(lambda: sync.step(a), 64, args.seconds)
            print(f"| SyncVectorEnv(OffroadEnv) | {name} | 64 | {t} | {r:,.0f} |", flush=True)
            single = gym.wrappers.TimeLimit(OffroadEnv(**kw), 500)
            single.reset(seed=0)
            a1 = a[0]

            def step1():
                _, _, term, trunc, _ = single.step(a1)
                if term or trunc:
                    single.reset()
            with torch.inference_mode():
                r = rate(step1, 1, args.seconds)
            print(f"| OffroadEnv (single) | {name} | 1 | {t} | {r:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
