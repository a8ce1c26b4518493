"""``rgb_array`` frames: a top-down hillshade of the terrain with the vehicle's footprint, its
path and the goal, plus readouts of the world position, roll and pitch. Pure numpy + Pillow,
headless.

Two views: the whole map, or a window of fixed metres that follows the vehicle (resampled
from the map, so a 30 m window of a 25 m-per-sample DEM still shows the ground under the
vehicle). The vehicle is drawn to scale, never shorter than :data:`MIN_VEHICLE_PX` pixels;
holes are magenta (:data:`terrain.HOLE_COLOUR`), soils of a material map tinted
(:data:`terrain.preview.MATERIAL_COLOURS`), off-map ground grey."""

from __future__ import annotations

import math

import numpy as np
import torch

from terrain import HOLE_COLOUR, HeightMap, material_at, preview_image

from offroad_env.physics.rotations import place_points

__all__ = ["Renderer", "RENDER_VIEWS", "MIN_VEHICLE_PX"]

#: ``"map"``: the whole map; ``"follow"``: a ``render_window`` square centred on the vehicle;
#: ``"auto"``: the map when the vehicle would be at least :data:`MIN_VEHICLE_PX` long on it,
#: else follow
RENDER_VIEWS = ("auto", "map", "follow")
#: the least length of the drawn vehicle [px] (a smaller one is drawn at this size)
MIN_VEHICLE_PX = 8
_VEHICLE = (230, 60, 40)
_OFF_MAP = (90, 90, 90)


