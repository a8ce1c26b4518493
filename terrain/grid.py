"""The grid every terrain generator fills: :class:`TerrainConfig` (size, resolution, the checks
that hold for every generator) and :func:`grid_xy`, the sample coordinates relative to the grid
centre [m] (``x`` along columns, row ``iy`` growing with y)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["TerrainConfig", "grid_xy", "MAX_SAMPLES"]

#: the most samples a generated map may have (the file loaders' DEFAULT_MAX_PIXELS)
MAX_SAMPLES = 64 * 1024 * 1024


def _check_pair(value, name, positive=True):
    if len(value) != 2:
        raise ValueError(f"{name} must be a pair (x, y), got {value!r}")
    for v in value:
        if not math.isfinite(v) or (positive and v <= 0):
            raise ValueError(f"{name} must be finite{' and > 0' if positive else ''}, "
                             f"got {value!r}")


def _check_range(value, name, low=-math.inf, strict_low=False):
    lo, hi = value
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"{name} must be a finite (min, max) with min <= max, got {value!r}")
    if lo < low or (strict_low and lo <= low):
        raise ValueError(f"{name} must be {'>' if strict_low else '>='} {low}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TerrainConfig:
    """Grid of every generator.

    Attributes:
        size: ``(size_x, size_y)`` extent [m]; the sample count is ``round(size / res) + 1``.
        resolution: ``(res_x, res_y)`` sample spacing [m].
    """

    size: tuple[float, float] = (40.0, 40.0)
    resolution: tuple[float, float] = (0.2, 0.2)

    def __post_init__(self):
        for name in ("size", "resolution"):
            value = getattr(self, name)
            if isinstance(value, (int, float)):
                object.__setattr__(self, name, (float(value), float(value)))
            else:
                object.__setattr__(self, name, tuple(float(v) for v in value))
        _check_pair(self.size, "size")
        _check_pair(self.resolution, "resolution")
        nx, ny = self.samples
        if nx < 2 or ny < 2:
            raise ValueError(f"size {self.size} at resolution {self.resolution} gives {nx} x {ny} "
                             "samples; at least 2 per axis are needed")
        if nx * ny > MAX_SAMPLES:
            raise ValueError(f"size {self.size} at resolution {self.resolution} gives {nx} x {ny} "
                             f"samples; at most {MAX_SAMPLES:,} are generated (the file loaders' "
                             "limit): use a coarser resolution or a smaller size")

    @property
    def samples(self) -> tuple[int, int]:
        """``(nx, ny)``."""
        return (int(round(self.size[0] / self.resolution[0])) + 1,
                int(round(self.size[1] / self.resolution[1])) + 1)


def grid_xy(cfg: TerrainConfig) -> tuple[np.ndarray, np.ndarray]:
    """``(X, Y)``, each ``(ny, nx)`` [m], sample coordinates relative to the grid centre."""
    nx, ny = cfg.samples
    x = (np.arange(nx) - 0.5 * (nx - 1)) * cfg.resolution[0]
    y = (np.arange(ny) - 0.5 * (ny - 1)) * cfg.resolution[1]
    return np.meshgrid(x, y, indexing="xy")


def _pair(value, name: str) -> tuple[float, float]:
    """Return ``value`` as a pair of finite floats; a scalar is used for both axes."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (int, float, np.floating, np.integer)):
        value = (value, value)
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a pair of numbers, got {value!r}") from None
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return a, b


@dataclass(frozen=True)
class _Grid:
    nx: int
    ny: int
    res_x: float
    res_y: float
    x0: float
    y0: float
