"""Peer benchmark: a Husky-like car on a MuJoCo height field, side by side with offroad-env.

    python benchmarks/bench_mujoco.py [--control-steps 2000] [--poses 50]

Needs ``mujoco`` (``pip install mujoco``). The height field is offroad-env's default
``OffroadNav-v1`` terrain (Perlin, 40 x 40 m at 0.1 m, 401^2 samples); the car has the Husky
preset's wheel base, track, wheel radius and masses (chassis box + four cylinder wheels on hinge
joints with velocity servos). Measured, one process, one thread:

1. **single env**: control steps per second at 50 Hz (10 MuJoCo steps of 2 ms per control step),
   setting the wheel-speed commands and reading the chassis pose each control step; next to it,
   ``OffroadEnv`` (``gym.make``, eager and compiled) steps per second at its own 20 Hz control;
2. **drop**: milliseconds per pose to settle the car dropped at a random (x, y, yaw) on the
   terrain from 0.5 m above it (until the chassis moves slower than 0.01 m/s and rad/s, or
   3 s simulated; the wheels creep on slopes for long after), next to ``rigid_contact`` at N = 1
   (the anchor of the ground-following issue).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gymnasium as gym  # noqa: E402

import offroad_env  # noqa: E402,F401  (registers the ids)
from offroad_env.physics.ground import rigid_contact  # noqa: E402
from offroad_env.sim.simulator import Simulator  # noqa: E402
from offroad_env.sim.config import make_config  # noqa: E402


def build_model(hm, vehicle):
    import mujoco

    H = hm[0].world_heights().double().numpy()
    zmin, zmax = float(H.min()), float(H.max())
    span = max(zmax - zmin, 1e-3)
    sx, sy = hm.size
    L, T, r = vehicle.wheel_base, vehicle.track_width, vehicle.wheel_radius
    wheel_mass = 2.637
    chassis_mass = vehicle.mass - 4 * wheel_mass
    wheels = ""
    for i, (wx, wy) in enumerate(((L, T / 2), (L, -T / 2), (0.0, T / 2), (0.0, -T / 2))):
        wheels += f"""
        <body name="w{i}" pos="{wx - L / 2} {wy} 0">
          <joint name="j{i}" type="hinge" axis="0 1 0" damping="0.05"/>
          <geom type="cylinder" size="{r} 0.05" euler="90 0 0" mass="{wheel_mass}"
                friction="1.0 0.005 0.0001"/>
        </body>"""
    actuators = "".join(f'<velocity joint="j{i}" kv="20" ctrlrange="-10 10"/>' for i in range(4))
    xml = f"""
<mujoco model="husky_on_hfield">
  <option timestep="0.002" integrator="implicitfast"/>
  <asset><hfield name="terrain" nrow="{hm.ny}" ncol="{hm.nx}"
                 size="{sx / 2} {sy / 2} {span} 0.1"/></asset>
  <worldbody>
    <geom type="hfield" hfield="terrain" pos="{hm.center[0]} {hm.center[1]} {zmin}"/>
    <body name="chassis" pos="0 0 {zmax + 1.0}">
      <freejoint/>
      <geom type="box" size="{L / 2 + 0.1} {T / 2 - 0.08} 0.1" pos="0 0 0.05"
            mass="{chassis_mass}"/>{wheels}
    </body>
  </worldbody>
  <actuator>{actuators}</actuator>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    model.hfield_data[:] = ((H - zmin) / span).reshape(-1)
    return model


def place(model, data, x, y, yaw, z):
    import mujoco

    mujoco.mj_resetData(model, data)
    data.qpos[0:3] = (x, y, z)
    data.qpos[3:7] = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
    mujoco.mj_forward(model, data)


def single_env_mujoco(model, control_steps: int, seed: int = 0) -> float:
    import mujoco

    data = mujoco.MjData(model)
    place(model, data, 0.0, 0.0, 0.0, 2.5)
    rng = np.random.default_rng(seed)
    substeps = int(round(0.02 / model.opt.timestep))  # 50 Hz control
    t0 = time.perf_counter()
    for _ in range(control_steps):
        left, right = rng.uniform(-1, 1, 2) * 6.0
        data.ctrl[:] = (left, right, left, right)
        for _ in range(substeps):
            mujoco.mj_step(model, data)
        _ = data.qpos[:7].copy()  # the pose an env would observe
    return control_steps / (time.perf_counter() - t0)