class Renderer:
    """Draws one environment of a :class:`~offroad_env.sim.simulator.Simulator`.

    Frames are ``(H, W, 3)`` uint8, north-up (+y at the top), at most ``max_size`` pixels a side.
    ``view``: one of :data:`RENDER_VIEWS`; ``window``: the side of the follow view [m].
    """

    def __init__(self, sim, max_size: int = 480, path_length: int = 2000, view: str = "auto",
                 window: float = 40.0):
        if view not in RENDER_VIEWS:
            raise ValueError(f"render_view must be one of {RENDER_VIEWS}, got {view!r}")
        if not (isinstance(window, (int, float)) and math.isfinite(window) and window > 0):
            raise ValueError(f"render_window must be a positive length in metres, got {window!r}")
        self.sim = sim
        self._bg = {}
        self.max_size = max_size
        self.path: list[tuple[float, float]] = []
        self.path_length = path_length
        self.view = view
        self.window = float(window)

    def invalidate(self) -> None:
        """Forget the cached map images (the maps changed)."""
        self._bg.clear()

    def _map_image(self, m: int) -> np.ndarray:
        if m not in self._bg:
            self._bg[m] = preview_image(self.sim.maps[m] if len(self.sim.maps) > 1
                                        else self.sim.maps)
        return self._bg[m]

    def _length(self) -> float:
        """The vehicle's footprint length [m] (wheel centres plus a radius each end)."""
        xs = [p[0] for p in self.sim.vehicle.wheel_positions]
        return max(xs) - min(xs) + 2 * self.sim.vehicle.wheel_radius

    def resolved_view(self) -> str:
        """``"map"`` or ``"follow"``: the view a frame uses (``auto`` resolved)."""
        if self.view != "auto":
            return self.view
        x0, x1, y0, y1 = self.sim.maps.bounds
        px_per_m = min(self.max_size, max(self.sim.maps.nx, self.sim.maps.ny)) / max(x1 - x0,
                                                                                        y1 - y0)
        return "map" if self._length() * px_per_m >= MIN_VEHICLE_PX else "follow"

    def _window_image(self, m: int, cx: float, cy: float) -> tuple[np.ndarray, tuple]:
        """The follow view's picture and its bounds: the map resampled (bilinear) on a square
        grid of ``window`` metres centred on ``(cx, cy)`` (simulation frame)."""
        maps = self.sim.maps
        n = max(16, min(self.max_size, 320))
        half = 0.5 * self.window
        one = maps[m] if len(maps) > 1 else maps
        ax = torch.linspace(-half, half, n, dtype=one.dtype, device=one.device)
        gy, gx = torch.meshgrid(cy + ax, cx + ax, indexing="ij")
        z = one.height(gx, gy).double().cpu()
        off = ~one.in_bounds(gx, gy).cpu()
        z = torch.where(off, torch.nan, z)
        soils = {} if one.materials is None else dict(  # the nearest sample's material
            materials=material_at(one, gx, gy).cpu().numpy(), material_names=one.material_names)
        hm = HeightMap(z.numpy(), self.window / (n - 1), center=(cx, cy), dtype=torch.float64,
                       **soils)
        img = preview_image(hm)
        img[off.numpy()[::-1]] = _OFF_MAP
        return img, (cx - half, cx + half, cy - half, cy + half)

    def record(self, env: int = 0):
        x = float(self.sim.state.x[env])
        y = float(self.sim.state.y[env])
        self.path.append((x, y))
        del self.path[:-self.path_length]

    def clear(self):
        self.path.clear()

    def extent(self, env: int = 0) -> tuple[float, float, float, float]:
        """World ``(x0, x1, y0, y1)`` [m] that :meth:`frame` of ``env`` shows now."""
        sim = self.sim
        if self.resolved_view() == "follow":
            bx, by, half = float(sim.state.x[env]), float(sim.state.y[env]), 0.5 * self.window
            x0, x1, y0, y1 = bx - half, bx + half, by - half, by + half
        else:
            x0, x1, y0, y1 = sim.maps.bounds
        ox, oy, _ = sim.origin
        return (x0 + ox, x1 + ox, y0 + oy, y1 + oy)

    def frame(self, env: int = 0) -> np.ndarray:
        from PIL import Image, ImageDraw

        sim = self.sim
        m = int(sim.state.map_index[env])
        bx, by = float(sim.state.x[env]), float(sim.state.y[env])
        if self.resolved_view() == "follow":
            bg, (x0, x1, y0, y1) = self._window_image(m, bx, by)
        else:
            bg, (x0, x1, y0, y1) = self._map_image(m), sim.maps.bounds
        img = Image.fromarray(bg)
        h, w = bg.shape[:2]
        s = self.max_size / max(h, w)
        if s < 1.0:
            img = img.resize((max(1, int(w * s)), max(1, int(h * s))))
        W, H = img.size

        def px(x, y):
            return ((x - x0) / (x1 - x0) * (W - 1), (y1 - y) / (y1 - y0) * (H - 1))

        d = ImageDraw.Draw(img)
        if len(self.path) > 1:
            d.line([px(*p) for p in self.path], fill=(255, 255, 255), width=1)
        gx, gy = (float(v) for v in sim.state.goal_w[env])
        gxp, gyp = px(gx, gy)
        r = max(2.0, sim.cfg.task.goal_radius / (x1 - x0) * W)
        if sim.cfg.task.kind == "nav":
            d.ellipse([gxp - r, gyp - r, gxp + r, gyp + r], outline=(255, 220, 0), width=2)
        self._draw_vehicle(d, env, px, MIN_VEHICLE_PX / self._length() * (x1 - x0) / (W - 1))
        ox, oy, oz = sim.origin
        z = float(sim.state.contact.base_position[env, 2]) + oz
        roll = math.degrees(float(sim.state.contact.roll[env]))
        pitch = math.degrees(float(sim.state.contact.pitch[env]))
        lines = (f"x {bx + ox:.1f} y {by + oy:.1f} m", f"z {z:.1f} m",
                 f"roll  {roll:6.1f} deg", f"pitch {pitch:6.1f} deg")
        d.rectangle([0, 0, 150, 12 * len(lines) + 4], fill=(0, 0, 0))
        for k, text in enumerate(lines):
            d.text((4, 2 + 12 * k), text, fill=(255, 255, 255))
        return np.asarray(img, dtype=np.uint8).copy()

    def _draw_vehicle(self, d, env: int, px, least_scale: float) -> None:
        """The footprint (wheel centres grown by a radius fore and aft), filled red with a black
        outline and a nose line, scaled up about the rear axle to at least ``least_scale``."""
        sim = self.sim
        v = sim.vehicle
        yaw = float(sim.state.yaw[env])
        c, sn = math.cos(yaw), math.sin(yaw)
        k = max(1.0, least_scale)
        xs = [k * p[0] for p in v.wheel_positions]
        ys = [k * p[1] for p in v.wheel_positions]
        r_w = k * v.wheel_radius
        corners = [(max(xs) + r_w, max(ys)), (max(xs) + r_w, min(ys)),
                   (min(xs) - r_w, min(ys)), (min(xs) - r_w, max(ys))]
        bx, by = float(sim.state.x[env]), float(sim.state.y[env])
        poly = [px(*place_points(bx, by, c, sn, a, b)) for a, b in corners]
        d.polygon(poly, outline=(0, 0, 0), fill=_VEHICLE)
        nose = px(*place_points(bx, by, c, sn, max(xs) + r_w, 0.0))
        d.line([px(bx, by), nose], fill=(0, 0, 0), width=2)
