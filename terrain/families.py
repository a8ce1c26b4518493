"""Terrain families with difficulty levels, each level stated in physical terms.

A family is one entry of :data:`FAMILY_TABLE` (:func:`register_family`): a pure generator of
heights ``(ny, nx)`` (float64 numpy, the grid of :class:`~terrain.generators.TerrainConfig`)
and beside it the statement of what a level holds, in metres and degrees;
``family_level(cfg, level, rng)`` and ``level_spec(cfg, level)`` dispatch through it. Level ``l`` of
``L`` scales the family's feature by ``f = (l + 1) / L``; the top level goes ``overshoot`` (20 %)
past what tips the vehicle, using the vehicle's own static limits and dimensions, which the
config carries (this package knows nothing of vehicles: ``offroad_env`` fills them in from a
preset, see ``offroad_env.bench.family_config``).

Families (``f`` the level fraction; defaults are the Husky's figures):

* ``slopes``: hills (raised-cosine mounds of radius ``hill_radius``, overlapping by maximum) whose
  steepest slope is ``max_slope_deg = f * overshoot * min(roll, pitch limit)``; crossing one
  off-centre is a side slope.
* ``ditches``: straight trenches at random angles with planar walls of ``wall_deg = f *
  max_wall_deg`` (default ``overshoot * pitch_limit``) and depth ``depth = f * 1.5 * wheel_base``, flat bottoms
  ``1.5 * wheel_base`` wide.
* ``boulders``: raised-cosine boulders of height ``boulder_height = f * overshoot * track *
  tan(roll limit)`` (a boulder under one side rolls the body past the limit at the top level) and
  radius ``max(0.3, 0.75 * boulder_height)`` (flanks up to 64 deg).
* ``steps``: parallel ledges 2-4 m apart at a random angle, each a vertical rise or drop of
  ``step_height = f * max_step`` (default twice the wheel radius). A map resolves a ledge
  only where its spacing is finer than ``h / tan(theta)``, ``cos(theta) = 1 - h / r`` (a few
  cm); on a coarser grid the ledge is a one-cell ramp.
* ``rough``: fractal Perlin ground normalized to a height standard deviation of ``sigma = f *
  max_sigma`` (default 1.5 wheel radii).
* ``real``: windows of a real DEM (``dem``) of the map's size, level ``l`` those whose mean
  slope is in ``[l, l + 1) * real_max_slope_deg / L`` (:mod:`terrain.dem_windows`).
* ``soft_soil``: the ``slopes`` hills at ``max_slope_deg = f * soil_slope_deg``,
  ``soil_hill_density`` of them per square metre, with patches of
  the soils ``soils`` (a material map, :mod:`terrain.materials`; the rest ``"hard"``) covering
  the fraction ``soil_cover = f * max_soil_cover`` of the map, blobs of about ``patch_size``
  across (thresholded Perlin noise), each soil on alternate patches. Only the physical vehicle
  model sinks into soil; the other families are :data:`HARD_FAMILIES`.

A family may draw a material map beside its heights (:class:`Family` ``materials``), from its own
stream (``rng`` seeded ``(seed, i, 1)`` for map ``i`` of a stack, :func:`level_materials`), so
its heights are those of the same seed without materials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from .generators import TerrainConfig, grid_xy, perlin_fbm
from .materials import HARD

__all__ = ["FAMILIES", "HARD_FAMILIES", "FAMILY_TABLE", "family_materials", "level_materials", "Family", "register_family", "FamilyConfig", "family_level", "level_spec", "LevelsConfig",
           "level_maps"]

class Family(NamedTuple):
    """A terrain family: ``spec(cfg, f) -> dict``, what its level of fraction ``f`` (``(level +
    1) / num_levels``) holds in physical terms (metres, degrees); ``heights(cfg, spec, x, y,
    rng) -> (ny, nx)``, a map of that level on the grid ``x, y`` [m], every random number drawn
    from ``rng``; ``materials(cfg, spec, x, y, rng) -> ((ny, nx) ints, names)`` its material
    map (None: hard ground); ``data``: it reads a data file (``FamilyConfig.dem``), so it is
    in no default family set."""

    spec: Callable[["FamilyConfig", float], dict]
    heights: Callable[..., np.ndarray]
    materials: Callable | None = None
    data: bool = False


#: ``{name: Family}``, every terrain family, in order. A new family is one function decorated
#: with :func:`register_family` (its generator, with its ``level_spec`` beside it); a test checks
#: that every level's map holds its statement.
FAMILY_TABLE: dict[str, Family] = {}


def register_family(name: str, spec: Callable[["FamilyConfig", float], dict], materials=None,
                    data: bool = False):
    """Decorator: register the height generator it decorates as family ``name`` with its
    ``spec`` (and its material generator, if any) (once)."""
    def register(heights):
        if name in FAMILY_TABLE:
            raise ValueError(f"terrain family {name!r} is already registered")
        FAMILY_TABLE[name] = Family(spec, heights, materials, data)
        return heights
    return register


#: the ``slopes`` family's hills per square metre (``soft_soil``'s default too)
SLOPES_HILL_DENSITY = 1.0 / 40.0


@dataclass(frozen=True, kw_only=True)
class FamilyConfig(TerrainConfig):
    """A terrain family and the vehicle figures its levels are scaled by.

    Attributes:
        family: one of :data:`FAMILIES`.
        num_levels: levels ``0 .. num_levels - 1`` (>= 1).
        roll_limit_deg, pitch_limit_deg: the vehicle's static tip limits [deg].
        wheel_radius, wheel_base, track_width: [m].
        overshoot: the top level's feature over the one that tips the vehicle (1.2: 20 % past).
        hill_radius: radius of a ``slopes`` hill [m].
        soils: the soils of ``soft_soil``'s patches (names the physical model knows).
        soil_slope_deg: ``soft_soil``'s top slope [deg] (default 30: past the Husky's measured
            dry-sand climb limit, about 20 deg, below its hard-ground one at mu 0.8, 37 deg).
        max_soil_cover: the fraction of a ``soft_soil`` map its top level covers with soil.
        patch_size: a soil patch's typical size [m].
        soil_hill_density: ``soft_soil``'s hills per square metre (default 1/40, the
            ``slopes`` family's).
        max_step: ``steps``' top ledge [m] (None: ``2 * wheel_radius``, as v0 of OffroadBench).
        max_wall_deg: ``ditches``' top wall [deg] (None: ``overshoot * pitch_limit_deg``).
        max_sigma: ``rough``'s top height standard deviation [m] (None: ``1.5 *
            wheel_radius``).
        dem: the ``real`` family's digital elevation model, a GeoTIFF or any map file
            :func:`terrain.load` reads (None: the family cannot be drawn).
        real_max_slope_deg: ``real``'s levels split the windows' mean slope ``[0, this)``
            into equal bands [deg].
    """

    size: tuple[float, float] = (24.0, 24.0)
    resolution: tuple[float, float] = (0.1, 0.1)
    family: str = "slopes"
    num_levels: int = 10
    roll_limit_deg: float = 56.5
    pitch_limit_deg: float = 53.6
    wheel_radius: float = 0.1651
    wheel_base: float = 0.512
    track_width: float = 0.5708
    overshoot: float = 1.2
    hill_radius: float = 3.0
    soils: tuple[str, ...] = ("dry_sand", "clayey_soil")
    soil_slope_deg: float = 30.0
    max_soil_cover: float = 0.6
    patch_size: float = 4.0
    soil_hill_density: float = SLOPES_HILL_DENSITY
    max_step: float | None = None
    max_wall_deg: float | None = None
    max_sigma: float | None = None
    dem: str | None = None
    real_max_slope_deg: float = 40.0

    def __post_init__(self):
        super().__post_init__()
        if self.family not in FAMILY_TABLE:
            raise ValueError(f"family must be one of {tuple(FAMILY_TABLE)}, got "
                             f"{self.family!r}")
        if int(self.num_levels) != self.num_levels or self.num_levels < 1:
            raise ValueError(f"num_levels must be an int >= 1, got {self.num_levels!r}")
        for name in ("roll_limit_deg", "pitch_limit_deg"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0 < v < 90):
                raise ValueError(f"{name} must be in (0, 90) degrees, got {v!r}")
        soils = self.soils
        if isinstance(soils, str) or not soils or not all(isinstance(x, str) and x and x != HARD
                                                          for x in soils) or len(set(soils)) != len(soils):
            raise ValueError(f"soils must be distinct soil names (not {HARD!r}), got {soils!r}")
        object.__setattr__(self, "soils", tuple(soils))
        if not (math.isfinite(self.soil_slope_deg) and 0 < self.soil_slope_deg < 90):
            raise ValueError(f"soil_slope_deg must be in (0, 90) degrees, got "
                             f"{self.soil_slope_deg!r}")
        if not (math.isfinite(self.max_soil_cover) and 0 < self.max_soil_cover <= 1):
            raise ValueError(f"max_soil_cover must be in (0, 1], got {self.max_soil_cover!r}")
        for name in ("wheel_radius", "wheel_base", "track_width", "overshoot", "hill_radius",
                     "patch_size", "soil_hill_density", "max_step", "max_wall_deg", "max_sigma",
                     "real_max_slope_deg"):
            v = getattr(self, name)
            if v is None and name.startswith("max_"):
                continue
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        for name in ("max_wall_deg", "real_max_slope_deg"):
            if getattr(self, name) is not None and not getattr(self, name) < 90:
                raise ValueError(f"{name} must be in (0, 90) degrees, got {getattr(self, name)!r}")
        if self.dem is not None and not isinstance(self.dem, str):
            object.__setattr__(self, "dem", str(self.dem))

    def fraction(self, level: int) -> float:
        """``(level + 1) / num_levels``; ValueError for a level outside the family."""
        if int(level) != level or not 0 <= level < self.num_levels:
            raise ValueError(f"level must be an int in [0, {self.num_levels}), got {level!r}")
        return (int(level) + 1) / self.num_levels


def level_spec(cfg: FamilyConfig, level: int) -> dict:
    """What ``level`` of ``cfg.family`` holds, in physical terms (metres, degrees)."""
    return FAMILY_TABLE[cfg.family].spec(cfg, cfg.fraction(level))


def family_level(cfg: FamilyConfig, level: int, rng: np.random.Generator) -> np.ndarray:
    """Heights ``(ny, nx)`` [m] of ``level`` of ``cfg.family`` (see :func:`level_spec`), every
    random number drawn from ``rng``."""
    spec = level_spec(cfg, level)
    x, y = grid_xy(cfg)
    return FAMILY_TABLE[cfg.family].heights(cfg, spec, x, y, rng)


def family_materials(cfg: FamilyConfig, level: int, rng: np.random.Generator):
    """``((ny, nx) int material indices, names)`` of ``level`` of ``cfg.family``, drawn from
    ``rng``, or None for a family on hard ground."""
    gen = FAMILY_TABLE[cfg.family].materials
    if gen is None:
        return None
    x, y = grid_xy(cfg)
    return gen(cfg, level_spec(cfg, level), x, y, rng)


def _count(cfg: TerrainConfig, per_m2: float) -> int:
    return max(1, int(round(cfg.size[0] * cfg.size[1] * per_m2)))


def _bump(r: np.ndarray, radius: float) -> np.ndarray:
    """Raised cosine: 1 at r = 0, 0 from r = radius on; steepest slope pi / (2 radius)."""
    return np.where(r < radius, 0.5 * (1.0 + np.cos(np.pi * np.minimum(r / radius, 1.0))), 0.0)


def _mounds(cfg, x, y, centres, height, radius) -> np.ndarray:
    """The maximum of raised-cosine mounds of ``height`` and ``radius`` at ``centres``, each
    evaluated over its own window of the grid only."""
    z = np.zeros_like(x)
    xs, ys = x[0], y[:, 0]
    for cx, cy in zip(*centres):
        i0, i1 = np.searchsorted(xs, (cx - radius, cx + radius))
        j0, j1 = np.searchsorted(ys, (cy - radius, cy + radius))
        if i1 <= i0 or j1 <= j0:
            continue
        win = (slice(j0, j1), slice(i0, i1))
        r = np.hypot(x[win] - cx, y[win] - cy)
        z[win] = np.maximum(z[win], height * _bump(r, radius))
    return z


def _centres(cfg, rng, n):
    hx, hy = 0.5 * cfg.size[0], 0.5 * cfg.size[1]
    return rng.uniform(-hx, hx, n), rng.uniform(-hy, hy, n)


# ----------------------------------------------------------------------------- the families
@register_family("slopes", lambda cfg, f: {
    "max_slope_deg": f * cfg.overshoot * min(cfg.roll_limit_deg, cfg.pitch_limit_deg),
    "hill_radius": cfg.hill_radius})
def _slopes(cfg, spec, x, y, rng):
    """Raised-cosine hills whose steepest slope is the level's."""
    R = spec["hill_radius"]
    H = 2.0 * R * math.tan(math.radians(spec["max_slope_deg"])) / math.pi
    n = _count(cfg, spec.get("hill_density", SLOPES_HILL_DENSITY))
    return _mounds(cfg, x, y, _centres(cfg, rng, n), H, R)


