"""Benchmark: the kinematic env against a lean step (issue 46), side by side in one process.

    python benchmarks/bench_lean_step.py [--num-envs 4096] [--threads 2] [--seconds 3]
        [--rounds 3] [--no-compile]

The **lean step** is the kinematic env's physics written as one bare function, with no env
around it: the unicycle's Euler step, the four-wheel placement (the rectangle's corners projected
straight down onto a bilinear map stack, pitch and roll from the averaged axle and side heights,
the rear-axle origin lifted by the wheel radius along the body's z) and, in its second form,
the static force-angle stability margin over the rectangle's four support edges (the default
tip rule's quantity: Papadopoulos and Rey, the smallest angle between gravity's pull at the
centre of mass and the normal from an edge to it). It keeps the state as three ``(N,)``
tensors and reads one flat height tensor; it computes no observation, reward, IMU, termination
or reset.

The **env** is ``OffroadVectorEnv`` on ``OffroadNav-v1``'s defaults (unicycle, four-wheel
ground following, the force-angle tip rule, every observation term, rewards, autoreset), on the
same maps (the env's own stack, read by both).

Each is timed eager and ``torch.compile``'d (the env with ``compile=True``, the lean step with
``torch.compile(fn)``), as medians of ``--rounds`` blocks of about ``--seconds`` each, in the
order lean, env, lean, env, ... so that a busy machine slows both alike. Prints env-steps/s and
the env's share of the lean step's rate (issue 46's goal: at least 0.5 x compiled and 0.35 x
eager, both with the margin).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offroad_env import OffroadVectorEnv  # noqa: E402


def make_lean(env, margin: bool):
    """The lean step over ``env``'s maps and vehicle: ``step(x, y, yaw, v, w) -> (x, y, yaw,
    z, roll, pitch[, margin])``, every tensor ``(N,)``; ``v`` [m/s], ``w`` [rad/s]."""
    sim = env.sim
    maps, veh = sim.maps, sim.vehicle
    g = maps._grid
    ny, nx = g.ny, g.nx
    flat = maps._table  # (M * ny * nx,) heights, each map's offset added
    x0, y0 = g.x0, g.y0
    inv_x, inv_y = 1.0 / g.res_x, 1.0 / g.res_y
    L, W, r, dt = veh.wheel_base, veh.track_width, veh.wheel_radius, sim.cfg.dt
    cx, cy, cz = veh.com
    # corners FL, FR, RL, RR in the rear-axle frame
    corners = ((L, 0.5 * W), (L, -0.5 * W), (0.0, 0.5 * W), (0.0, -0.5 * W))

    def height(px, py, base):
        u = ((px - x0) * inv_x).clamp(0.0, nx - 1.0)
        v = ((py - y0) * inv_y).clamp(0.0, ny - 1.0)
        i = u.floor().clamp_max(nx - 2.0)
        j = v.floor().clamp_max(ny - 2.0)
        fx, fy = u - i, v - j
        k = base + j.to(torch.int64) * nx + i.to(torch.int64)
        h00, h10 = flat[k], flat[k + 1]
        h01, h11 = flat[k + nx], flat[k + nx + 1]
        return (1 - fy) * ((1 - fx) * h00 + fx * h10) + fy * ((1 - fx) * h01 + fx * h11)

    def step(x, y, yaw, v, w, map_index):
        x = x + v * torch.cos(yaw) * dt
        y = y + v * torch.sin(yaw) * dt
        yaw = torch.remainder(yaw + w * dt + torch.pi, 2 * torch.pi) - torch.pi
        c, s = torch.cos(yaw), torch.sin(yaw)
        base = map_index * (ny * nx)
        hs = [height(x + c * bx - s * by, y + s * bx + c * by, base) for bx, by in corners]
        z_fl, z_fr, z_rl, z_rr = hs
        pitch = torch.atan((0.5 * (z_rl + z_rr) - 0.5 * (z_fl + z_fr)) / L)
        roll = torch.atan((0.5 * (z_fl + z_rl) - 0.5 * (z_fr + z_rr)) / W)
        cp, sp, cr, sr = torch.cos(pitch), torch.sin(pitch), torch.cos(roll), torch.sin(roll)
        z = 0.5 * (z_rl + z_rr) + r * cp * cr
        if not margin:
            return x, y, yaw, z, roll, pitch
        # the centre of mass (body offset rotated by Rz(yaw) Ry(pitch) Rx(roll)) above the
        # rear contact midpoint, and the support points under the corners (world)
        bx = cp * cx + sp * sr * cy + sp * cr * (cz + r)
        by = cr * cy - sr * (cz + r)
        bz = -sp * cx + cp * sr * cy + cp * cr * (cz + r)
        pcx, pcy, pcz = x + c * bx - s * by, y + s * bx + c * by, 0.5 * (z_rl + z_rr) + bz
        pts = [(x + c * ax - s * ay, y + s * ax + c * ay, h)
               for (ax, ay), h in zip(corners, hs)]
        best = None
        for a_, b_ in ((0, 1), (1, 3), (3, 2), (2, 0)):  # FL-FR-RR-RL around the rectangle
            (ax, ay, az), (qx, qy, qz) = pts[a_], pts[b_]
            ex, ey, ez = qx - ax, qy - ay, qz - az
            n = torch.rsqrt(ex * ex + ey * ey + ez * ez)
            ex, ey, ez = ex * n, ey * n, ez * n
            lx, ly, lz = qx - pcx, qy - pcy, qz - pcz  # to the edge, less its axis part
            d = lx * ex + ly * ey + lz * ez
            lx, ly, lz = lx - d * ex, ly - d * ey, lz - d * ez
            fx_, fy_, fz_ = -ez * ex, -ez * ey, -1.0 - (-ez) * ez  # gravity, less its axis part
            dot = fx_ * lx + fy_ * ly + fz_ * lz
            nl = torch.rsqrt(lx * lx + ly * ly + lz * lz)
            nf = torch.rsqrt(fx_ * fx_ + fy_ * fy_ + fz_ * fz_)
            ang = torch.acos((dot * nl * nf).clamp(-1.0, 1.0))
            best = ang if best is None else torch.minimum(best, ang)
        return x, y, yaw, z, roll, pitch, best

    return step


def rate(fn, n, seconds):
    fn()
    t0, k = time.perf_counter(), 0
    while k < 3 or time.perf_counter() - t0 < seconds:
        fn()
        k += 1
    return k * n / (time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-compile", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    n = a.num_envs
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {a.threads} threads, torch "
          f"{torch.__version__}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}"
          f", N = {n}")
    modes = [False] if a.no_compile else [False, True]
    for compiled in modes:
        env = OffroadVectorEnv(num_envs=n, max_episode_steps=500, compile=compiled)
        env.reset(seed=0)
        gen = torch.Generator().manual_seed(0)
        acts = torch.rand(n, 2, generator=gen) * 2 - 1
        st = env.sim.state
        state = [st.x.clone(), st.y.clone(), st.yaw.clone()]
        mi = st.map_index.clone()
        v = acts[:, 0] * env.sim.cfg.max_speed
        w = acts[:, 1] * env.sim.cfg.max_yaw_rate
        leans = {}
        for margin in (False, True):
            f = make_lean(env, margin)
            leans[margin] = torch.compile(f) if compiled else f

        def run_lean(margin):
            out = leans[margin](*state, v, w, mi)
            state[:] = out[:3]

        res = {"env": [], False: [], True: []}
        with torch.inference_mode():
            for _ in range(a.rounds):
                for margin in (False, True):
                    res[margin].append(rate(lambda: run_lean(margin), n, a.seconds))
                res["env"].append(rate(lambda: env.step(acts), n, a.seconds))
        med = {k: statistics.median(v_) for k, v_ in res.items()}
        tag = "compiled" if compiled else "eager"
        print(f"| {tag} | lean step | {med[False]:,.0f} |")
        print(f"| {tag} | lean step + force-angle margin | {med[True]:,.0f} |")
        print(f"| {tag} | OffroadVectorEnv (OffroadNav-v1 defaults) | {med['env']:,.0f} | "
              f"{med['env'] / med[True]:.2f} x the lean step with margin, "
              f"{med['env'] / med[False]:.2f} x without |", flush=True)


if __name__ == "__main__":
    main()
