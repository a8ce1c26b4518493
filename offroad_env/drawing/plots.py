"""The seed's plots of a drive (matplotlib, headless). Needs the ``plot`` extra."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import terrain

__all__ = ["pyplot", "drive_plots"]


def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend, or a clear error naming the extra."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'offroad-env[plot]' "
                          "(or run without plots)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _line(plt, path, t, series, ylabel, title):
    fig, ax = plt.subplots(figsize=(8, 4))
    for y, style, label in series:
        ax.plot(t, y, style, lw=1.5, label=label)
    ax.set_xlabel("Time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def drive_plots(hm: terrain.HeightMap, log: dict, out: Path, title: str = "") -> list[str]:
    """Write the seed's figures of a drive log (see ``demo.LOG_COLUMNS``) into ``out``:
    elevation, roll and pitch, yaw over time, the 3-D terrain with the path, and a top-down
    map. Returns the file names."""
    plt = pyplot()
    t = log["t"]
    _line(plt, out / "plot_elevation.png", t, [(log["axle_z"], "b-", "rear axle"),
                                                (log["z"], "g--", "base_link")],
          "Z (m)", f"Rear-axle elevation ({title})")
    _line(plt, out / "plot_roll_pitch.png", t, [(np.degrees(log["roll"]), "b-", "Roll"),
                                                 (np.degrees(log["pitch"]), "r-", "Pitch")],
          "Angle (deg)", "Terrain-induced roll and pitch")
    _line(plt, out / "plot_yaw.png", t, [(np.degrees(np.unwrap(log["yaw"])), "k-", "Yaw")],
          "Yaw (deg)", "Vehicle heading (yaw, unwrapped)")
    k = 3  # skip the start: the kinematic models jump from rest to speed in one step
    _line(plt, out / "plot_imu.png", t[k:], [(log["accel_x"][k:], "r-", "f_x"),
                                              (log["accel_y"][k:], "g-", "f_y"),
                                              (log["accel_z"][k:], "b-", "f_z")],
          "Specific force (m/s^2)", "IMU accelerometer (base_link), from t = 0.03 s")
    H = hm[0].world_heights().double().cpu().numpy()
    x0, x1, y0, y1 = hm.bounds
    X, Y = np.meshgrid(np.linspace(x0, x1, hm.nx), np.linspace(y0, y1, hm.ny))
    stride = max(1, max(hm.nx, hm.ny) // 100)
    fig = plt.figure(figsize=(8, 6))
    ax = fig.add_subplot(projection="3d", computed_zorder=False)
    ax.plot_surface(X[::stride, ::stride], Y[::stride, ::stride], H[::stride, ::stride],
                    cmap="terrain", linewidth=0, antialiased=False, alpha=0.8)
    ax.plot(log["x"], log["y"], log["z"] + 0.05, "r-", lw=2, label="path (base_link)", zorder=10)
    ax.set_xlabel("X (m)")
    ax.set_ylabel("Y (m)")
    ax.set_zlabel("Z (m)")
    ax.set_title("3-D terrain with the path")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "plot_terrain_3d.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 6))
    im = ax.imshow(H, origin="lower", extent=(x0, x1, y0, y1), cmap="terrain")
    ax.contour(X, Y, H, levels=15, colors="k", linewidths=0.4, alpha=0.5)
    ax.plot(log["x"], log["y"], "r-", lw=1.5, label="path")
    ax.plot(log["x"][0], log["y"][0], "wo", label="start")
    fig.colorbar(im, ax=ax, label="height (m)")
    ax.set_xlabel("X (m)")
    ax.set_ylabel("Y (m)")
    ax.set_title("Top-down map")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(out / "plot_map.png", dpi=100)
    plt.close(fig)
    return ["plot_elevation.png", "plot_roll_pitch.png", "plot_yaw.png", "plot_imu.png",
            "plot_terrain_3d.png", "plot_map.png"]