def _top(value, default):
    return default if value is None else value


@register_family("ditches", lambda cfg, f: {
    "wall_deg": f * _top(cfg.max_wall_deg, cfg.overshoot * cfg.pitch_limit_deg),
    "depth": f * 1.5 * cfg.wheel_base, "bottom_width": 1.5 * cfg.wheel_base})
def _ditches(cfg, spec, x, y, rng):
    """Straight trenches at random angles with walls of the level's angle."""
    d, half_bottom = spec["depth"], 0.5 * spec["bottom_width"]
    run = d / math.tan(math.radians(spec["wall_deg"]))  # horizontal extent of a wall
    z = np.zeros_like(x)
    n = max(2, int(round(max(cfg.size) / 6.0)))
    angles = rng.uniform(0.0, np.pi, n)
    offsets = rng.uniform(-0.4, 0.4, n) * min(cfg.size)
    for a, off in zip(angles, offsets):
        s = np.abs(x * np.cos(a) + y * np.sin(a) - off)  # distance to the trench's axis
        z = np.minimum(z, -d * np.clip((half_bottom + run - s) / run, 0.0, 1.0))
    return z


def _boulders_spec(cfg, f):
    b = f * cfg.overshoot * cfg.track_width * math.tan(math.radians(cfg.roll_limit_deg))
    return {"boulder_height": b, "boulder_radius": max(0.3, 0.75 * b)}


