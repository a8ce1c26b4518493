"""The main job (``offroad-env demo`` / ``make demo``): the four-wheel seed's worked example,
then the batched environment.

1. The seed's terrain: smoothed peaks over 40 x 40 m at 0.2 m, written as a 16-bit Unreal PNG
   with its JSON sidecar, read back, previewed and summarised.
2. The seed's drive: a Husky on that map under Ackermann kinematics at 2 m/s with a steering
   rate of 0.5 sin(2 pi 0.15 t) rad/s for 30 s, placed on the terrain by ``four_wheel`` (the
   seed's block) and by ``rigid_contact``; the same summary the seed prints (duration, distance,
   max roll and pitch, z range), the trajectory as CSV and a picture of the path.
3. The environment: ``OffroadNav-v0`` as a vector env of 256 vehicles under a random policy;
   steps per second, episode ends by reason, and one rendered frame.
"""

from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

import terrain

from .dynamics import AckermannParams, ackermann_step
from .ground import four_wheel, rigid_contact
from .tasks import REASONS
from .vehicle import husky

SEED_SUMMARY = {"duration_s": 30.0, "distance_m": 62.1547, "max_roll_deg": 25.582,
                "max_pitch_deg": 23.542, "z_range_m": [-0.29073, 1.5317]}


def drive_seed_example(hm: terrain.HeightMap, dt: float = 0.01, t_end: float = 30.0):
    """Returns per-step arrays of the drive (both ground-following methods)."""
    v = husky()
    params = AckermannParams(wheel_base=v.wheel_base, max_steer=1.3, max_steer_rate=2.0)
    n = int(round(t_end / dt)) + 1
    f64 = torch.float64
    x = y = th = steer = torch.zeros(1, dtype=f64)
    speed = torch.full((1,), 2.0, dtype=f64)
    poses = []
    for k in range(n):
        poses.append((x.item(), y.item(), th.item()))
        rate = torch.full((1,), 0.5 * math.sin(2 * math.pi * 0.15 * k * dt), dtype=f64)
        x, y, th, steer = ackermann_step(params, x, y, th, steer, speed, rate, dt)
    P = torch.tensor(poses, dtype=f64)
    hm64 = hm.to(dtype=f64)
    fw = four_wheel(v, hm64, P[:, 0], P[:, 1], P[:, 2])
    rc = rigid_contact(v, hm64, P[:, 0], P[:, 1], P[:, 2])
    t = np.arange(n) * dt
    return t, P.numpy(), fw, rc


def summarise(t, P, res) -> dict:
    base = res.base_position.numpy()
    step = np.diff(base[:, :2], axis=0)  # as the seed: the path of base_link, not the axle
    return {"duration_s": float(t[-1]), "distance_m": float(np.hypot(*step.T).sum()),
            "max_roll_deg": float(np.degrees(np.abs(res.roll.numpy())).max()),
            "max_pitch_deg": float(np.degrees(np.abs(res.pitch.numpy())).max()),
            "z_range_m": [float(base[:, 2].min()), float(base[:, 2].max())],
            "off_map_steps": int(res.off_map.sum()), "unstable_steps": int((~res.stable).sum())}


