"""Benchmark: the torch operators one step dispatches, per configuration of :mod:`bench_envs`
(vector env at N = 64 and 4096, eager, 40 steps of 20-step episodes with autoresets). A figure
the machine's noise cannot move: equal counts mean equal work.

    python benchmarks/bench_ops.py [CHECKOUT ...]     # default: this checkout
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from bench_envs import COMBOS
from offroad_env import OffroadVectorEnv
torch.set_num_threads(1)


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


for name, kw in COMBOS.items():
    for n in (64, 4096):
        env = OffroadVectorEnv(num_envs=n, max_episode_steps=20, **kw)
        env.reset(seed=0)
        acts = torch.rand(n, 2, generator=torch.Generator().manual_seed(0)) * 2 - 1
        c = Count()
        with c:
            for _ in range(40):
                env.step(acts)
        print(f"| {name} | {n} | {c.n / 40:.1f} |")
"""


def main(argv=None) -> int:
    roots = (argv if argv is not None else sys.argv[1:]) or [str(Path(__file__).parents[1])]
    for root in roots:
        print(f"\n{root}\n\n| model | N | ops/step |\n|---|---|---|", flush=True)
        subprocess.run([sys.executable, "-c", CHILD, str(Path(root).resolve())], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