@register_family("boulders", _boulders_spec)
def _boulders(cfg, spec, x, y, rng):
    """Raised-cosine boulders of the level's height."""
    b, rho = spec["boulder_height"], spec["boulder_radius"]
    return _mounds(cfg, x, y, _centres(cfg, rng, _count(cfg, 1 / 12)), b, rho)


@register_family("steps", lambda cfg, f: {
    "step_height": f * _top(cfg.max_step, 2.0 * cfg.wheel_radius)})
def _steps(cfg, spec, x, y, rng):
    """Parallel ledges up or down of the level's height, 2-4 m apart."""
    h = spec["step_height"]
    a = rng.uniform(0.0, np.pi)
    s = x * np.cos(a) + y * np.sin(a)
    reach = 0.5 * math.hypot(*cfg.size)
    z = np.zeros_like(x)
    pos = -reach + rng.uniform(0.0, 2.0)
    while pos < reach:
        z += np.where(s >= pos, h if rng.uniform() < 0.5 else -h, 0.0)
        pos += rng.uniform(2.0, 4.0)
    return z - np.median(z)


@register_family("rough", lambda cfg, f: {
    "sigma": f * _top(cfg.max_sigma, 1.5 * cfg.wheel_radius), "feature_length": 2.5})
def _rough(cfg, spec, x, y, rng):
    """Perlin fBm scaled to the level's standard deviation."""
    z = perlin_fbm(x, y, rng, octaves=4, lacunarity=2.0, gain=0.5,
                   frequency=1.0 / spec["feature_length"], amplitude=1.0)
    z = z - z.mean()
    return z * (spec["sigma"] / z.std())


