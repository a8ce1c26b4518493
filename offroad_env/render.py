"""``rgb_array`` frames: a top-down hillshade of the terrain with the vehicle's footprint, its
path and the goal, plus roll and pitch readouts. Pure numpy + Pillow, headless."""

from __future__ import annotations

import math

import numpy as np

from terrain import preview_image

from .physics.rotations import place_points

__all__ = ["Renderer"]


class Renderer:
    """Draws one environment of a :class:`~offroad_env.sim.Simulator`.

    Frames are ``(H, W, 3)`` uint8, north-up (+y at the top), ``scale`` pixels per map sample.
    """

    def __init__(self, sim, max_size: int = 480, path_length: int = 2000):
        self.sim = sim
        self._bg = {}
        self.max_size = max_size
        self.path: list[tuple[float, float]] = []
        self.path_length = path_length

    def invalidate(self) -> None:
        """Forget the cached map images (the maps changed)."""
        self._bg.clear()

    def _background(self, m: int) -> np.ndarray:
        if m not in self._bg:
            self._bg[m] = preview_image(self.sim.maps[m] if len(self.sim.maps) > 1
                                        else self.sim.maps)
        return self._bg[m]

    def record(self, env: int = 0):
        x = float(self.sim.state.x[env])
        y = float(self.sim.state.y[env])
        self.path.append((x, y))
        del self.path[:-self.path_length]

    def clear(self):
        self.path.clear()

    def frame(self, env: int = 0) -> np.ndarray:
        from PIL import Image, ImageDraw

        sim = self.sim
        m = int(sim.state.map_index[env])
        bg = self._background(m)
        img = Image.fromarray(bg)
        h, w = bg.shape[:2]
        s = min(1.0, self.max_size / max(h, w))
        if s < 1.0:
            img = img.resize((max(1, int(w * s)), max(1, int(h * s))))
        W, H = img.size
        x0, x1, y0, y1 = sim.maps.bounds

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
        v = sim.vehicle
        yaw = float(sim.state.yaw[env])
        c, sn = math.cos(yaw), math.sin(yaw)
        xs = [p[0] for p in v.wheel_positions]
        ys = [p[1] for p in v.wheel_positions]
        r_w = v.wheel_radius
        corners = [(max(xs) + r_w, max(ys)), (max(xs) + r_w, min(ys)),
                   (min(xs) - r_w, min(ys)), (min(xs) - r_w, max(ys))]
        bx, by = float(sim.state.x[env]), float(sim.state.y[env])
        poly = [px(*place_points(bx, by, c, sn, a, b)) for a, b in corners]
        d.polygon(poly, outline=(0, 0, 0), fill=(230, 60, 40))
        nose = px(*place_points(bx, by, c, sn, max(xs) + r_w, 0.0))
        d.line([px(bx, by), nose], fill=(0, 0, 0), width=2)
        roll = math.degrees(float(sim.state.contact.roll[env]))
        pitch = math.degrees(float(sim.state.contact.pitch[env]))
        d.rectangle([0, 0, 150, 28], fill=(0, 0, 0))
        d.text((4, 2), f"roll  {roll:6.1f} deg", fill=(255, 255, 255))
        d.text((4, 14), f"pitch {pitch:6.1f} deg", fill=(255, 255, 255))
        return np.asarray(img, dtype=np.uint8).copy()
