"""Benchmark and stability sweep of the dynamics models.

    python benchmarks/bench_dynamics.py [--n 4096] [--repeats 20]

1. Steps per second at N environments (float32, 1 and 2 threads): unicycle, Ackermann, and
   skid-steer with slip (4 wheels, one substep, hard and soft ground).
2. Largest stable step: a Husky accelerating and turning for 4 s (left wheels 12 N m, right
   6 N m, hard ground, mu 0.8) at steps from 0.1 ms to 50 ms, compared with the 0.1 ms run: the
   run is called stable when the tangential force never chatters between the friction limits
   (force std over the last second within 2x the reference) and the final speed and yaw rate
   are within 5 % of the reference.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_time  # noqa: E402
from offroad_env.physics.dynamics import (AckermannParams, SkidSteerParams, SkidSteerState,  # noqa: E402
                                  ackermann_step, skid_steer_step, unicycle_step)
from offroad_env.physics.vehicle import husky  # noqa: E402


def throughput(n, repeats):
    v = husky()
    x = y = th = torch.zeros(n)
    vel = torch.rand(n)
    om = torch.rand(n) - 0.5
    steer = torch.zeros(n)
    ap = AckermannParams()
    s = SkidSteerState.zeros(n, 4)
    fz = torch.full((n, 4), v.mass * 9.81 / 4)
    tq = torch.rand(n, 4) * 5
    z = torch.zeros(n)
    cases = [
        ("unicycle", lambda: unicycle_step(x, y, th, vel, om, 0.02)),
        ("ackermann", lambda: ackermann_step(ap, x, y, th, steer, vel, om, 0.02)),
        ("skid-steer hard (4 wheels, 1 substep)",
         lambda: skid_steer_step(v, SkidSteerParams(), s, tq, fz, z, z, 0.02)),
        ("skid-steer soft (4 wheels, 1 substep)",
         lambda: skid_steer_step(v, SkidSteerParams(soil="soft"), s, tq, fz, z, z, 0.02)),
    ]
    print("| model | N | threads | median us/step | env-steps/s |")
    print("|---|---|---|---|---|")
    for name, fn in cases:
        for t in (1, 2):
            torch.set_num_threads(t)
            with torch.inference_mode():
                dt = median_time(fn, repeats)
            print(f"| {name} | {n} | {t} | {dt * 1e6:.0f} | {n / dt / 1e6:.2f} M |", flush=True)


def run(dt, limiter=True, t_end=4.0):
    v = husky()
    p = SkidSteerParams(slip_limiter=limiter)
    s = SkidSteerState.zeros(1, 4, dtype=torch.float64)
    fz = torch.full((1, 4), v.mass * 9.81 / 4, dtype=torch.float64)
    z = torch.zeros(1, dtype=torch.float64)
    tq = torch.tensor([[12.0, 6.0, 12.0, 6.0]], dtype=torch.float64)  # FL, FR, RL, RR
    n = int(round(t_end / dt))
    fx = []
    for i in range(n):
        s, info = skid_steer_step(v, p, s, tq, fz, z, z, dt)
        if i * dt >= t_end - 1.0:
            fx.append(info["fx"][0, 0].item())
    return s, torch.tensor(fx).std().item()


def stability():
    ref, ref_std = run(1e-4)
    print("\n| step [ms] | slip limiter | final vx [m/s] | final yaw rate [rad/s] | force std [N] | "
          "stable |")
    print("|---|---|---|---|---|---|")
    for limiter in (True, False):
        for dt in (1e-4, 1e-3, 5e-3, 1e-2, 2e-2, 5e-2):
            s, std = run(dt, limiter)
            ok = (std <= 2 * ref_std + 1e-6
                  and abs(s.vx.item() - ref.vx.item()) <= 0.05 * abs(ref.vx.item())
                  and abs(s.yaw_rate.item() - ref.yaw_rate.item())
                  <= 0.05 * abs(ref.yaw_rate.item()) + 1e-3)
            print(f"| {dt * 1e3:g} | {limiter} | {s.vx.item():.3f} | {s.yaw_rate.item():.3f} | "
                  f"{std:.2f} | {'yes' if ok else 'no'} |", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args(argv)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}")
    throughput(args.n, args.repeats)
    torch.set_num_threads(1)
    stability()


if __name__ == "__main__":
    main()