def _soft_soil_spec(cfg, f):
    return {"max_slope_deg": f * cfg.soil_slope_deg, "soil_cover": f * cfg.max_soil_cover,
            "hill_radius": cfg.hill_radius, "patch_size": cfg.patch_size,
            "hill_density": cfg.soil_hill_density}


def _soil_patches(cfg, spec, x, y, rng):
    """Patches covering ``soil_cover`` of the map: Perlin noise of wavelength ``2 *
    patch_size`` above its ``1 - soil_cover`` quantile; a second field picks each patch's
    soil."""
    noise = lambda: perlin_fbm(x, y, rng, octaves=2, lacunarity=2.0, gain=0.4,  # noqa: E731
                               frequency=0.5 / spec["patch_size"], amplitude=1.0)
    a, b = noise(), noise()
    soft = a > np.quantile(a, 1.0 - spec["soil_cover"])
    k = len(cfg.soils)
    which = np.minimum((np.argsort(np.argsort(b, axis=None)).reshape(b.shape) * k) // b.size,
                       k - 1)  # equal shares of the second field's ranks
    return np.where(soft, 1 + which, 0), (HARD,) + tuple(cfg.soils)


@register_family("soft_soil", _soft_soil_spec, materials=_soil_patches)
def _soft_soil(cfg, spec, x, y, rng):
    """The ``slopes`` hills at the level's slope (the patches are the material map)."""
    return _slopes(cfg, spec, x, y, rng)


