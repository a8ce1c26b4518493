"""Height maps on a regular grid with batched torch queries.

Conventions (the whole project keeps them):

* World frame: right-handed, z up, metres.
* Grid: ``heights[m, iy, ix]`` -- map ``m`` of a stack, ``iy`` grows with world y and ``ix`` with
  world x. Sample ``[iy, ix]`` lies at ``(x0 + ix * res_x, y0 + iy * res_y)`` where ``(x0, y0)``
  is the world position of sample ``[0, 0]`` (the grid's minimum corner). The map covers
  ``[x0, x0 + (nx - 1) * res_x] x [y0, y0 + (ny - 1) * res_y]``; its centre is the middle of that.
* A map's world height is ``sample + z_offset`` (one offset per map of a stack).
* Holes: NaN or +-inf samples. Every query whose cell touches a hole returns NaN (inf samples are
  stored as NaN), so a hole never turns into a finite, wrong height.
* Outside the grid a query uses the nearest edge sample (the surface is extended flat across the
  border); :meth:`HeightMap.in_bounds` tells which points were inside.

Interpolation: ``"bilinear"`` (the four-wheel seed's lookup) or ``"triangles"`` (raisim, MuJoCo),
in :mod:`terrain.interpolation`; both exact at the nodes and on planes. Gradients flow from the
heights and normals to the query coordinates (the grid indices are piecewise constant).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import torch

from .grid import _Grid, _pair
from .interpolation import INTERPOLATIONS
from .materials import check_material_defs, check_materials, merge, merge_material_defs
from .queries import HeightQueries

__all__ = ["HeightMap", "INTERPOLATIONS"]


class HeightMap(HeightQueries):
    """One height map, or a stack of equal-size maps, with batched torch queries.

    Args:
        heights: ``(ny, nx)`` or ``(M, ny, nx)`` heights [m] (tensor or array). NaN/inf = hole.
        resolution: sample spacing ``res`` or ``(res_x, res_y)`` [m]; finite and > 0.
        center: world ``(x, y)`` of the grid centre [m]; default ``(0, 0)`` (raisim's placement).
        origin: world ``(x, y)`` of sample ``[0, 0]`` [m]; give this *or* ``center``.
        z_offset: added to every height [m]; a scalar or one value per map.
        interpolation: ``"bilinear"`` (default) or ``"triangles"``.
        dtype: ``torch.float32`` (default) or ``torch.float64``.
        device: any torch device.
        materials, material_names: an optional material map (:mod:`terrain.materials`): per
            sample an index (``(ny, nx)`` or ``(M, ny, nx)`` ints) into ``material_names``.
        material_defs: materials declared by name beside the built-in tables, ``{name:
            {"mu": ..., "c_rr": ...}}`` (a surface) or ``{name: {"n", "k_c", "k_phi", "c",
            "phi_deg", "K"}}`` (a soil) (:func:`terrain.materials.check_material_defs`).

    A map is a value: it is not changed after construction. ``len(hm)`` is the number of maps
    ``M`` and ``hm[i]`` is map ``i`` alone.
    """

    def __init__(
        self,
        heights,
        resolution=1.0,
        *,
        center=None,
        origin=None,
        z_offset=0.0,
        interpolation: str = "bilinear",
        dtype: torch.dtype = torch.float32,
        device=None,
        materials=None,
        material_names=None,
        material_defs=None,
    ):
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}"
            )
        if isinstance(heights, torch.Tensor):
            h = heights.detach().to(device=device if device is not None else heights.device,
                                    dtype=dtype)
        else:
            arr = np.asarray(heights)
            if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
                raise ValueError(f"heights must be numeric, got dtype {arr.dtype}")
            h = torch.as_tensor(np.ascontiguousarray(arr, dtype=np.float64)).to(
                device=device, dtype=dtype)
        if h.ndim == 2:
            h = h.unsqueeze(0)
        if h.ndim != 3:
            raise ValueError(
                f"heights must have shape (ny, nx) or (M, ny, nx), got {tuple(h.shape)}")
        num_maps, ny, nx = h.shape
        if nx < 2 or ny < 2:
            raise ValueError(
                f"a height map needs at least 2 samples on each axis, got ny={ny}, nx={nx}")
        if num_maps < 1:
            raise ValueError("a stack needs at least one map")
        res_x, res_y = _pair(resolution, "resolution")
        if res_x <= 0 or res_y <= 0:
            raise ValueError(f"resolution must be > 0, got {(res_x, res_y)}")
        if center is not None and origin is not None:
            raise ValueError("give either center or origin, not both")
        if origin is not None:
            x0, y0 = _pair(origin, "origin")
        else:
            cx, cy = _pair(center if center is not None else (0.0, 0.0), "center")
            x0, y0 = cx - 0.5 * (nx - 1) * res_x, cy - 0.5 * (ny - 1) * res_y
        # Holes are stored as NaN (inf * 0 would give NaN anyway, inf * w would not).
        h = torch.where(torch.isfinite(h), h, torch.full_like(h, float("nan"))).contiguous()
        zo = torch.as_tensor(z_offset, dtype=torch.float64).reshape(-1)
        if zo.numel() == 1:
            zo = zo.expand(num_maps)
        if zo.numel() != num_maps or not bool(torch.isfinite(zo).all()):
            raise ValueError(
                f"z_offset must be a finite scalar or one value per map ({num_maps}), "
                f"got {z_offset!r}")
        self._heights = h
        self._materials, self.material_names = check_materials(materials, material_names,
                                                               h.shape, h.device)
        self._material_defs = check_material_defs(material_defs)
        self._has_holes = bool(torch.isnan(h).any())  # maps are immutable; read once
        self._z_offset = zo.to(device=h.device, dtype=dtype).contiguous()
        self._grid = _Grid(nx=nx, ny=ny, res_x=res_x, res_y=res_y, x0=x0, y0=y0)
        self.interpolation = interpolation
        # Flat lookup table with the offsets applied, gathered by every query.
        if bool((self._z_offset == 0).all()):
            self._table = h.reshape(-1)
        else:
            self._table = (h + self._z_offset[:, None, None]).reshape(-1)
        # int32 indices halve the memory traffic of the gather when the table allows them.
        self._index_dtype = torch.int32 if self._table.numel() + nx + 1 < 2**31 else torch.int64
        self._taps = (0, 1, nx, nx + 1)  # flat offsets of a cell's corners 00, 10, 01, 11
        self._tap_offsets = torch.tensor(self._taps, dtype=self._index_dtype,
                                         device=h.device).view(4, 1)

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def stack(cls, maps: Sequence["HeightMap"]) -> "HeightMap":
        """Stack single maps of equal shape, resolution and placement into one ``(M, ny, nx)`` map.

        Each map keeps its own z offset. Use the map index of the queries to pick one.
        """
        maps = list(maps)
        if not maps:
            raise ValueError("stack needs at least one map")
        g0 = maps[0]._grid
        for i, m in enumerate(maps):
            if m._grid != g0:
                raise ValueError(
                    f"map {i} has grid {m._grid}, map 0 has {g0}: a stack needs equal sample "
                    "counts, resolution and placement")
            if m.dtype != maps[0].dtype or m.device != maps[0].device:
                raise ValueError(f"map {i} has dtype/device {m.dtype}/{m.device}, "
                                 f"map 0 has {maps[0].dtype}/{maps[0].device}")
        heights = torch.cat([m._heights for m in maps])
        z_off = torch.cat([m._z_offset for m in maps])
        mat, names = merge([(m._materials, m.material_names, m._heights) for m in maps])
        defs = merge_material_defs([m._material_defs for m in maps])
        return cls(heights, (g0.res_x, g0.res_y), origin=(g0.x0, g0.y0), z_offset=z_off,
                   interpolation=maps[0].interpolation, dtype=maps[0].dtype,
                   device=maps[0].device, materials=mat, material_names=names,
                   material_defs=defs)

    def _replace(self, **changes) -> "HeightMap":
        g = self._grid
        kw = dict(heights=self._heights, resolution=(g.res_x, g.res_y), origin=(g.x0, g.y0),
                  z_offset=self._z_offset, interpolation=self.interpolation, dtype=self.dtype,
                  device=self.device, materials=self._materials,
                  material_names=self.material_names, material_defs=self._material_defs)
        kw.update(changes)
        heights = kw.pop("heights")
        resolution = kw.pop("resolution")
        return HeightMap(heights, resolution, **kw)

    def to(self, device=None, dtype: torch.dtype | None = None) -> "HeightMap":
        """A copy on another device and/or dtype."""
        return self._replace(device=device if device is not None else self.device,
                             dtype=dtype if dtype is not None else self.dtype)

    def translated(self, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> "HeightMap":
        """The same surface moved by ``(dx, dy, dz)`` [m]: the origin moves by ``(dx, dy)`` and
        every sample by ``dz`` (added in float64, then stored in the map's dtype, so moving a
        float64 map at large coordinates to small ones keeps its precision in float32)."""
        dx, dy, dz = (float(v) for v in (dx, dy, dz))
        if not all(math.isfinite(v) for v in (dx, dy, dz)):
            raise ValueError(f"translation must be finite, got {(dx, dy, dz)}")
        g = self._grid
        heights = self._heights if dz == 0.0 else (self._heights.double() + dz)
        return self._replace(heights=heights, origin=(g.x0 + dx, g.y0 + dy))

    _KEEP = object()

    def with_materials(self, materials=_KEEP, material_names=_KEEP,
                       material_defs=_KEEP) -> "HeightMap":
        """The same heights with another material map (``materials`` ``(ny, nx)`` or ``(M, ny,
        nx)`` ints and their ``material_names``) and/or declared materials (each left out:
        this map's)."""
        keep = HeightMap._KEEP
        changes = {k: v for k, v in (("materials", materials), ("material_names",
                                                                material_names),
                                     ("material_defs", material_defs)) if v is not keep}
        return self._replace(**changes)

    def with_interpolation(self, interpolation: str) -> "HeightMap":
        """The same map with another interpolation."""
        return self._replace(interpolation=interpolation)

    def __len__(self) -> int:
        return self._heights.shape[0]

    def __getitem__(self, index: int) -> "HeightMap":
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"map index must be an int, got {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"map index {index} out of range for a stack of {len(self)}")
        index = int(index) % len(self)
        mat = None if self._materials is None else self._materials[index]
        return self._replace(heights=self._heights[index], z_offset=self._z_offset[index],
                             materials=mat)

    # ------------------------------------------------------------------ properties
    @property
    def heights(self) -> torch.Tensor:
        """Raw samples [m], ``(ny, nx)`` for one map or ``(M, ny, nx)`` for a stack (NaN = hole).

        The z offset is not included.
        """
        return self._heights[0] if len(self) == 1 else self._heights

    @property
    def materials(self) -> torch.Tensor | None:
        """The material map, ``(M, ny, nx)`` uint8 indices into ``material_names`` (None:
        none given; :mod:`terrain.materials`)."""
        return self._materials

    @property
    def material_defs(self) -> dict[str, dict[str, float]]:
        """The materials this map declares, ``{name: {parameter: value}}`` (``{}``: none;
        :mod:`terrain.materials`)."""
        return {name: dict(params) for name, params in self._material_defs}

    @property
    def material_defs_key(self) -> tuple:
        """The declarations in a hashable form (a cache key's part)."""
        return self._material_defs

    @property
    def z_offset(self) -> torch.Tensor:
        """``(M,)`` z offset of each map [m]."""
        return self._z_offset

    @property
    def num_maps(self) -> int:
        return len(self)

    @property
    def shape(self) -> tuple[int, int]:
        """``(ny, nx)`` samples of one map."""
        return (self._grid.ny, self._grid.nx)

    @property
    def nx(self) -> int:
        return self._grid.nx

    @property
    def ny(self) -> int:
        return self._grid.ny

    @property
    def resolution(self) -> tuple[float, float]:
        """``(res_x, res_y)`` sample spacing [m]."""
        return (self._grid.res_x, self._grid.res_y)

    @property
    def origin(self) -> tuple[float, float]:
        """World ``(x, y)`` of sample ``[0, 0]`` (the minimum corner) [m]."""
        return (self._grid.x0, self._grid.y0)

    @property
    def size(self) -> tuple[float, float]:
        """Extent ``((nx - 1) res_x, (ny - 1) res_y)`` [m]."""
        g = self._grid
        return ((g.nx - 1) * g.res_x, (g.ny - 1) * g.res_y)

    @property
    def center(self) -> tuple[float, float]:
        """World ``(x, y)`` of the grid centre [m]."""
        sx, sy = self.size
        return (self._grid.x0 + 0.5 * sx, self._grid.y0 + 0.5 * sy)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(x_min, x_max, y_min, y_max)`` [m]."""
        sx, sy = self.size
        g = self._grid
        return (g.x0, g.x0 + sx, g.y0, g.y0 + sy)

    @property
    def dtype(self) -> torch.dtype:
        return self._heights.dtype

    @property
    def device(self) -> torch.device:
        return self._heights.device

    @property
    def has_holes(self) -> bool:
        """Whether any sample is a hole (NaN); computed once, when the map is built."""
        return self._has_holes

    def x_coords(self) -> torch.Tensor:
        """``(nx,)`` world x of the sample columns [m]."""
        g = self._grid
        return g.x0 + g.res_x * torch.arange(g.nx, dtype=torch.float64, device=self.device).to(
            self.dtype)

    def y_coords(self) -> torch.Tensor:
        """``(ny,)`` world y of the sample rows [m]."""
        g = self._grid
        return g.y0 + g.res_y * torch.arange(g.ny, dtype=torch.float64, device=self.device).to(
            self.dtype)

    def world_heights(self) -> torch.Tensor:
        """Samples with the z offset applied, shaped like :attr:`heights` [m]."""
        h = self._table.view(len(self), self.ny, self.nx)
        return h[0] if len(self) == 1 else h

    def __repr__(self) -> str:
        g = self._grid
        return (f"HeightMap(maps={len(self)}, samples=({g.ny}, {g.nx}), "
                f"resolution=({g.res_x:g}, {g.res_y:g}), origin=({g.x0:g}, {g.y0:g}), "
                f"interpolation={self.interpolation!r}, dtype={self.dtype}, device={self.device})")


def stack(maps: Iterable[HeightMap]) -> HeightMap:
    """Module-level alias of :meth:`HeightMap.stack`."""
    return HeightMap.stack(list(maps))
