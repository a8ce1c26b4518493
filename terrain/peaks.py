"""The four-wheel seed's terrain: MATLAB's ``peaks`` surface stretched over a grid, smoothed as
MATLAB's ``imgaussfilt`` smooths (:func:`matlab_gaussian`) and scaled (:class:`PeaksConfig`,
generator ``peaks``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .grid import TerrainConfig, _check_range, grid_xy

__all__ = ["PeaksConfig", "peaks_terrain", "peaks", "gaussian_smooth", "matlab_gaussian"]


def peaks(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """MATLAB's ``peaks(u, v)``:
    ``3 (1-u)^2 e^{-u^2-(v+1)^2} - 10 (u/5 - u^3 - v^5) e^{-u^2-v^2} - e^{-(u+1)^2-v^2} / 3``.
    """
    return (3 * (1 - u) ** 2 * np.exp(-u ** 2 - (v + 1) ** 2)
            - 10 * (u / 5 - u ** 3 - v ** 5) * np.exp(-u ** 2 - v ** 2)
            - np.exp(-(u + 1) ** 2 - v ** 2) / 3)


def _separable_gaussian(h: np.ndarray, sigma_px: float, r: int) -> np.ndarray:
    """A normalized Gaussian of ``2 r + 1`` taps (std ``sigma_px`` samples) along both axes,
    edges replicated."""
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma_px) ** 2)
    k /= k.sum()
    p = np.pad(h, r, mode="edge")
    p = np.apply_along_axis(lambda a: np.convolve(a, k, mode="valid"), 1, p)
    return np.apply_along_axis(lambda a: np.convolve(a, k, mode="valid"), 0, p)


def gaussian_smooth(h: np.ndarray, sigma_px: float) -> np.ndarray:
    """Separable Gaussian blur with standard deviation ``sigma_px`` samples (``3 sigma`` taps
    each side); edges replicated."""
    if sigma_px <= 0:
        return h.copy()
    return _separable_gaussian(h, sigma_px, max(1, int(math.ceil(3 * sigma_px))))


def matlab_gaussian(h: np.ndarray, sigma_px: float) -> np.ndarray:
    """MATLAB's ``imgaussfilt(h, sigma_px)``: a normalized Gaussian kernel of
    ``2 ceil(2 sigma) + 1`` taps per axis, separable, edges replicated."""
    if sigma_px <= 0:
        return h.copy()
    return _separable_gaussian(h, sigma_px, int(math.ceil(2 * sigma_px)))


@dataclass(frozen=True, kw_only=True)
class PeaksConfig(TerrainConfig):
    """MATLAB ``peaks`` stretched over the grid (``u, v`` in [-3, 3]), smoothed by MATLAB's
    ``imgaussfilt`` (``smoothing_px`` samples), then multiplied by ``scale`` or, with
    ``scale=None``, mapped linearly onto ``height_range``.

    The defaults are the four-wheel seed's example terrain, exactly: ``peaks(201)`` smoothed by
    ``imgaussfilt(., 3)`` (13 taps, replicate padding) and multiplied by 0.4, over 40 x 40 m at
    0.20 m (201 x 201, first sample at (-20, -20)): heights -2.5561 ... 3.1776 m.

    Attributes:
        smoothing_px: Gaussian sigma [samples] (0: none).
        scale: factor on the smoothed peaks [m]; None: map onto ``height_range`` instead.
        height_range: ``(z_min, z_max)`` of the result when ``scale`` is None [m].
    """

    smoothing_px: float = 3.0
    scale: float | None = 0.4
    height_range: tuple[float, float] = (-2.56, 3.18)

    def __post_init__(self):
        super().__post_init__()
        _check_range(self.height_range, "height_range")
        if not math.isfinite(self.smoothing_px) or self.smoothing_px < 0:
            raise ValueError(f"smoothing_px must be finite and >= 0, got {self.smoothing_px}")
        if self.scale is not None and not (isinstance(self.scale, (int, float))
                                           and math.isfinite(self.scale)):
            raise ValueError(f"scale must be a finite number or None, got {self.scale!r}")


def peaks_terrain(cfg: PeaksConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    u = x / (0.5 * cfg.size[0]) * 3.0
    v = y / (0.5 * cfg.size[1]) * 3.0
    z = matlab_gaussian(peaks(u, v), cfg.smoothing_px)
    if cfg.scale is not None:
        return z * float(cfg.scale)
    lo, hi = cfg.height_range
    zmin, zmax = z.min(), z.max()
    return lo + (z - zmin) * ((hi - lo) / (zmax - zmin))