def run(out: Path, seed: int = 0, envs: int = 256, steps: int = 200) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    # 1. terrain
    cfg = terrain.PeaksConfig()
    hm = terrain.make_heightmap(cfg, np.random.default_rng(seed), dtype=torch.float64)
    png = out / "terrain_heightmap.png"
    terrain.save(hm, png)
    loaded = terrain.load(png)
    terrain.save_preview(loaded, out / "terrain_preview.png")
    stats = terrain.statistics(loaded)
    (out / "terrain_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    report["terrain"] = stats
    # 2. the seed's drive
    t, P, fw, rc = drive_seed_example(loaded)
    report["drive_four_wheel"] = summarise(t, P, fw)
    report["drive_rigid_contact"] = summarise(t, P, rc)
    report["drive_seed_published"] = SEED_SUMMARY
    with open(out / "drive.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t", "x", "y", "yaw", "z_fw", "roll_fw", "pitch_fw", "z_rc", "roll_rc",
                    "pitch_rc"])
        for k in range(len(t)):
            w.writerow([f"{t[k]:.2f}", *(f"{v:.6f}" for v in P[k]),
                        f"{fw.base_position[k, 2]:.6f}", f"{fw.roll[k]:.6f}",
                        f"{fw.pitch[k]:.6f}", f"{rc.base_position[k, 2]:.6f}",
                        f"{rc.roll[k]:.6f}", f"{rc.pitch[k]:.6f}"])
    _path_picture(loaded, P, out / "drive_path.png")
    # 3. the environment
    from .vector_env import OffroadVectorEnv
    env = OffroadVectorEnv(num_envs=envs, max_episode_steps=100, render_mode="rgb_array")
    env.reset(seed=seed)
    g = torch.Generator().manual_seed(seed)
    ends = {name: 0 for name in REASONS.values() if name != "none"}
    returns = torch.zeros(envs)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for _ in range(steps):
            a = torch.rand(envs, 2, generator=g) * 2 - 1
            _, r, term, trunc, info = env.step(a)
            returns += r
            done = info["_end_reason"]
            for code in info["end_reason"][done].tolist():
                ends[REASONS[code]] += 1
    dt = time.perf_counter() - t0
    from PIL import Image
    Image.fromarray(env.render()[0]).save(out / "env_frame.png")
    report["env"] = {"num_envs": envs, "steps": steps, "env_steps_per_s": envs * steps / dt,
                     "episode_ends": ends, "mean_return_per_env": float(returns.mean())}
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _path_picture(hm, P, path):
    from PIL import Image, ImageDraw

    img = Image.fromarray(terrain.preview_image(hm))
    W, H = img.size
    x0, x1, y0, y1 = hm.bounds
    pts = [((x - x0) / (x1 - x0) * (W - 1), (y1 - y) / (y1 - y0) * (H - 1)) for x, y, _ in P]
    img = img.resize((W * 3, H * 3))
    d = ImageDraw.Draw(img)
    d.line([(3 * a, 3 * b) for a, b in pts], fill=(255, 255, 255), width=2)
    img.save(path)


def print_report(report: dict, out: Path) -> None:
    s = report["terrain"]
    print(f"Terrain: {s['samples'][0]} x {s['samples'][1]} samples, {s['extent_m'][0]:g} x "
          f"{s['extent_m'][1]:g} m, heights [{s['height_min_m']:.2f}, {s['height_max_m']:.2f}] m")
    print("\nThe seed's drive (Husky, Ackermann 2 m/s, steering rate 0.5 sin(2 pi 0.15 t)):")
    print(f"  {'':22s}{'four_wheel':>12s}{'rigid_contact':>15s}{'seed published':>16s}")
    fw, rc, sd = (report["drive_four_wheel"], report["drive_rigid_contact"],
                  report["drive_seed_published"])
    for key, label in (("duration_s", "duration [s]"), ("distance_m", "distance [m]"),
                       ("max_roll_deg", "max roll [deg]"), ("max_pitch_deg", "max pitch [deg]")):
        print(f"  {label:22s}{fw[key]:12.2f}{rc[key]:15.2f}{sd[key]:16.2f}")
    print(f"  {'z range [m]':22s}{fw['z_range_m'][0]:6.2f}..{fw['z_range_m'][1]:<5.2f}"
          f"{rc['z_range_m'][0]:9.2f}..{rc['z_range_m'][1]:<5.2f}"
          f"{sd['z_range_m'][0]:10.2f}..{sd['z_range_m'][1]:.2f}")
    print(f"  {'steps off the map':22s}{fw['off_map_steps']:12d}{rc['off_map_steps']:15d}")
    print("  (the seed's peaks were smoothed by an unpublished filter, and its steering limit is not "
          "given: the terrain matches its size and height range, not every sample)")
    e = report["env"]
    print(f"\nOffroadNav-v0, {e['num_envs']} vehicles x {e['steps']} steps, random policy: "
          f"{e['env_steps_per_s']:,.0f} env-steps/s; episode ends: {e['episode_ends']}")
    print(f"\nWrote {out}/: terrain_heightmap.png + .json, terrain_preview.png, "
          "terrain_stats.json, drive.csv, drive_path.png, env_frame.png, report.json")
