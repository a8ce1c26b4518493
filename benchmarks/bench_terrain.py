"""Benchmark: batched HeightMap.height queries per second.

    python benchmarks/bench_terrain.py [--repeats 30] [--quick]

Queries of 4 x P points (four wheels of P environments) on a random map of 1024^2 and 4096^2
samples, float32, bilinear and triangles, 1 and 2 intra-op threads, eager and under
``torch.compile`` (how a training loop that compiles its step sees it). Also the floor: a bare
``index_select`` of the same number of taps (4 per point) from the same map. Query points are
uniform over the map (the worst case for caches). Prints the median over repeats; copy the table
into BENCHMARKS.md with the machine noted.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_time  # noqa: E402
from terrain import HeightMap  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--quick", action="store_true", help="only the 1024^2 map and 1 thread")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile column")
    args = p.parse_args(argv)

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"torch {torch.__version__}, python {platform.python_version()}")
    print("| map | points | interpolation | threads | eager ms/call | eager M queries/s | "
          "compiled M queries/s | bare gather M taps/s |")
    print("|---|---|---|---|---|---|---|---|")
    torch._dynamo.config.recompile_limit = 64  # each thread count is a recompile
    rng = np.random.default_rng(0)
    sizes = [1024] if args.quick else [1024, 4096]
    threads = [1] if args.quick else [1, 2]
    for n in sizes:
        heights = torch.from_numpy(rng.standard_normal((n, n), dtype=np.float32))
        for points in (4 * 4096, 4 * 65536):
            x = torch.from_numpy(rng.uniform(-0.5 * n + 1, 0.5 * n - 1, points).astype(np.float32))
            y = torch.from_numpy(rng.uniform(-0.5 * n + 1, 0.5 * n - 1, points).astype(np.float32))
            idx = torch.from_numpy(rng.integers(0, n * n, 4 * points))
            flat = heights.reshape(-1)
            for interp in ("bilinear", "triangles"):
                hm = HeightMap(heights, 1.0, interpolation=interp)
                torch._dynamo.reset()  # one compiled kernel per map; drop the previous ones
                compiled = None if args.no_compile else torch.compile(
                    hm.height, dynamic=False, fullgraph=True)
                for t in threads:
                    torch.set_num_threads(t)
                    with torch.inference_mode():
                        dt = median_time(lambda: hm.height(x, y), args.repeats, warmup=3)
                        dc = (median_time(lambda: compiled(x, y), args.repeats, warmup=3)
                              if compiled else float("nan"))
                        dg = median_time(lambda: torch.index_select(flat, 0, idx), args.repeats, warmup=3)
                    print(f"| {n}^2 | 4 x {points // 4} | {interp} | {t} | {dt * 1e3:.3f} | "
                          f"{points / dt / 1e6:.1f} | {points / dc / 1e6:.1f} | "
                          f"{4 * points / dg / 1e6:.0f} |", flush=True)


if __name__ == "__main__":
    main()
