"""Benchmark: ground-following poses per second.

    python benchmarks/bench_ground.py [--repeats 10] [--quick] [--compile]

Both methods (``four_wheel``; ``rigid_contact`` with the plane fast path, and the paper's drop
at N = 1) with 4 wheels (Husky) and 8 wheels (the paper's rover variant), at N = 1, 4096 and
65536 poses per call, float32, on a 40 x 40 m Perlin terrain at 0.05 m (801^2), poses uniform over
the map. Prints medians; copy the table to BENCHMARKS.md with the machine noted.
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
import terrain  # noqa: E402
from offroad_env.physics.ground import four_wheel, rigid_contact  # noqa: E402
from offroad_env.physics.vehicle import eight_wheel_rover, husky  # noqa: E402


def bench_map() -> terrain.HeightMap:
    """The benchmark terrain: 40 x 40 m of Perlin noise at 0.05 m (801^2), float32."""
    return terrain.make_heightmap(terrain.PerlinConfig(size=(40.0, 40.0), resolution=0.05,
                                                       octaves=4, frequency=0.1, amplitude=1.0), 0)


def bench_poses(rng: np.random.Generator, n: int):
    """``n`` planar poses uniform over the map (2 m from its border), float32."""
    x = torch.from_numpy(rng.uniform(-18, 18, n).astype(np.float32))
    y = torch.from_numpy(rng.uniform(-18, 18, n).astype(np.float32))
    yaw = torch.from_numpy(rng.uniform(-np.pi, np.pi, n).astype(np.float32))
    return x, y, yaw


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the plane and four-wheel calls (N = 4096 and 65536); "
                        "the pose only, as a caller that does not read the loads")
    args = p.parse_args(argv)
    if args.compile:
        return compiled(args)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}")
    print("| method | wheels | N | threads | median ms/call | poses/s |")
    print("|---|---|---|---|---|---|")
    hm = bench_map()
    rng = np.random.default_rng(0)
    sizes = [1, 4096] if args.quick else [1, 4096, 65536]
    for vehicle in (husky(), eight_wheel_rover()):
        K = vehicle.num_wheels
        for n in sizes:
            x, y, yaw = bench_poses(rng, n)
            cases = [("four_wheel", lambda: four_wheel(vehicle, hm, x, y, yaw)),
                     ("rigid_contact plane", lambda: rigid_contact(vehicle, hm, x, y, yaw))]
            if n == 1:  # the reference iteration: thousands of small SVDs, far too slow at scale
                cases.append(("rigid_contact drop (paper)",
                              lambda: rigid_contact(vehicle, hm, x, y, yaw, method="drop")))
            for name, fn in cases:
                for t in args.threads:
                    torch.set_num_threads(t)
                    reps = args.repeats if "drop" not in name else max(1, args.repeats // 5)
                    with torch.inference_mode():
                        dt = median_time(fn, reps)
                    print(f"| {name} | {K} | {n} | {t} | {dt * 1e3:.3f} | {n / dt:,.0f} |",
                          flush=True)


def compiled(args):
    """Compiled calls returning what a pose-only caller reads (pose, base pose, flags); the
    per-wheel loads are computed on first access and are not read here."""
    torch._dynamo.config.recompile_limit = 64
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, compiled")
    print("| method | wheels | N | threads | median ms/call | poses/s |")
    print("|---|---|---|---|---|---|")
    hm = bench_map()
    rng = np.random.default_rng(0)
    for vehicle in (husky(),):
        for n in (4096, 65536):
            x, y, yaw = bench_poses(rng, n)
            for name, fn in (("four_wheel", four_wheel), ("rigid_contact plane", rigid_contact)):
                def pose(a, b, c, fn=fn):
                    r = fn(vehicle, hm, a, b, c)
                    return r.position, r.ypr, r.base_position, r.hole, r.off_map, r.converged
                torch._dynamo.reset()
                cf = torch.compile(pose, dynamic=False)
                for t in args.threads:
                    torch.set_num_threads(t)
                    with torch.inference_mode():
                        dt = median_time(lambda: cf(x, y, yaw), args.repeats, warmup=2)
                    print(f"| {name} compiled | {vehicle.num_wheels} | {n} | {t} | "
                          f"{dt * 1e3:.3f} | {n / dt:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
