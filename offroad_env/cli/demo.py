"""The main job (``offroad-env demo`` / ``make demo``): the four-wheel seed's worked example,
then the batched environment.

1. The terrain: by default the seed's example terrain exactly (``peaks(201)`` smoothed by
   MATLAB's ``imgaussfilt(., 3)`` and multiplied by 0.4, over 40 x 40 m at 0.2 m), written as a
   16-bit Unreal PNG with zScale 1 m and its JSON sidecar, read back, previewed and summarised
   (``--terrain`` picks another generator or a map file).
2. The seed's drive: a Husky from the origin, heading +x, at 2 m/s with a steering rate of
   0.5 sin(2 pi 0.15 t) rad/s, the angle held at the Ackermann block's default limit pi/4, for
   30 s logged every 10 ms, integrated exactly (``AckermannParams(integrator="exact")``), run
   through the simulator (so the pose,
   the IMU and the contact are the product's own), placed by the chosen ground-following method
   and, for comparison, by the other one; the seed's summary (duration, distance, max roll and
   pitch, z range), a CSV log (time, translation, rotation angles, IMU), the seed's plots
   (elevation, roll and pitch, yaw, the 3-D terrain with the path, a top-down map) and an
   animation of the drive (``drive.gif``, and ``drive.mp4`` with an ffmpeg writer).
3. The environment: ``OffroadNav-v1``'s task as a vector env of 256 vehicles under a random
   policy, on the same map with the same vehicle, model and ground following as the drive;
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

from offroad_env.physics.dynamics import AckermannParams, UnicycleParams
from offroad_env.sim.config import GROUND_METHODS, SimConfig
from offroad_env.physics.ground import place
from offroad_env.physics.models import model_class
from offroad_env.physics.models.ground_following import GroundFollowing
from offroad_env.sim.simulator import Simulator
from offroad_env.task.task import EndReason
from offroad_env.physics.vehicle import preset

SEED_SUMMARY = {"duration_s": 30.0, "distance_m": 62.1547, "max_roll_deg": 25.582,
                "max_pitch_deg": 23.542, "z_range_m": [-0.29073, 1.5317]}

#: columns of the drive log (``drive.csv``): base_link translation [m], ZYX angles [rad],
#: rear-axle height [m], IMU specific force [m/s^2] and angular rate [rad/s] in base_link
LOG_COLUMNS = ("t", "x", "y", "z", "yaw", "pitch", "roll", "axle_z", "accel_x", "accel_y",
               "accel_z", "gyro_x", "gyro_y", "gyro_z")


#: the Ackermann Kinematic Model block's default maximum steering angle [rad]
SEED_MAX_STEER = math.pi / 4


def seed_steering(t: np.ndarray, amplitude: float = 0.5, freq: float = 0.15,
                  max_steer: float = SEED_MAX_STEER) -> np.ndarray:
    """The seed's steering angle [rad] at times ``t`` (increasing, from 0): the integral of the
    rate ``amplitude sin(2 pi freq t)`` [rad/s], held at ``+-max_steer`` until the rate changes
    sign (a saturated integrator without wind-up). Exact: within each half period the rate
    keeps its sign, so the angle there is the clipped antiderivative
    ``clip(d_s + F(t) - F(t_s))``, ``F(t) = amplitude (1 - cos(2 pi freq t)) / (2 pi freq)``."""
    w = 2 * math.pi * freq
    F = lambda tt: amplitude * (1.0 - np.cos(w * tt)) / w  # noqa: E731
    half = 0.5 / freq
    out = np.empty_like(t, dtype=float)
    d_s = 0.0
    for m in range(int(math.ceil(t[-1] / half)) + 1):
        t_s, t_e = m * half, (m + 1) * half
        sel = (t >= t_s) & (t <= t_e)
        out[sel] = np.clip(d_s + F(t[sel]) - F(t_s), -max_steer, max_steer)
        d_s = float(np.clip(d_s + F(t_e) - F(t_s), -max_steer, max_steer))
    return out


def seed_commands(dt: float, t_end: float, wheel_base: float, speed: float = 2.0,
                  max_steer: float = SEED_MAX_STEER):
    """The seed's open-loop drive as ``(t, v, steer_rate, steer, yaw_rate)`` arrays: constant
    speed, the steering angle of :func:`seed_steering` at the sample times, the steering rate of
    each step the angle's change over it divided by ``dt`` (so a rate held over the step lands
    on the continuous angle at every sample), and the Ackermann yaw rate ``v tan(steer) / L``."""
    n = int(round(t_end / dt)) + 1
    t = np.arange(n) * dt
    steer = seed_steering(t, max_steer=max_steer)
    rate = np.append(np.diff(steer) / dt, 0.0)
    v = np.full(n, speed)
    return t, v, rate, steer, v * np.tan(steer) / wheel_base


def drive(hm: terrain.HeightMap, vehicle: str = "husky", dynamics: str = "ackermann",
          ground: str = "four_wheel", dt: float = 0.01, t_end: float = 30.0,
          speed: float = 2.0, start: tuple[float, float, float] | None = None,
          max_substep: float | None = None) -> dict:
    """Drive the seed's manoeuvre through :class:`Simulator` (N = 1, float64) and log it.

    ``start``: the world rear-axle pose ``(x, y, yaw)`` [m, m, rad] to start from; by default
    the map's centre, heading +x (the seed's origin on its map). A start off the map raises
    ValueError naming it and the map's bounds. Everything logged is in world coordinates
    (the simulator's frame is moved back by its origin). ``max_substep``: the physical
    model's (``RigidBodyParams.max_substep``; None: its default).

    The commands are mapped per dynamics model: Ackermann gets the speed and steering rate
    (the seed's input); unicycle the speed and the Ackermann yaw rate; skid-steer the left and
    right wheel speeds of that yaw rate. Returns ``{column: (T,) array}`` of :data:`LOG_COLUMNS`
    plus ``off_map`` and ``stable`` flags.
    """
    veh = preset(vehicle)
    t, v, rate, steer, w = seed_commands(dt, t_end, veh.wheel_base, speed)
    # the seed integrates its model accurately: the kinematic models' exact integrator
    params = {"ackermann": AckermannParams(wheel_base=veh.wheel_base, max_steer=SEED_MAX_STEER,
                                           max_steer_rate=2.0, integrator="exact"),
              "unicycle": UnicycleParams(integrator="exact")}.get(dynamics)
    if max_substep is not None:
        params = _with_max_substep(dynamics, max_substep)
    cfg = SimConfig(vehicle=vehicle, dt=dt, dynamics=dynamics, ground=ground, heightmap=hm,
                    max_speed=speed, max_yaw_rate=max(1.0, float(np.abs(w).max())),
                    dynamics_params=params,
                    num_maps=1)  # the drive ignores the task's goal and terminations
    sim = Simulator(cfg, 1, dtype=torch.float64)
    if start is None:
        start = (*hm.center, 0.0)
    sim.reset(torch.ones(1, dtype=torch.bool), torch.tensor([start], dtype=torch.float64))
    ox, oy, oz = sim.origin
    if dynamics == "ackermann":
        acts = np.stack((v / speed, rate / 2.0), 1)
    elif dynamics == "unicycle":
        acts = np.stack((v / speed, w / cfg.max_yaw_rate), 1)
    else:  # skid-steer: left/right wheel speed commands, normalised by max_speed
        half = 0.5 * veh.track_width
        acts = np.stack(((v - w * half) / speed, (v + w * half) / speed), 1)
    log = {k: [] for k in LOG_COLUMNS + ("off_map", "stable")}
    planar = []  # four-wheel poses, whose loads are computed afterwards in one batch

    def record(k):
        st = sim.state
        gc = st.contact
        bp = gc.base_position[0]
        vals = (t[k], bp[0] + ox, bp[1] + oy, bp[2] + oz, gc.yaw[0], gc.pitch[0], gc.roll[0],
                gc.position[0, 2] + oz, *st.accel_s[0], *st.gyro_s[0])
        for name, val in zip(LOG_COLUMNS, vals):
            log[name].append(float(val))
        log["off_map"].append(bool(gc.off_map[0]))
        if ground == "four_wheel":  # stateless: the same placement, batched after the drive
            planar.append((float(st.x[0]), float(st.y[0]), float(st.yaw[0])))
        else:  # the rigid step computes its loads anyway
            log["stable"].append(bool(gc.with_loads().stable[0]))

    with torch.inference_mode():
        record(0)
        for k in range(1, len(t)):
            sim.step(torch.as_tensor(acts[k - 1:k]))
            record(k)
        if planar:
            X, Y, YAW = torch.tensor(planar, dtype=torch.float64).unbind(1)
            log["stable"] = place("four_wheel", sim.vehicle, sim.maps, X, Y, YAW,
                                  d_eps=cfg.d_eps, gravity=cfg.gravity).stable.tolist()
    return {k: np.asarray(val) for k, val in log.items()}


def _with_max_substep(dynamics: str, max_substep: float):
    """The physical model's parameters with ``max_substep`` (ValueError for another model)."""
    if dynamics != "rigid_body":
        raise ValueError(f"--max-substep is the physical model's (dynamics rigid_body), not "
                         f"{dynamics}'s")
    from offroad_env.physics.rigid_params import RigidBodyParams
    return RigidBodyParams(max_substep=max_substep)


def summarise(log: dict) -> dict:
    """The seed's summary of a drive log (the path length of base_link, as the seed)."""
    step = np.hypot(np.diff(log["x"]), np.diff(log["y"]))
    return {"duration_s": float(log["t"][-1]), "distance_m": float(step.sum()),
            "max_roll_deg": float(np.degrees(np.abs(log["roll"])).max()),
            "max_pitch_deg": float(np.degrees(np.abs(log["pitch"])).max()),
            "z_range_m": [float(log["z"].min()), float(log["z"].max())],
            "off_map_steps": int(log["off_map"].sum()),
            "unstable_steps": int((~log["stable"]).sum())}


def write_log(log: dict, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(LOG_COLUMNS)
        for k in range(len(log["t"])):
            w.writerow([f"{log['t'][k]:.2f}"] + [f"{log[c][k]:.6f}" for c in LOG_COLUMNS[1:]])


def load_terrain(spec: str, seed: int) -> tuple[terrain.HeightMap, str]:
    """A map from a generator name (its default config) or a file path."""
    if spec in terrain.GENERATORS:
        cls, _ = terrain.GENERATORS[spec]
        hm = terrain.make_heightmap(cls(), np.random.default_rng(seed), dtype=torch.float64)
        return hm, f"generated {spec} (seed {seed})"
    if not Path(spec).exists():
        raise ValueError(f"--terrain {spec!r} is neither a generator ({', '.join(terrain.GENERATORS)})"
                         " nor an existing map file")
    return terrain.load(spec).to(dtype=torch.float64), f"file {spec}"


def run(out: Path, seed: int = 0, envs: int = 256, steps: int = 200, terrain_spec: str = "peaks",
        vehicle: str = "husky", dynamics: str = "ackermann", ground: str = "four_wheel",
        plots: bool = True, duration: float = 30.0, animation_s: float = 10.0,
        start: tuple[float, ...] | None = None, max_substep: float | None = None) -> dict:
    """Run the main job, writing into ``out``; returns the report (also ``report.json``).

    ``start``: the drive's world start ``(x, y)`` or ``(x, y, yaw)`` [m, m, rad]; default the
    map's centre heading +x. Off the map it raises ValueError naming both."""
    preset(vehicle)  # unknown names fail here, before any work
    if not (math.isfinite(duration) and 0 < duration <= 600):
        raise ValueError(f"duration must be in (0, 600] s, got {duration}")
    if not (math.isfinite(animation_s) and 0 <= animation_s <= 120):
        raise ValueError(f"animation_s must be in [0, 120] s, got {animation_s}")
    if ground not in GROUND_METHODS:
        raise ValueError(f"ground must be one of {GROUND_METHODS}, got {ground!r}")
    if plots:  # before any work: a missing extra fails now, not after the drives
        from offroad_env.drawing.plots import pyplot
        try:
            pyplot()
        except ImportError as exc:
            raise ImportError(f"{exc}; or run offroad-env demo --no-plots") from None
    out.mkdir(parents=True, exist_ok=True)
    if start is not None:
        start = tuple(float(v) for v in start)
        if len(start) not in (2, 3) or not all(math.isfinite(v) for v in start):
            raise ValueError(f"start must be finite world (x, y) or (x, y, yaw), got {start}")
        start = start if len(start) == 3 else (*start, 0.0)
    report = {"options": {"terrain": terrain_spec, "vehicle": vehicle, "dynamics": dynamics,
                          "ground": ground, "seed": seed, "duration": duration}}
    # 1. terrain
    hm, origin = load_terrain(terrain_spec, seed)
    stats = terrain.statistics(hm)  # of the map as generated (the seed prints these)
    written = []
    if not hm.has_holes:  # PNG cannot hold holes
        png = out / "terrain_heightmap.png"
        # the seed writes its example with zScale = 1 m (a 1/128 m step); the rounding shows in
        # its printed roll and pitch
        terrain.save(hm, png, z_scale=1.0 if terrain_spec == "peaks" else None)
        hm = terrain.load(png).to(dtype=torch.float64)
        written += ["terrain_heightmap.png + .json"]
    written += ["terrain_preview.png", "terrain_stats.json"]
    terrain.save_preview(hm, out / "terrain_preview.png")
    stats["source"] = origin
    (out / "terrain_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    report["terrain"] = stats
    # 2. the seed's drive: a model that follows the ground with the chosen placement and the
    # other one for comparison; a model that places itself (the physical model) once, under
    # its own name (it reads no ground method)
    start = start if start is not None else (*hm.center, 0.0)
    report["options"]["start"] = list(start)
    if max_substep is not None:
        _with_max_substep(dynamics, max_substep)  # refused before any work
        report["options"]["max_substep"] = max_substep
    log = drive(hm, vehicle, dynamics, ground, t_end=duration, start=start,
                max_substep=max_substep)
    if issubclass(model_class(dynamics), GroundFollowing):
        other = [g for g in GROUND_METHODS if g != ground][0]
        log_other = drive(hm, vehicle, dynamics, other, t_end=duration, start=start,
                          max_substep=max_substep)
        report["drive"] = {ground: summarise(log), other: summarise(log_other)}
    else:
        report["options"]["ground"] = f"not used: {dynamics} places itself"
        report["drive"] = {dynamics: summarise(log)}
    if (terrain_spec, vehicle, dynamics, duration) == ("peaks", "husky", "ackermann", 30.0):
        report["drive"]["seed published"] = SEED_SUMMARY
    write_log(log, out / "drive.csv")
    written += ["drive.csv", "drive_path.png"]
    _path_picture(hm, log, out / "drive_path.png")
    if plots:
        from offroad_env.drawing.animation import animate_drive
        from offroad_env.drawing.plots import drive_plots
        written += drive_plots(hm, log, out, title=f"{vehicle}, {dynamics}, {ground}")
        if animation_s > 0:
            written += animate_drive(hm, log, preset(vehicle), out / "drive.gif",
                                     seconds=animation_s)
    # 3. the environment
    from offroad_env.vector_env import OffroadVectorEnv
    # the map and the model the drive had: every part simulates what it was given
    env = OffroadVectorEnv(num_envs=envs, max_episode_steps=100, render_mode="rgb_array",
                           vehicle=vehicle, dynamics=dynamics, ground=ground,
                           heightmap=hm.to(dtype=torch.float32),
                           dynamics_params=None if max_substep is None
                           else _with_max_substep(dynamics, max_substep))
    env.reset(seed=seed)
    g = torch.Generator().manual_seed(seed)
    ends = {r.label: 0 for r in EndReason if r != EndReason.NONE}
    returns = torch.zeros(envs)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for _ in range(steps):
            a = torch.rand(envs, 2, generator=g) * 2 - 1
            _, r, term, trunc, info = env.step(a)
            returns += r
            done = info["_end_reason"]
            for code in info["end_reason"][done].tolist():
                ends[EndReason(code).label] += 1
    dt = time.perf_counter() - t0
    _frame_picture(env.render()[0], env.render_extent(0), env.config.task.kind,
                   out / "env_frame.png")
    written += ["env_frame.png", "report.json"]
    cfg = env.config  # what the env simulated, read back from it
    report["env"] = {"num_envs": envs, "steps": steps, "env_steps_per_s": envs * steps / dt,
                     "episode_ends": ends, "mean_return_per_env": float(returns.mean()),
                     "vehicle": cfg.vehicle, "dynamics": cfg.dynamics, "ground": cfg.ground,
                     "map_bounds": list(env.terrain.bounds),
                     "map_samples": [env.terrain.nx, env.terrain.ny]}
    report["written"] = written
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _frame_picture(frame: np.ndarray, extent, task: str, path) -> None:
    """Environment 0's rendered frame: with matplotlib, on axes in metres (world frame) with a
    legend; without it, the frame as rendered."""
    try:
        from offroad_env.drawing.plots import pyplot
        plt = pyplot()
    except ImportError:
        from PIL import Image
        Image.fromarray(frame).save(path)
        return
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    ax.imshow(frame, extent=extent, origin="upper")
    handles = [Patch(facecolor="#e63c28", edgecolor="k", label="vehicle 0 (nose line)"),
               Line2D([], [], color="white", label="its path")]
    if task == "nav":
        handles.append(Line2D([], [], marker="o", ls="", mfc="none", mec="#ffdc00",
                              label="its goal"))
    ax.legend(handles=handles, loc="lower right", fontsize=8, facecolor="#808080")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title("The env's rendered frame, environment 0 (shaded relief)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _path_picture(hm, P, path):
    """The drive's path over the map's shaded relief: with matplotlib, axes in metres (world
    frame) and a legend; without it, the bare picture (north up, the map's extent)."""
    try:
        from offroad_env.drawing.plots import pyplot
        plt = pyplot()
    except ImportError:
        plt = None
    if plt is not None:
        x0, x1, y0, y1 = hm.bounds
        fig, ax = plt.subplots(figsize=(6.4, 6.0))
        ax.imshow(terrain.preview_image(hm), extent=(x0, x1, y0, y1), origin="upper")
        ax.plot(P["x"], P["y"], "w-", lw=1.5, label="path (base_link)")
        ax.plot(P["x"][0], P["y"][0], "o", color="lime", label="start")
        ax.plot(P["x"][-1], P["y"][-1], "s", color="red", label="end")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_title("The drive over the map (shaded relief)")
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return
    from PIL import Image, ImageDraw

    img = Image.fromarray(terrain.preview_image(hm))
    W, H = img.size
    x0, x1, y0, y1 = hm.bounds
    pts = [((x - x0) / (x1 - x0) * (W - 1), (y1 - y) / (y1 - y0) * (H - 1))
           for x, y in zip(P["x"], P["y"])]
    img = img.resize((W * 3, H * 3))
    d = ImageDraw.Draw(img)
    d.line([(3 * a, 3 * b) for a, b in pts], fill=(255, 255, 255), width=2)
    img.save(path)


def print_report(report: dict, out: Path) -> None:
    s = report["terrain"]
    print(f"Terrain ({s['source']}): {s['samples'][0]} x {s['samples'][1]} samples, "
          f"{s['extent_m'][0]:g} x {s['extent_m'][1]:g} m, heights [{s['height_min_m']:.2f}, "
          f"{s['height_max_m']:.2f}] m")
    o = report["options"]
    print(f"\nThe seed's drive ({o['vehicle']}, {o['dynamics']}, 2 m/s, steering rate "
          f"0.5 sin(2 pi 0.15 t) rad/s, {o['duration']:g} s):")
    d = report["drive"]
    cols = list(d)
    rows = [("duration [s]", [f"{d[c]['duration_s']:.2f}" for c in cols]),
            ("distance [m]", [f"{d[c]['distance_m']:.4f}" for c in cols]),
            ("max roll [deg]", [f"{d[c]['max_roll_deg']:.3f}" for c in cols]),
            ("max pitch [deg]", [f"{d[c]['max_pitch_deg']:.3f}" for c in cols]),
            ("z range [m]", [f"{d[c]['z_range_m'][0]:.5g} .. {d[c]['z_range_m'][1]:.5g}"
                             for c in cols]),
            ("steps off the map", [str(d[c]["off_map_steps"]) if "off_map_steps" in d[c]
                                   else "-" for c in cols])]
    # every column as wide as its widest cell, two spaces apart: the cells never run together
    width = [max(len(c), *(len(r[1][j]) for r in rows)) + 2 for j, c in enumerate(cols)]
    print("  " + " " * 22 + "".join(f"{c:>{w}s}" for c, w in zip(cols, width)))
    for label, cells in rows:
        print(f"  {label:22s}" + "".join(f"{v:>{w}s}" for v, w in zip(cells, width)))
    if "seed published" in d:
        print("  (the seed's terrain is peaks(201), imgaussfilt(., 3) x 0.4, written with "
              "zScale 1; its steering is held at pi/4; how the example was identified: "
              "docs/guides/getting-started.md)")
    e = report["env"]
    print(f"\nOffroadNav-v1, {e['num_envs']} vehicles x {e['steps']} steps, random policy: "
          f"{e['env_steps_per_s']:,.0f} env-steps/s; episode ends: {e['episode_ends']}")
    print(f"\nWrote {out}/: " + ", ".join(report["written"]))
