"""Height-map terrain: grid and placement, batched torch queries, file I/O and generators.

This package knows nothing of vehicles. Conventions: world frame z up, metres; heights
``H[iy, ix]`` with ``iy`` growing with y; see :mod:`terrain.heightmap`.
"""

from .generators import (
    GENERATORS,
    BumpsConfig,
    FlatConfig,
    HolesConfig,
    PeaksConfig,
    PerlinConfig,
    PlaneConfig,
    RocksConfig,
    StepsConfig,
    SumConfig,
    TerrainConfig,
    generate,
    make_heightmap,
)
from .families import (
    FAMILIES,
    HARD_FAMILIES,
    FamilyConfig,
    LevelsConfig,
    family_level,
    family_materials,
    level_maps,
    level_materials,
    level_spec,
)
from .materials import HARD, material_at, soft_materials
from .heightmap import INTERPOLATIONS, HeightMap, stack
from .io import DEFAULT_MAX_PIXELS, MAP_SUFFIXES, TerrainFileError, load, save, sidecar_path
from .preview import HOLE_COLOUR, hillshade, preview_image, save_preview, statistics
from .cache import cached_levels

__all__ = [
    "HeightMap", "stack", "INTERPOLATIONS", "load", "save", "sidecar_path", "TerrainFileError",
    "MAP_SUFFIXES",
    "DEFAULT_MAX_PIXELS", "TerrainConfig", "FlatConfig", "PlaneConfig", "PeaksConfig",
    "PerlinConfig", "BumpsConfig", "RocksConfig", "StepsConfig", "HolesConfig", "SumConfig",
    "GENERATORS", "generate", "make_heightmap", "HOLE_COLOUR", "hillshade", "preview_image", "save_preview",
    "statistics", "FAMILIES", "FamilyConfig", "LevelsConfig", "family_level", "level_maps",
    "level_spec", "HARD_FAMILIES", "family_materials", "level_materials", "HARD", "material_at", "soft_materials",
    "cached_levels",
]
