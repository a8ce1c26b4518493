"""Pictures and statistics of a height map, for people: hillshade preview and slope figures."""

from __future__ import annotations

import math

import numpy as np

from .heightmap import HeightMap
from .materials import HARD

__all__ = ["HOLE_COLOUR", "MATERIAL_COLOURS", "hillshade", "preview_image", "save_preview",
           "statistics"]


def _grid(hm: HeightMap, index: int = 0) -> np.ndarray:
    h = hm[index].world_heights() if len(hm) > 1 else hm.world_heights()
    return h.detach().cpu().double().numpy()


def _gradients(z: np.ndarray, res: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(dz/dx, dz/dy)`` by central differences (one-sided at the borders), NaN near holes."""
    dzdy, dzdx = np.gradient(z, res[1], res[0])
    return dzdx, dzdy


def hillshade(z: np.ndarray, res: tuple[float, float], azimuth_deg: float = 315.0,
              altitude_deg: float = 45.0) -> np.ndarray:
    """Lambertian shading in [0, 1] of heights ``z[iy, ix]`` lit from ``azimuth`` (clockwise from
    +y, "north") and ``altitude`` above the horizon; NaN where ``z`` is NaN."""
    dzdx, dzdy = _gradients(z, res)
    az = math.radians(azimuth_deg)
    alt = math.radians(altitude_deg)
    light = np.array([math.sin(az) * math.cos(alt), math.cos(az) * math.cos(alt), math.sin(alt)])
    n = np.stack((-dzdx, -dzdy, np.ones_like(z)), axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return np.clip(n @ light, 0.0, 1.0)


#: the colour of holes (NaN samples) in previews and rendered frames
HOLE_COLOUR = (230, 0, 230)
#: the tints of a material map's materials other than ``"hard"``, in the order of their names
#: (sand yellow, clay brown, snow white, slate blue; then again), blended half with the ground
MATERIAL_COLOURS = ((240, 205, 110), (150, 95, 60), (245, 245, 245), (110, 130, 190))


def preview_image(hm: HeightMap, index: int = 0) -> np.ndarray:
    """``(ny, nx, 3)`` uint8 RGB picture: hillshade tinted by elevation (blue low, brown high),
    soils of a material map by :data:`MATERIAL_COLOURS`, holes in :data:`HOLE_COLOUR` (magenta,
    which neither the terrain's palette nor a drawn vehicle uses). Row 0 is the *maximum* y, so the picture is north-up like a map."""
    z = _grid(hm, index)
    shade = hillshade(z, hm.resolution)
    finite = np.isfinite(z)
    lo, hi = (np.nanmin(z), np.nanmax(z)) if finite.any() else (0.0, 1.0)
    t = (z - lo) / (hi - lo) if hi > lo else np.zeros_like(z)
    low = np.array([70.0, 110.0, 160.0])
    mid = np.array([120.0, 160.0, 90.0])
    high = np.array([190.0, 150.0, 110.0])
    t3 = np.nan_to_num(t)[..., None]
    colour = np.where(t3 < 0.5, low + (mid - low) * (2 * t3), mid + (high - mid) * (2 * t3 - 1))
    light = 0.35 + 0.65 * np.nan_to_num(shade)[..., None]
    rgb = colour * light
    if hm.materials is not None:  # soils tinted, half and half, under the same light
        mat = hm.materials[index if len(hm) > 1 else 0].cpu().numpy()
        soft = [i for i, name in enumerate(hm.material_names) if name != HARD]
        for k, i in enumerate(soft):
            tint = np.array(MATERIAL_COLOURS[k % len(MATERIAL_COLOURS)], dtype=float)
            here = mat == i
            rgb[here] = 0.5 * rgb[here] + 0.5 * tint * light[here]
    rgb[~finite] = HOLE_COLOUR
    return np.clip(rgb, 0, 255).astype(np.uint8)[::-1].copy()


def save_preview(hm: HeightMap, path, index: int = 0, max_size: int = 2048):
    """Write :func:`preview_image` as PNG in metres: a map whose x and y spacings differ (a
    geographic DEM's degrees turned to metres) is stretched so that a pixel is square on the
    ground; then downscaled to at most ``max_size`` pixels a side."""
    from PIL import Image

    img = Image.fromarray(preview_image(hm, index))  # uint8 (H, W, 3): RGB
    rx, ry = hm.resolution
    if abs(rx / ry - 1.0) > 1e-3:
        s = min(rx, ry)
        img = img.resize((max(1, round(hm.nx * rx / s)), max(1, round(hm.ny * ry / s))),
                         Image.Resampling.BILINEAR)
    if max(img.size) > max_size:
        img.thumbnail((max_size, max_size))
    img.save(path, format="PNG")
    return path


def statistics(hm: HeightMap, index: int = 0) -> dict:
    """Size, extent, height range and slope statistics of one map (degrees for slopes)."""
    z = _grid(hm, index)
    dzdx, dzdy = _gradients(z, hm.resolution)
    slope = np.degrees(np.arctan(np.hypot(dzdx, dzdy)))
    s = slope[np.isfinite(slope)]
    holes = int((~np.isfinite(z)).sum())
    x0, x1, y0, y1 = hm.bounds
    out = {
        "samples": [hm.nx, hm.ny],
        "resolution_m": list(hm.resolution),
        "extent_m": list(hm.size),
        "bounds_m": [x0, x1, y0, y1],
        "z_offset_m": float(hm.z_offset[index]),
        "height_min_m": float(np.nanmin(z)) if holes < z.size else math.nan,
        "height_max_m": float(np.nanmax(z)) if holes < z.size else math.nan,
        "height_mean_m": float(np.nanmean(z)) if holes < z.size else math.nan,
        "holes": holes,
    }
    if s.size:
        out.update(slope_mean_deg=float(s.mean()), slope_median_deg=float(np.median(s)),
                   slope_p95_deg=float(np.percentile(s, 95)), slope_max_deg=float(s.max()))
    return out
