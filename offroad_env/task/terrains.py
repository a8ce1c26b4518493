"""The terrains of the registered tasks: the rough navigation map and the terrain families'
levels, scaled for a vehicle preset (:func:`offroad_env.make_config` uses them)."""

from __future__ import annotations

import math

import terrain as terrain_pkg

from offroad_env.task import task as tasks
from offroad_env.physics.vehicle import preset

__all__ = ["rough_terrain", "family_config", "traverse_terrain"]


def rough_terrain(size=(40.0, 40.0), resolution=(0.1, 0.1)) -> terrain_pkg.TerrainConfig:
    """The rough navigation terrain: hills (Perlin fBm, +-1.5 m), rocks up to 0.5 m high and
    40 holes of 0.4-1.2 m radius (a wheel over a hole ends the episode)."""
    grid = dict(size=size, resolution=resolution)
    base = terrain_pkg.SumConfig(**grid, parts=(
        terrain_pkg.PerlinConfig(**grid, octaves=5, frequency=0.08, amplitude=1.5),
        terrain_pkg.RocksConfig(**grid, count=250, radius_range=(0.2, 0.7),
                            height_range=(0.1, 0.5))))
    return terrain_pkg.HolesConfig(**grid, base=base, count=40, radius_range=(0.4, 1.2),
                               keep_center=0.0)


def family_config(vehicle: str = "husky", **grid) -> terrain_pkg.FamilyConfig:
    """The terrain families' :class:`terrain.FamilyConfig` scaled for the preset ``vehicle``:
    its static tip limits (:func:`~offroad_env.task.task.static_tip_limits`), wheel radius, wheel
    base and track; ``grid``: other fields (``size``, ``resolution``, ``num_levels``...). The
    ``real`` family's DEM is the packaged SRTM window unless ``dem`` names another file."""
    from offroad_env.data import data_file

    v = preset(vehicle)
    roll, pitch = tasks.static_tip_limits(v)
    xs = [p[0] for p in v.wheel_positions]
    ys = [p[1] for p in v.wheel_positions]
    grid.setdefault("dem", str(data_file("srtm1_n37w123_crop401.tif")))
    return terrain_pkg.FamilyConfig(
        roll_limit_deg=math.degrees(roll), pitch_limit_deg=math.degrees(pitch),
        wheel_radius=v.wheel_radius, wheel_base=max(xs) - min(xs), track_width=max(ys) - min(ys),
        **grid)


def traverse_terrain(vehicle: str = "husky", worlds: int = 2) -> terrain_pkg.LevelsConfig:
    """The traverse task's maps: ``worlds`` 24 x 24 m maps (0.1 m) of each of the 10 levels of
    every terrain family, scaled for ``vehicle``."""
    return terrain_pkg.LevelsConfig(family=family_config(vehicle, size=(24.0, 24.0),
                                                         resolution=(0.1, 0.1)), worlds=worlds)
