"""Windows of a real digital elevation model, ranked by steepness: the ``real`` family's maps.

A DEM (any file :func:`terrain.load` reads; GeoTIFFs in local metres) is cut into square
candidate windows of the family's map size, their centres on a lattice of twice that size; a
window whose bilinear surface touches a hole (nodata) is left out. Each window is measured by its
**mean slope**: the mean over a ``LATTICE x LATTICE`` lattice spanning the window of the slope
angle ``atan(|grad z|)`` [deg]. Level ``l`` of ``L`` holds the windows whose mean slope lies in
``[l, l + 1) * max_slope / L``, and a map of that level is one of them, drawn with the map's
generator, resampled on the family's grid and moved so that its centre's height is 0.

What this measures and what it does not: an SRTM DEM samples the ground every 25-30 m, so a
window of 24 m holds the shape of a hillside (its slope and its curvature), not its rocks or
ledges. The family tests climbing, descending and traversing real slopes; the other families
test the small features.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

__all__ = ["LATTICE", "ranked_windows", "level_band", "window_heights", "mean_slope_deg"]

#: points per side of the lattice a window's mean slope is taken over
LATTICE = 9


@functools.lru_cache(maxsize=4)
def _dem(path: str):
    from .io import load

    return load(path, dtype=torch.float64)


def _lattice(size: tuple[float, float]) -> tuple[torch.Tensor, torch.Tensor]:
    lx = torch.linspace(-0.5 * size[0], 0.5 * size[0], LATTICE, dtype=torch.float64)
    ly = torch.linspace(-0.5 * size[1], 0.5 * size[1], LATTICE, dtype=torch.float64)
    gy, gx = torch.meshgrid(ly, lx, indexing="ij")
    return gx.reshape(-1), gy.reshape(-1)


def mean_slope_deg(dzdx: np.ndarray, dzdy: np.ndarray) -> np.ndarray:
    """The mean slope angle [deg] of gradients ``(..., P)`` over their last axis."""
    return np.degrees(np.arctan(np.hypot(dzdx, dzdy))).mean(-1)


@functools.lru_cache(maxsize=8)
def ranked_windows(path: str, size: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(centres (C, 2) [m], mean slope (C,) [deg])`` of the hole-free candidate windows of
    ``size`` in the DEM at ``path``, in the DEM's frame, ordered by mean slope."""
    dem = _dem(path)
    x0, x1, y0, y1 = dem.bounds
    sx, sy = size
    if x1 - x0 < 2 * sx or y1 - y0 < 2 * sy:
        raise ValueError(f"the DEM {path} ({x1 - x0:.0f} x {y1 - y0:.0f} m) is too small for "
                         f"windows of {sx} x {sy} m")
    cx = torch.arange(x0 + sx, x1 - sx, 2 * sx, dtype=torch.float64)
    cy = torch.arange(y0 + sy, y1 - sy, 2 * sy, dtype=torch.float64)
    CY, CX = torch.meshgrid(cy, cx, indexing="ij")
    CX, CY = CX.reshape(-1), CY.reshape(-1)
    lx, ly = _lattice(size)
    # holes: a coarse lattice misses none, the DEM's cells being larger than its spacing
    n = max(LATTICE, int(math.ceil(max(sx / dem.resolution[0], sy / dem.resolution[1]))) + 2)
    hx = torch.linspace(-0.5 * sx, 0.5 * sx, n, dtype=torch.float64)
    hy = torch.linspace(-0.5 * sy, 0.5 * sy, n, dtype=torch.float64)
    HY, HX = (t.reshape(-1) for t in torch.meshgrid(hy, hx, indexing="ij"))
    ok = torch.ones(CX.shape, dtype=torch.bool)
    for i in range(0, len(CX), 8192):
        sl = slice(i, i + 8192)
        h = dem.height(CX[sl, None] + HX, CY[sl, None] + HY)
        ok[sl] = ~torch.isnan(h).any(1)
    CX, CY = CX[ok], CY[ok]
    _, dx, dy = dem.height_slope(CX[:, None] + lx, CY[:, None] + ly)
    slope = mean_slope_deg(dx.numpy(), dy.numpy())
    order = np.argsort(slope, kind="stable")
    return np.stack([CX.numpy(), CY.numpy()], 1)[order], slope[order]


def level_band(max_slope_deg: float, level: int, num_levels: int) -> tuple[float, float]:
    """The mean-slope band ``[lo, hi)`` [deg] of ``level``."""
    step = max_slope_deg / num_levels
    return level * step, (level + 1) * step


def window_heights(path: str, size, band, x: np.ndarray, y: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """Heights ``(ny, nx)`` [m] on the grid ``x, y`` (centred offsets [m]) of a window of the
    DEM at ``path`` drawn with ``rng`` among those of mean slope in ``band`` [deg], its centre
    at height 0."""
    centres, slope = ranked_windows(path, tuple(size))
    lo, hi = np.searchsorted(slope, band[0]), np.searchsorted(slope, band[1])
    if hi <= lo:
        raise ValueError(f"the DEM {path} has no {size[0]} x {size[1]} m window of mean slope in "
                         f"[{band[0]:.1f}, {band[1]:.1f}) deg (its windows span "
                         f"{slope[0]:.1f}-{slope[-1]:.1f} deg); lower the family's "
                         "real_max_slope_deg")
    cx, cy = centres[rng.integers(lo, hi)]
    dem = _dem(path)
    X = torch.as_tensor(x + cx, dtype=torch.float64)
    Y = torch.as_tensor(y + cy, dtype=torch.float64)
    h = dem.height(X, Y).numpy()
    centre = float(dem.height(torch.tensor([cx], dtype=torch.float64),
                              torch.tensor([cy], dtype=torch.float64))[0])
    return h - centre
