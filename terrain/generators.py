"""Terrain generators: pure functions ``(config, rng) -> heights (ny, nx)`` in float64 numpy.

Each generator reads a frozen, keyword-only config and draws every random number from the
``numpy.random.Generator`` it is given, never from a global one: the same config and seed give
the same map, bit for bit. Coordinates inside a generator are metres relative to the grid
centre, ``x in [-size_x / 2, size_x / 2]``; row ``iy`` grows with y (the project's convention).

:func:`generate` dispatches on the config type, and :func:`make_heightmap` wraps the result in a
:class:`~terrain.HeightMap` centred at (0, 0). The grid (:class:`TerrainConfig`, :func:`grid_xy`)
lives in :mod:`terrain.grid` and the seed's peaks terrain in :mod:`terrain.peaks`; both are
re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Callable

import numpy as np

from .grid import TerrainConfig, _check_range, grid_xy
from .peaks import PeaksConfig, gaussian_smooth, matlab_gaussian, peaks, peaks_terrain

__all__ = [
    "TerrainConfig", "FlatConfig", "PlaneConfig", "PeaksConfig", "PerlinConfig", "BumpsConfig",
    "RocksConfig", "StepsConfig", "HolesConfig", "SumConfig", "GENERATORS", "generate",
    "make_heightmap", "grid_xy", "peaks", "perlin_fbm", "gaussian_smooth", "matlab_gaussian",
]


# ------------------------------------------------------------------------------- flat, plane
@dataclass(frozen=True, kw_only=True)
class FlatConfig(TerrainConfig):
    """Constant height ``z = height`` [m]."""

    height: float = 0.0


def flat(cfg: FlatConfig, rng: np.random.Generator) -> np.ndarray:
    nx, ny = cfg.samples
    return np.full((ny, nx), float(cfg.height))


@dataclass(frozen=True, kw_only=True)
class PlaneConfig(TerrainConfig):
    """Inclined plane ``z = slope_x * x + slope_y * y + height`` (x, y from the centre) [m]."""

    slope_x: float = 0.2
    slope_y: float = 0.0
    height: float = 0.0


def plane(cfg: PlaneConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    return cfg.slope_x * x + cfg.slope_y * y + cfg.height


# ------------------------------------------------------------------------------- Perlin fBm
def _fade(t):
    return t * t * t * (t * (t * 6 - 15) + 10)


def _perlin(px: np.ndarray, py: np.ndarray, perm: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """2-D gradient noise at lattice coordinates ``(px, py)``; about [-0.71, 0.71], 0 at nodes."""
    x0 = np.floor(px)
    y0 = np.floor(py)
    fx = px - x0
    fy = py - y0
    n = perm.size
    xi = x0.astype(np.int64) % n
    yi = y0.astype(np.int64) % n

    def corner(dx, dy):
        a = angles[perm[(perm[(xi + dx) % n] + yi + dy) % n]]
        return np.cos(a) * (fx - dx) + np.sin(a) * (fy - dy)

    u, v = _fade(fx), _fade(fy)
    n0 = corner(0, 0) + u * (corner(1, 0) - corner(0, 0))
    n1 = corner(0, 1) + u * (corner(1, 1) - corner(0, 1))
    return n0 + v * (n1 - n0)


def perlin_fbm(x, y, rng, *, octaves, lacunarity, gain, frequency, amplitude) -> np.ndarray:
    """Fractal Brownian motion of Perlin noise, vectorized over arrays ``x, y`` [m].

    ``sum_o amplitude * gain^o * perlin(frequency * lacunarity^o * (x, y) + shift_o)``, with a
    random permutation, gradient directions and shift per octave drawn from ``rng``.
    """
    out = np.zeros(np.broadcast(x, y).shape)
    for o in range(octaves):
        perm = rng.permutation(256)
        angles = rng.uniform(0.0, 2 * np.pi, 256)
        sx, sy = rng.uniform(0.0, 256.0, 2)
        f = frequency * lacunarity ** o
        out += amplitude * gain ** o * _perlin(x * f + sx, y * f + sy, perm, angles)
    return out


@dataclass(frozen=True, kw_only=True)
class PerlinConfig(TerrainConfig):
    """Fractal Perlin noise (fBm).

    Attributes:
        octaves: number of noise layers (>= 1).
        lacunarity: frequency ratio between octaves (> 0).
        gain: amplitude ratio between octaves (persistence, > 0).
        frequency: base frequency [1/m].
        amplitude: base amplitude [m]; heights stay within about +-0.71 * amplitude * sum(gain^o).
    """

    octaves: int = 4
    lacunarity: float = 2.0
    gain: float = 0.5
    frequency: float = 0.1
    amplitude: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        if int(self.octaves) != self.octaves or self.octaves < 1:
            raise ValueError(f"octaves must be an int >= 1, got {self.octaves}")
        for name in ("lacunarity", "gain", "frequency"):
            val = getattr(self, name)
            if not math.isfinite(val) or val <= 0:
                raise ValueError(f"{name} must be finite and > 0, got {val}")
        if not math.isfinite(self.amplitude) or self.amplitude < 0:
            raise ValueError(f"amplitude must be finite and >= 0, got {self.amplitude}")


def perlin(cfg: PerlinConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    return perlin_fbm(x, y, rng, octaves=int(cfg.octaves), lacunarity=cfg.lacunarity,
                      gain=cfg.gain, frequency=cfg.frequency, amplitude=cfg.amplitude)


# ------------------------------------------------------------------------------- bumps, rocks
def _uniform_xy(cfg, rng, count, margin=0.0):
    hx, hy = 0.5 * cfg.size[0] - margin, 0.5 * cfg.size[1] - margin
    return rng.uniform(-hx, hx, count), rng.uniform(-hy, hy, count)


@dataclass(frozen=True, kw_only=True)
class BumpsConfig(TerrainConfig):
    """Sum of ``count`` Gaussian bumps ``a exp(-r^2 / (2 s^2))`` at uniform random centres.

    Attributes:
        count: number of bumps.
        height_range: amplitude ``a`` range [m] (negative values dig dips).
        sigma_range: width ``s`` range [m] (> 0).
    """

    count: int = 20
    height_range: tuple[float, float] = (0.2, 1.0)
    sigma_range: tuple[float, float] = (1.0, 3.0)

    def __post_init__(self):
        super().__post_init__()
        if int(self.count) != self.count or self.count < 0:
            raise ValueError(f"count must be an int >= 0, got {self.count}")
        _check_range(self.height_range, "height_range")
        _check_range(self.sigma_range, "sigma_range", 0.0, strict_low=True)


def bumps(cfg: BumpsConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    n = int(cfg.count)
    cx, cy = _uniform_xy(cfg, rng, n)
    a = rng.uniform(*cfg.height_range, n)
    s = rng.uniform(*cfg.sigma_range, n)
    z = np.zeros_like(x)
    for i in range(n):  # loop over bumps (few), each vectorized over the grid
        z += a[i] * np.exp(-((x - cx[i]) ** 2 + (y - cy[i]) ** 2) / (2 * s[i] ** 2))
    return z


@dataclass(frozen=True, kw_only=True)
class RocksConfig(TerrainConfig):
    """``count`` rocks on flat ground: half-ellipsoids ``h sqrt(1 - (r / R)^2)`` with random
    footprint radius ``R``, height ``h`` and a random elliptical stretch and rotation; where
    rocks overlap the taller surface wins.

    Attributes:
        count: number of rocks.
        radius_range: footprint semi-axis ``R`` range [m] (> 0).
        height_range: rock height ``h`` range [m] (>= 0).
        elongation: the minor semi-axis is ``R`` times a factor in ``[elongation, 1]``.
    """

    count: int = 60
    radius_range: tuple[float, float] = (0.15, 0.6)
    height_range: tuple[float, float] = (0.05, 0.35)
    elongation: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        if int(self.count) != self.count or self.count < 0:
            raise ValueError(f"count must be an int >= 0, got {self.count}")
        _check_range(self.radius_range, "radius_range", 0.0, strict_low=True)
        _check_range(self.height_range, "height_range", 0.0)
        if not 0 < self.elongation <= 1:
            raise ValueError(f"elongation must be in (0, 1], got {self.elongation}")


def rocks(cfg: RocksConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    n = int(cfg.count)
    cx, cy = _uniform_xy(cfg, rng, n)
    ra = rng.uniform(*cfg.radius_range, n)
    rb = ra * rng.uniform(cfg.elongation, 1.0, n)
    h = rng.uniform(*cfg.height_range, n)
    th = rng.uniform(0.0, np.pi, n)
    z = np.zeros_like(x)
    for i in range(n):
        dx, dy = x - cx[i], y - cy[i]
        c, s = math.cos(th[i]), math.sin(th[i])
        q = ((c * dx + s * dy) / ra[i]) ** 2 + ((-s * dx + c * dy) / rb[i]) ** 2
        z = np.maximum(z, h[i] * np.sqrt(np.clip(1.0 - q, 0.0, None)))
    return z


# ------------------------------------------------------------------------------- steps
@dataclass(frozen=True, kw_only=True)
class StepsConfig(TerrainConfig):
    """Stairs along a direction: ``z = step_height * clip(floor((d - start) / step_length) + 1,
    0, count)`` where ``d = x cos(direction) + y sin(direction)`` [m]. ``count = 1`` is a single
    step at ``d = start``.

    Attributes:
        step_height: rise per step [m] (negative: going down).
        step_length: run per step [m] (> 0).
        count: number of steps (>= 1).
        start: distance from the centre of the first edge [m].
        direction: heading of the rise [rad].
    """

    step_height: float = 0.1
    step_length: float = 1.0
    count: int = 5
    start: float = 0.0
    direction: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        if not math.isfinite(self.step_length) or self.step_length <= 0:
            raise ValueError(f"step_length must be finite and > 0, got {self.step_length}")
        if int(self.count) != self.count or self.count < 1:
            raise ValueError(f"count must be an int >= 1, got {self.count}")
        for name in ("step_height", "start", "direction"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite, got {getattr(self, name)}")


def steps(cfg: StepsConfig, rng: np.random.Generator) -> np.ndarray:
    x, y = grid_xy(cfg)
    d = x * math.cos(cfg.direction) + y * math.sin(cfg.direction)
    k = np.clip(np.floor((d - cfg.start) / cfg.step_length) + 1, 0, int(cfg.count))
    return cfg.step_height * k


# ------------------------------------------------------------------------------- holes, sums
@dataclass(frozen=True, kw_only=True)
class HolesConfig(TerrainConfig):
    """A base terrain with ``count`` circular holes (NaN samples) at random centres.

    Attributes:
        base: the terrain to punch (default: flat at 0 m); its grid must equal this config's.
        count: number of holes.
        radius_range: hole radius range [m] (> 0).
        keep_center: radius around the centre kept free of holes [m] (a spawn area).
    """

    base: TerrainConfig | None = None
    count: int = 10
    radius_range: tuple[float, float] = (0.3, 1.0)
    keep_center: float = 2.0

    def __post_init__(self):
        super().__post_init__()
        if self.base is None:
            object.__setattr__(self, "base", FlatConfig(size=self.size, resolution=self.resolution))
        _same_grid(self, self.base)
        if int(self.count) != self.count or self.count < 0:
            raise ValueError(f"count must be an int >= 0, got {self.count}")
        _check_range(self.radius_range, "radius_range", 0.0, strict_low=True)


def holes(cfg: HolesConfig, rng: np.random.Generator) -> np.ndarray:
    z = generate(cfg.base, rng)
    x, y = grid_xy(cfg)
    n = int(cfg.count)
    cx, cy = _uniform_xy(cfg, rng, n)
    r = rng.uniform(*cfg.radius_range, n)
    mask = np.zeros(z.shape, dtype=bool)
    for i in range(n):
        if math.hypot(cx[i], cy[i]) < cfg.keep_center + r[i]:
            continue
        mask |= (x - cx[i]) ** 2 + (y - cy[i]) ** 2 <= r[i] ** 2
    z[mask] = np.nan
    return z


def _same_grid(outer: TerrainConfig, inner: TerrainConfig):
    if (tuple(inner.size), tuple(inner.resolution)) != (tuple(outer.size), tuple(outer.resolution)):
        raise ValueError(f"{type(inner).__name__} has size {inner.size} and resolution "
                         f"{inner.resolution}; {type(outer).__name__} has {outer.size} and "
                         f"{outer.resolution}: they must match")


@dataclass(frozen=True, kw_only=True)
class SumConfig(TerrainConfig):
    """Sum of terrains on the same grid, each drawn in turn from the same generator."""

    parts: tuple[TerrainConfig, ...] = ()

    def __post_init__(self):
        super().__post_init__()
        if not self.parts:
            raise ValueError("SumConfig needs at least one part")
        for p in self.parts:
            _same_grid(self, p)


def terrain_sum(cfg: SumConfig, rng: np.random.Generator) -> np.ndarray:
    z = generate(cfg.parts[0], rng)
    for p in cfg.parts[1:]:
        z = z + generate(p, rng)
    return z


#: Config type -> generator function, and the names used by the CLI.
GENERATORS: dict[str, tuple[type, Callable[[TerrainConfig, np.random.Generator], np.ndarray]]] = {
    "flat": (FlatConfig, flat),
    "plane": (PlaneConfig, plane),
    "peaks": (PeaksConfig, peaks_terrain),
    "perlin": (PerlinConfig, perlin),
    "bumps": (BumpsConfig, bumps),
    "rocks": (RocksConfig, rocks),
    "steps": (StepsConfig, steps),
    "holes": (HolesConfig, holes),
    "sum": (SumConfig, terrain_sum),
}
_BY_TYPE = {cls: fn for cls, fn in GENERATORS.values()}


def generate(cfg: TerrainConfig, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Heights ``(ny, nx)`` [m] (float64, NaN for holes) of any generator config.

    ``rng`` is a ``numpy.random.Generator``, or an int seed for ``numpy.random.default_rng``.
    """
    if not isinstance(rng, np.random.Generator):
        if rng is not None and not isinstance(rng, (int, np.integer)):
            raise TypeError(f"rng must be a numpy Generator or an int seed, got {rng!r}")
        rng = np.random.default_rng(rng)
    fn = _BY_TYPE.get(type(cfg))
    if fn is None:
        raise TypeError(f"no generator for {type(cfg).__name__}; known: "
                        f"{[c.__name__ for c in _BY_TYPE]}")
    z = fn(cfg, rng)
    nx, ny = cfg.samples
    assert z.shape == (ny, nx), (z.shape, (ny, nx))
    return z


def make_heightmap(cfg: TerrainConfig, rng=None, **kwargs):
    """A :class:`~terrain.HeightMap` of ``generate(cfg, rng)`` centred at (0, 0).

    ``kwargs`` go to :class:`~terrain.HeightMap` (``center``, ``interpolation``, ``dtype``...).
    """
    from .heightmap import HeightMap

    return HeightMap(generate(cfg, rng), cfg.resolution, **kwargs)


def config_fields(cls: type) -> list:
    """Dataclass fields of a generator config (for the CLI)."""
    return [f for f in fields(cls) if f.init]
