"""Benchmark: the energy stability margin against the force-angle margin, as the physical model
calls them each step (the same K support points per env, float32, eager).

    python benchmarks/bench_margins.py [--n 4096] [--repeats 200] [--rounds 5] [--threads 1]

The inputs are a Husky's four support points on a tilted, rolling body (random per env); each
round times ``--repeats`` calls of each function in alternating blocks and prints the median
microseconds per call; then the medians over the rounds and their ratio (energy / force-angle).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offroad_env.physics.stability import edge_table, energy_margin, force_angle_margin  # noqa
from offroad_env.physics.vehicle import husky  # noqa: E402


def inputs(n: int, gen: torch.Generator):
    v = husky()
    K = v.num_wheels
    xy = torch.tensor(v.wheel_positions, dtype=torch.float32)
    pts = torch.cat([xy, torch.zeros(K, 1)], 1).expand(n, K, 3).clone()
    pts += 0.02 * torch.randn(n, K, 3, generator=gen)
    com = torch.tensor([v.com[0], 0.0, 0.2]) + 0.02 * torch.randn(n, 3, generator=gen)
    omega = 0.5 * torch.randn(n, 3, generator=gen)
    J = torch.diag(torch.tensor([1.5, 2.4, 3.6]))

    def about(a):
        return torch.einsum("nei,ij,nej->ne", a, J, a)
    return v, pts, com, omega, about


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    v, pts, com, omega, about = inputs(args.n, torch.Generator().manual_seed(0))
    table = edge_table(v, None)
    everyone = torch.ones(args.n, v.num_wheels, dtype=torch.bool)
    zero = torch.zeros_like(com)
    calls = {"force_angle": lambda: force_angle_margin(pts, everyone, com, zero, 9.81, table),
             "energy": lambda: energy_margin(pts, com, omega, about, v.mass, table, 9.81)}
    for f in calls.values():
        f()
    got = {k: [] for k in calls}
    for rnd in range(args.rounds):
        for name, f in calls.items():
            t = time.perf_counter()
            for _ in range(args.repeats):
                f()
            got[name].append(1e6 * (time.perf_counter() - t) / args.repeats)
        print(f"round {rnd}: " + ", ".join(f"{k} {v[-1]:.0f} us" for k, v in got.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    print(f"N = {args.n}, {args.threads} thread(s), medians: force-angle {med['force_angle']:.0f}"
          f" us, energy {med['energy']:.0f} us, energy / force-angle "
          f"{med['energy'] / med['force_angle']:.2f}")


if __name__ == "__main__":
    main()
