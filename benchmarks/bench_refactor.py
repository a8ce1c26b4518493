"""Benchmark: the environment step of two checkouts side by side (a refactor must not slow it).

    python benchmarks/bench_refactor.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--seconds 2]
    python benchmarks/bench_refactor.py OLD_CHECKOUT NEW_CHECKOUT --ops-only --rounds 1

Each round runs every configuration of :mod:`bench_envs` (vector env at N = 1, 64, 1024, 4096
and the single env, unicycle + four_wheel and skid_steer + rigid_contact, eager, one thread) in
a fresh process for each checkout in turn, so both see the same machine state; prints each
configuration's median over the rounds and the new/old ratio. It also counts the torch operators
each step dispatches (over 40 steps with autoresets), a figure the machine's noise cannot move:
equal counts mean equal work.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import collections, json, sys, numpy as np, torch, gymnasium as gym
from torch.utils._python_dispatch import TorchDispatchMode
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_envs import COMBOS, rate
from offroad_env import OffroadEnv, OffroadVectorEnv
torch.set_num_threads(1)
seconds = float(sys.argv[2])


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


def ops(step):
    c = Count()
    with c:
        for _ in range(40):
            step()
    return c.n / 40


out, counts = {}, {}
for name, kw in COMBOS.items():
    for n in (1, 64, 1024, 4096):
        env = OffroadVectorEnv(num_envs=n, max_episode_steps=500, **kw)
        env.reset(seed=0)
        acts = torch.rand(n, 2, generator=torch.Generator().manual_seed(0)) * 2 - 1
        if seconds > 0:
            with torch.inference_mode():
                out[f"vector | {name} | {n}"] = rate(lambda: env.step(acts), n, seconds)
        short = OffroadVectorEnv(num_envs=n, max_episode_steps=20, **kw)
        short.reset(seed=0)
        counts[f"vector | {name} | {n}"] = ops(lambda: short.step(acts))
    single = gym.wrappers.TimeLimit(OffroadEnv(**kw), 500)
    single.reset(seed=0)
    a1 = np.array([0.5, -0.2], dtype=np.float32)
    def step1():
        _, _, term, trunc, _ = single.step(a1)
        if term or trunc:
            single.reset()
    if seconds > 0:
        with torch.inference_mode():
            out[f"single | {name} | 1"] = rate(step1, 1, seconds)
    # counted on a fresh env: after the timed loop, how many resets fall into the counted
    # steps depends on how far that loop ran (a machine-speed figure, not the work)
    single = gym.wrappers.TimeLimit(OffroadEnv(**kw), 20)
    single.reset(seed=0)
    counts[f"single | {name} | 1"] = ops(step1)
print(json.dumps({"rate": out, "ops": counts}))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--ops-only", action="store_true",
                   help="count the operators only (no timed windows; one round is enough)")
    args = p.parse_args(argv)
    runs = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in ("old", "new"):
            root = str(Path(getattr(args, side)).resolve())
            secs = 0.0 if args.ops_only else args.seconds
            res = subprocess.run([sys.executable, "-c", CHILD, root, str(secs)],
                                 capture_output=True, text=True, check=True)
            runs[side].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"# round {r + 1} {side} done", file=sys.stderr, flush=True)
    print("| env | model | N | old env-steps/s | new env-steps/s | new / old "
          "| old ops/step | new ops/step |")
    print("|---|---|---|---|---|---|---|---|")
    for key in runs["old"][0]["ops"]:
        if args.ops_only:
            rates = "| - | - | - "
        else:
            old = statistics.median(x["rate"][key] for x in runs["old"])
            new = statistics.median(x["rate"][key] for x in runs["new"])
            rates = f"| {old:,.0f} | {new:,.0f} | {new / old:.2f} "
        print(f"| {key} {rates}| {runs['old'][0]['ops'][key]:.1f} "
              f"| {runs['new'][0]['ops'][key]:.1f} |")


if __name__ == "__main__":
    main()
