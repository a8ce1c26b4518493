"""Soil on the physical model (issue 25): what it costs in the step, and what it changes in
climbing.

    python benchmarks/bench_soil.py [--n 4096] [--repeats 5] [--climb]

Speed: the rigid_body env step at N envs on flat ground, hard (mu 0.8) against dry sand, eager
(median of ``repeats`` timings of 20 steps after 5 warm-up steps; 1 torch thread each, the
ratio in one run), and on a material map of dry-sand and hard stripes 4 m wide (each wheel's
soil looked up, both laws computed). ``--climb``: the Husky from rest up planes of rising slope at a commanded 0.6
m/s for 3 s: its speed at the end, slip and rear rut depth, on hard ground, dry sand and sandy
loam.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import torch

import terrain
from offroad_env import OffroadVectorEnv
from offroad_env.physics.rigid_params import RigidBodyParams

SOILS = (None, "dry_sand", "sandy_loam")


def _env(n, soil, heightmap=None, **kw):
    if heightmap is None:
        kw["terrain"] = terrain.FlatConfig(size=(80.0, 80.0), resolution=(0.1, 0.1))
        kw["num_maps"] = 1
    else:
        kw["heightmap"] = heightmap
    return OffroadVectorEnv(num_envs=n, dynamics="rigid_body", task="velocity",
                            dynamics_params=RigidBodyParams(soil=soil), **kw)


def _striped_map():
    """80 x 80 m flat at 0.1 m, dry sand on every other 4 m stripe."""
    x = np.arange(801) * 0.1
    sand = np.tile(((x // 4.0) % 2 == 1).astype(int), (801, 1))
    return terrain.HeightMap(np.zeros((801, 801)), 0.1, materials=sand,
                             material_names=("hard", "dry_sand"))


def step_time(n: int, soil, repeats: int) -> float:
    env = _env(n, None, _striped_map()) if soil == "map" else _env(n, soil)
    env.reset(seed=0)
    a = torch.full((n, 2), 0.5)
    with torch.inference_mode():
        for _ in range(5):
            env.step(a)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(20):
                env.step(a)
            times.append((time.perf_counter() - t0) / 20)
    return statistics.median(times)


def climb(deg: float, soil):
    x = np.arange(0.0, 40.01, 0.1)
    h = np.tile(np.tan(math.radians(deg)) * (x - 20.0), (121, 1))
    env = _env(1, soil, terrain.HeightMap(h, 0.1, center=(0.0, 0.0)), dtype=torch.float64)
    env.reset(seed=0, options={"start_pose": torch.tensor([[-2.0, 0.0, 0.0]],
                                                           dtype=torch.float64)})
    st = env.unwrapped.sim.state
    with torch.inference_mode():
        for _ in range(20):
            env.step(torch.zeros(1, 2))
        for _ in range(150):
            env.step(torch.tensor([[0.6, 0.6]]))
    vx = float(env.unwrapped.state_view().body_velocity[0, 0])
    rim = float(st.wheel_omega[0, 0]) * 0.1651
    slip = 1.0 - vx / rim if rim > 1e-6 else 0.0
    rut = None if soil is None else float(st.wheel_sinkage[0, 0])
    return vx, slip, rut


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--climb", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(1)
    t = {s: step_time(a.n, s, a.repeats) for s in (None, "dry_sand", "map")}
    print(f"rigid_body step, N = {a.n}, eager, 1 thread: hard ground {t[None] * 1e3:.1f} ms, "
          f"dry sand {t['dry_sand'] * 1e3:.1f} ms: {t['dry_sand'] / t[None]:.2f} x; material map "
          f"{t['map'] * 1e3:.1f} ms: {t['map'] / t[None]:.2f} x")
    if a.climb:
        print("| slope [deg] | " + " | ".join(f"{s or 'hard, mu 0.8'}: v [m/s] / slip / rut [cm]"
                                             for s in SOILS) + " |")
        print("|---|" + "---|" * len(SOILS))
        for deg in range(10, 42, 3):
            cells = []
            for s in SOILS:
                vx, slip, rut = climb(deg, s)
                cells.append(f"{vx:.2f} / {slip:.2f} / " + ("-" if rut is None
                                                           else f"{100 * rut:.1f}"))
            print(f"| {deg} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
