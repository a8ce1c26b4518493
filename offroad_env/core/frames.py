"""The maps of a config (:func:`build_maps`) and the simulation frame: where the simulator places
its origin for a map (the map centre, and a multiple of 64 m in z), and the map moved there. The state and the ground contact live in this
frame; the Gymnasium seams convert to and from world coordinates (float64)."""

from __future__ import annotations

import functools

import numpy as np
import torch

import terrain as terrain_pkg
from terrain import HeightMap

__all__ = ["Z_ORIGIN_STEP", "local_origin", "localize", "build_maps", "to_local", "to_world"]


@functools.lru_cache(maxsize=4)
def _level_stack(levels: terrain_pkg.LevelsConfig, seed: int) -> HeightMap:
    """The level stack of ``levels``; a large one is read from the disk cache where an env built
    alike made it before (:mod:`terrain.cache`: the same maps bit for bit)."""
    heights, materials, names = terrain_pkg.cached_levels(levels, seed)
    return HeightMap(torch.from_numpy(heights), levels.resolution, materials=materials,
                     material_names=names)


def build_maps(cfg) -> HeightMap:
    """The world-frame height-map stack of a :class:`~offroad_env.sim.config.SimConfig`: its
    ``heightmap``, every map of its levels, or ``num_maps`` maps generated from
    ``terrain_seed``."""
    if cfg.heightmap is not None:
        return cfg.heightmap
    if isinstance(cfg.terrain, terrain_pkg.LevelsConfig):  # every map of the levels, once
        return _level_stack(cfg.terrain, cfg.terrain_seed)
    gen = np.random.default_rng(cfg.terrain_seed)
    return HeightMap.stack([terrain_pkg.make_heightmap(cfg.terrain, gen)
                            for _ in range(cfg.num_maps)])


#: the z origin of the simulation frame is a multiple of this [m] (so maps within +-32 m of
#: z = 0, all the built-in ones, simulate at their own heights, bit for bit as before)
Z_ORIGIN_STEP = 64.0


def local_origin(maps: HeightMap) -> tuple[float, float, float]:
    """The world point ``(x, y, z)`` [m] at which the simulation frame is placed for ``maps``:
    the grid centre, and the multiple of :data:`Z_ORIGIN_STEP` nearest the middle of the finite
    world heights. A float32 env at UTM coordinates (x ~ 5e5 m, one ulp 3 cm) would move its
    vehicles in steps of centimetres and difference its IMU from them; in the local frame its
    numbers are as small as on a map at the origin."""
    cx, cy = maps.center
    h = maps.world_heights()
    finite = h[torch.isfinite(h)]
    mid = 0.0 if finite.numel() == 0 else 0.5 * (float(finite.min()) + float(finite.max()))
    return (cx, cy, Z_ORIGIN_STEP * round(mid / Z_ORIGIN_STEP))


def localize(maps: HeightMap, origin, device, dtype) -> HeightMap:
    """``maps`` moved into the simulation frame at ``origin`` (before the dtype cast)."""
    ox, oy, oz = origin
    if ox or oy or oz:
        maps = maps.translated(-ox, -oy, -oz)
    return maps.to(device=device, dtype=dtype)


def to_local(origin, xy, dtype, device) -> torch.Tensor:
    """World ``(..., 2)`` points [m] (any float dtype; float64 keeps UTM digits) in the
    simulation frame at ``origin``, in ``dtype``."""
    ox, oy, _ = origin
    xy = torch.as_tensor(xy, device=device).to(torch.float64)
    return (xy - xy.new_tensor((ox, oy))).to(dtype)


def to_world(origin, p: torch.Tensor) -> torch.Tensor:
    """Simulation-frame ``(..., 2)`` or ``(..., 3)`` points [m] in the world frame (the frame
    at ``origin``), float64."""
    o = torch.tensor(origin[:p.shape[-1]], dtype=torch.float64, device=p.device)
    return p.to(torch.float64) + o