def _real_spec(cfg, f):
    from .dem_windows import level_band

    level = int(round(f * cfg.num_levels)) - 1
    lo, hi = level_band(cfg.real_max_slope_deg, level, cfg.num_levels)
    return {"min_mean_slope_deg": lo, "max_mean_slope_deg": hi}


@register_family("real", _real_spec, data=True)
def _real(cfg, spec, x, y, rng):
    """A window of the DEM ``cfg.dem`` whose mean slope is in the level's band
    (:mod:`terrain.dem_windows`)."""
    from .dem_windows import window_heights

    if cfg.dem is None:
        raise ValueError("the 'real' family needs a DEM: set FamilyConfig.dem to a map file")
    band = (spec["min_mean_slope_deg"], spec["max_mean_slope_deg"])
    return window_heights(cfg.dem, cfg.size, band, x, y, rng)


#: the registered family names, in order
FAMILIES = tuple(FAMILY_TABLE)
#: the families on hard ground (no material map) drawn without a data file: every model drives
#: them, and they are the default set of :class:`LevelsConfig`
HARD_FAMILIES = tuple(n for n, fam in FAMILY_TABLE.items()
                      if fam.materials is None and not fam.data)


@dataclass(frozen=True, kw_only=True)
class LevelsConfig(TerrainConfig):
    """A stack of family levels: ``worlds`` maps of every level of every family in
    ``families``, map ``(family_i * num_levels + level) * worlds + world`` (see
    :meth:`map_index`), each drawn from its own seed so a map does not depend on the others.

    Attributes: ``family``: the :class:`FamilyConfig` giving the grid, the levels and the
    vehicle figures (its ``family`` field is ignored); ``families``; ``worlds`` per level.
    """

    family: FamilyConfig = FamilyConfig()
    families: tuple[str, ...] = HARD_FAMILIES
    worlds: int = 2

    def __post_init__(self):
        object.__setattr__(self, "size", self.family.size)
        object.__setattr__(self, "resolution", self.family.resolution)
        super().__post_init__()
        bad = [f for f in self.families if f not in FAMILY_TABLE]
        if bad or not self.families or len(set(self.families)) != len(self.families):
            raise ValueError(f"families must be distinct names from {tuple(FAMILY_TABLE)}, got "
                             f"{self.families!r}")
        if int(self.worlds) != self.worlds or self.worlds < 1:
            raise ValueError(f"worlds must be an int >= 1, got {self.worlds!r}")

    @property
    def num_levels(self) -> int:
        return self.family.num_levels

    @property
    def num_maps(self) -> int:
        return len(self.families) * self.num_levels * self.worlds

    def map_index(self, family: int, level, world=0):
        """Index in the stack of ``world`` of ``level`` of family number ``family`` (ints or
        integer arrays/tensors)."""
        return (family * self.num_levels + level) * self.worlds + world


def level_maps(cfg: LevelsConfig, seed: int) -> list[np.ndarray]:
    """The heights of every map of ``cfg`` in stack order; map ``i`` is drawn from
    ``numpy.random.default_rng((seed, i))``."""
    from dataclasses import replace

    out = []
    for fi, fam in enumerate(cfg.families):
        fc = replace(cfg.family, family=fam)
        for level in range(cfg.num_levels):
            for w in range(cfg.worlds):
                i = cfg.map_index(fi, level, w)
                out.append(family_level(fc, level, np.random.default_rng((seed, i))))
    return out


def level_materials(cfg: LevelsConfig, seed: int):
    """``(materials (M, ny, nx) uint8, names)`` of every map of ``cfg`` in stack order (map
    ``i``'s from ``numpy.random.default_rng((seed, i, 1))``; maps of hard-ground families all
    ``"hard"``, names the union in order), or ``(None, None)`` when no family has materials."""
    from dataclasses import replace

    parts, names = [], [HARD]
    for fi, fam in enumerate(cfg.families):
        fc = replace(cfg.family, family=fam)
        for level in range(cfg.num_levels):
            for w in range(cfg.worlds):
                i = cfg.map_index(fi, level, w)
                got = family_materials(fc, level, np.random.default_rng((seed, i, 1)))
                if got is not None:
                    names += [n for n in got[1] if n not in names]
                    got = np.asarray([names.index(n) for n in got[1]])[got[0]]
                parts.append(got)
    if all(p is None for p in parts):
        return None, None
    ny, nx = cfg.family.samples[1], cfg.family.samples[0]
    return np.stack([np.zeros((ny, nx), np.uint8) if p is None else p.astype(np.uint8)
                     for p in parts]), tuple(names)
