"""An animation of a drive over the 3-D terrain (the seed's ``visualizeGroundFollowing``):
matplotlib's animation writers, a GIF by ``PillowWriter`` (and an MP4 by ``FFMpegWriter`` when
ffmpeg is installed), one matplotlib draw per frame. Needs the ``plot`` extra.

The vehicle is its chassis box and its wheels (discs in the body's x-z planes at the hubs) at
each logged pose of base_link; the camera follows it over a window of the terrain around it; a
second panel draws the roll and pitch traces with the current time marked.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import terrain

from offroad_env.drawing.plots import pyplot
from offroad_env.physics.rotations import rot_zyx
from offroad_env.physics.vehicle import Vehicle

__all__ = ["animate_drive", "vehicle_polygons"]


def _rot(yaw, pitch, roll) -> np.ndarray:
    import torch
    return rot_zyx(*(torch.tensor([v], dtype=torch.float64) for v in (yaw, pitch, roll)))[0].numpy()


def vehicle_polygons(vehicle: Vehicle, position, yaw, pitch, roll, segments: int = 16):
    """World-frame polygons ``[(k, 3) arrays]`` of the chassis box's six faces and each wheel's
    disc at a base_link pose (``position`` [m], angles [rad])."""
    R = _rot(yaw, pitch, roll)
    p = np.asarray(position, dtype=float)
    # base_link frame: the hubs are the wheel positions moved by the rear-axle pose
    T = np.asarray(vehicle.rear_axle_pose, dtype=float)
    hubs = [T[:3, :3] @ np.array([x, y, 0.0]) + T[:3, 3] for x, y in vehicle.wheel_positions]
    hubs = np.array(hubs)
    r = float(vehicle.wheel_radius)
    x0, x1 = hubs[:, 0].min() - 0.6 * r, hubs[:, 0].max() + 0.6 * r
    half_w = 0.5 * (hubs[:, 1].max() - hubs[:, 1].min()) - 0.35 * r
    z0, z1 = hubs[:, 2].mean() - 0.2 * r, hubs[:, 2].mean() + 1.3 * r
    c = np.array([[x, y, z] for x in (x0, x1) for y in (-half_w, half_w) for z in (z0, z1)])
    faces = [(0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]
    polys = [(c[list(f)] @ R.T) + p for f in faces]
    a = np.linspace(0.0, 2 * math.pi, segments, endpoint=False)
    disc = np.stack((r * np.cos(a), np.zeros_like(a), r * np.sin(a)), 1)
    for h in hubs:
        polys.append(((disc + h) @ R.T) + p)
    return polys


def animate_drive(hm: terrain.HeightMap, log: dict, vehicle: Vehicle, path, *,
                  seconds: float = 15.0, fps: int = 10, window: float = 6.0,
                  mp4: bool = True) -> list[str]:
    """Write the animation of a drive log (``t, x, y, z, yaw, pitch, roll`` arrays of base_link,
    as :func:`offroad_env.cli.demo.drive` logs) to ``path`` (a ``.gif``), ``seconds`` long at
    ``fps`` (the drive is resampled to fit), the camera following the vehicle over a
    ``window`` [m] square of the terrain. Also ``path.with_suffix(".mp4")`` when ``mp4`` and an
    ffmpeg writer is available. Returns the file names written."""
    plt = pyplot()
    from matplotlib import animation
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    path = Path(path)
    t = np.asarray(log["t"])
    frames = max(2, int(round(seconds * fps)))
    idx = np.linspace(0, len(t) - 1, frames).round().astype(int)
    H = hm.world_heights().double().numpy()
    H = H[0] if H.ndim == 3 else H
    xs, ys = hm.x_coords().double().numpy(), hm.y_coords().double().numpy()
    step = max(1, int(round(0.4 / min(hm.resolution))))  # a ~0.4 m mesh is enough to see
    fig = plt.figure(figsize=(10, 5))
    ax = fig.add_subplot(1, 2, 1, projection="3d", computed_zorder=False)
    ax.set_box_aspect((1, 1, 4.0 / window))
    tr = fig.add_subplot(1, 2, 2)
    roll, pitch = np.degrees(log["roll"]), np.degrees(log["pitch"])
    tr.plot(t, roll, label="roll")
    tr.plot(t, pitch, label="pitch")
    tr.set_xlabel("Time (s)")
    tr.set_ylabel("deg")
    tr.set_title("Roll and pitch")
    tr.grid(True, alpha=0.3)
    tr.legend(loc="upper right")
    marker = tr.axvline(t[0], color="k", lw=1)
    zmin, zmax = float(np.nanmin(H)), float(np.nanmax(H))
    state = {"surf": None, "body": None}

    def draw(k):
        i = idx[k]
        cx, cy = float(log["x"][i]), float(log["y"][i])
        sel_x = np.flatnonzero(np.abs(xs - cx) <= 0.5 * window)[::step]
        sel_y = np.flatnonzero(np.abs(ys - cy) <= 0.5 * window)[::step]
        if state["surf"] is not None:
            state["surf"].remove()
            state["body"].remove()
        if sel_x.size >= 2 and sel_y.size >= 2:
            X, Y = np.meshgrid(xs[sel_x], ys[sel_y])
            Z = H[np.ix_(sel_y, sel_x)]
            state["surf"] = ax.plot_surface(X, Y, Z, cmap="terrain", vmin=zmin, vmax=zmax,
                                            linewidth=0.2, edgecolor="0.4",
                                            antialiased=False, zorder=1)
        polys = vehicle_polygons(vehicle, (cx, cy, float(log["z"][i])), float(log["yaw"][i]),
                                 float(log["pitch"][i]), float(log["roll"][i]))
        colors = ["tab:orange"] * 6 + ["k"] * (len(polys) - 6)
        body = Poly3DCollection(polys, facecolors=colors, edgecolors="k", linewidths=0.3,
                                zorder=10)  # drawn over the terrain
        state["body"] = ax.add_collection3d(body)
        ax.set_xlim(cx - 0.5 * window, cx + 0.5 * window)
        ax.set_ylim(cy - 0.5 * window, cy + 0.5 * window)
        cz = float(log["z"][i])
        ax.set_zlim(cz - 2.0, cz + 2.0)
        ax.view_init(elev=30, azim=math.degrees(float(log["yaw"][i])) - 135)
        ax.set_title(f"t = {t[i]:5.2f} s, x = {cx:6.2f} m, y = {cy:6.2f} m")
        marker.set_xdata([t[i], t[i]])
        return []

    # no 3-D axes: tick text is most of a frame's cost, and a following camera's ticks move
    ax.set_axis_off()
    fig.tight_layout()
    # the writers' own frame loop (FuncAnimation.save draws each frame three times, the 3-D
    # panel is most of the cost): one draw per frame, fed to every writer
    writers = [(animation.PillowWriter(fps=fps), path)]
    if mp4 and animation.writers.is_available("ffmpeg"):
        writers.append((animation.FFMpegWriter(fps=fps), path.with_suffix(".mp4")))
    try:
        for w, p in writers:
            w.setup(fig, str(p), dpi=72)
        for k in range(frames):
            draw(k)
            for w, _ in writers:
                w.grab_frame()
        for w, _ in writers:
            w.finish()
    finally:
        plt.close(fig)
    return [p.name for _, p in writers]