def single_env_offroad(steps: int, compile: bool) -> float:
    env = gym.make("offroad_env/OffroadNav-v1", compile=compile, max_episode_steps=10**9)
    env.reset(seed=0)
    a = np.array([0.5, 0.1], dtype=np.float32)
    for _ in range(50):  # warm-up (and compilation)
        env.step(a)
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(a)
    return steps / (time.perf_counter() - t0)


def drop_mujoco(model, poses, z_above: float = 0.3, max_time: float = 3.0, settle: float = 1e-2):
    import mujoco

    data = mujoco.MjData(model)
    times, steps_used = [], []
    for x, y, yaw, ground in poses:
        place(model, data, x, y, yaw, ground + z_above + 0.2)
        data.ctrl[:] = 0.0
        t0 = time.perf_counter()
        n = 0
        while n * model.opt.timestep < max_time:
            mujoco.mj_step(model, data)
            n += 1
            if n > 50 and np.abs(data.qvel[:6]).max() < settle:  # the chassis is at rest
                break
        times.append(time.perf_counter() - t0)
        steps_used.append(n)
    return float(np.median(times)) * 1e3, int(np.median(steps_used))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--control-steps", type=int, default=2000)
    p.add_argument("--poses", type=int, default=50)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    try:
        import mujoco
    except ImportError:
        sys.exit("bench_mujoco needs mujoco: pip install mujoco")
    torch.set_num_threads(args.threads)
    sim = Simulator(make_config("nav"), 1)
    hm, vehicle = sim.maps[0], sim.vehicle
    model = build_model(hm, vehicle)
    print(f"# {platform.machine()}, torch {torch.__version__}, mujoco {mujoco.__version__}, "
          f"{args.threads} thread(s)")
    print("| what | MuJoCo height field | offroad-env |")
    print("|---|---|---|")
    mj = single_env_mujoco(model, args.control_steps)
    eager = single_env_offroad(args.control_steps, compile=False)
    comp = single_env_offroad(args.control_steps, compile=True)
    print(f"| single env, steps/s (MuJoCo 50 Hz control = 10 x 2 ms; offroad 20 Hz) | "
          f"{mj:,.0f} | eager {eager:,.0f}, compiled {comp:,.0f} |")
    rng = np.random.default_rng(1)
    x = rng.uniform(-15, 15, args.poses)
    y = rng.uniform(-15, 15, args.poses)
    yaw = rng.uniform(-np.pi, np.pi, args.poses)
    ground = hm.height(torch.tensor(x, dtype=torch.float32),
                       torch.tensor(y, dtype=torch.float32)).double().numpy()
    ms, steps = drop_mujoco(model, list(zip(x, y, yaw, ground)))
    ts = []
    for i in range(args.poses):
        xi, yi, wi = (torch.tensor([v[i]], dtype=torch.float32) for v in (x, y, yaw))
        t0 = time.perf_counter()
        rigid_contact(vehicle, hm, xi, yi, wi)
        ts.append(time.perf_counter() - t0)
    print(f"| drop to rest, ms per pose (N = 1) | {ms:.2f} (median {steps} steps of 2 ms) | "
          f"rigid_contact plane {np.median(ts) * 1e3:.2f} |")
    X, Y, W = (torch.tensor(v, dtype=torch.float32) for v in (x, y, yaw))
    Xb, Yb, Wb = (v.repeat(65536 // args.poses + 1)[:65536] for v in (X, Y, W))
    t0 = time.perf_counter()
    rigid_contact(vehicle, hm, Xb, Yb, Wb)
    dt = time.perf_counter() - t0
    print(f"| drop to rest, ms per pose (batched) | {ms:.2f} (one pose at a time) | "
          f"rigid_contact plane at N = 65536: {dt / 65536 * 1e3:.4f} |")


if __name__ == "__main__":
    main()
