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
from .interpolation import INTERPOLATIONS, cell_gradient, cell_height
from .materials import check_materials, merge

__all__ = ["HeightMap", "INTERPOLATIONS"]


class HeightMap:
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
        return cls(heights, (g0.res_x, g0.res_y), origin=(g0.x0, g0.y0), z_offset=z_off,
                   interpolation=maps[0].interpolation, dtype=maps[0].dtype,
                   device=maps[0].device, materials=mat, material_names=names)

    def _replace(self, **changes) -> "HeightMap":
        g = self._grid
        kw = dict(heights=self._heights, resolution=(g.res_x, g.res_y), origin=(g.x0, g.y0),
                  z_offset=self._z_offset, interpolation=self.interpolation, dtype=self.dtype,
                  device=self.device, materials=self._materials,
                  material_names=self.material_names)
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

    # ------------------------------------------------------------------ queries
    def _coords(self, x, y, map_index):
        """Convert query inputs to tensors of the map's dtype/device, broadcast to one shape."""
        x = self._as_tensor(x, "x")
        y = self._as_tensor(y, "y")
        if x.shape != y.shape:
            x, y = torch.broadcast_tensors(x, y)
        if map_index is None:
            if len(self) != 1:
                raise ValueError(
                    f"this is a stack of {len(self)} maps: pass map_index (int or tensor of ints "
                    "broadcastable to the query shape)")
            offset = None
        else:
            if isinstance(map_index, torch.Tensor):
                if map_index.dtype.is_floating_point or map_index.dtype == torch.bool:
                    raise TypeError(f"map_index must hold integers, got {map_index.dtype}")
                if map_index.device != self.device:
                    raise ValueError(f"map_index is on {map_index.device}, the map on "
                                     f"{self.device}")
                mi = map_index.to(torch.int64)
            else:
                arr = np.asarray(map_index)
                if not np.issubdtype(arr.dtype, np.integer):
                    raise TypeError(f"map_index must hold integers, got {map_index!r}")
                if arr.size and (arr.min() < 0 or arr.max() >= len(self)):
                    raise IndexError(
                        f"map_index {map_index!r} out of range for a stack of {len(self)} maps")
                mi = torch.as_tensor(arr, dtype=torch.int64, device=self.device)
            offset = mi * (self.nx * self.ny)
        return x, y, offset

    def _as_tensor(self, v, name):
        if isinstance(v, torch.Tensor):
            if v.device != self.device:
                raise ValueError(f"{name} is on {v.device}, the map on {self.device}: "
                                 "move one of them")
            if not v.dtype.is_floating_point:
                v = v.to(self.dtype)
            elif v.dtype != self.dtype:
                v = v.to(self.dtype)
            return v
        return torch.as_tensor(v, dtype=self.dtype, device=self.device)

    def _cells(self, x, y, map_index):
        """Gather the four corner samples of the cell under each point.

        Returns ``h00, h10, h01, h11, fx, fy, u, v`` shaped like the query, where ``h10`` is the
        sample at ``ix + 1`` and ``h01`` at ``iy + 1``, ``fx, fy`` in ``[0, 1]`` are the
        (differentiable) fractions across the cell, and ``u, v`` the unclamped grid coordinates
        [samples] (outside ``[0, n - 1]`` off the map).
        """
        x, y, offset = self._coords(x, y, map_index)
        g = self._grid
        u = (x - g.x0) * (1.0 / g.res_x)
        v = (y - g.y0) * (1.0 / g.res_y)
        uc = u.clamp(0.0, g.nx - 1)
        vc = v.clamp(0.0, g.ny - 1)
        # Cell indices. uc >= 0, so truncation is floor. A NaN coordinate converts to some
        # integer that the clamp puts back on the grid; its NaN fraction makes the result NaN.
        iu = uc.detach().to(self._index_dtype).clamp_(0, g.nx - 2)
        iv = vc.detach().to(self._index_dtype).clamp_(0, g.ny - 2)
        fx = uc - iu
        fy = vc - iv
        base = iv.mul_(g.nx).add_(iu)
        if offset is not None:
            base = base + offset.to(self._index_dtype)
        shape = base.shape
        # the corners 00, 10, 01, 11; eager: one gather of (4, P) indices (one dispatch);
        # compiled: a gather per corner, fused by inductor into one loop over the points that
        # reads a point's taps together: the same values, faster (BENCHMARKS.md, terrain)
        try:
            if torch.compiler.is_compiling():
                taps = [torch.index_select(self._table, 0, (base + o).reshape(-1)).view(shape)
                        for o in self._taps]
            else:
                idx = base.reshape(1, -1) + self._tap_offsets
                taps = torch.index_select(self._table, 0, idx.view(-1)).view(4, *shape)
        except (RuntimeError, IndexError) as exc:  # map index out of range (tensor path)
            raise IndexError(
                f"map_index out of range for a stack of {len(self)} maps") from exc
        return taps[0], taps[1], taps[2], taps[3], fx, fy, u, v

    def height(self, x, y, map_index=None) -> torch.Tensor:
        """Terrain height [m] at world ``(x, y)`` [m].

        Args:
            x, y: tensors (or arrays, numbers) of any broadcastable shape ``S``, world frame [m].
            map_index: map of the stack for each point, ints broadcastable to ``S``; may be
                omitted for a single map.

        Returns:
            ``S`` heights in the map's dtype; NaN where the cell touches a hole or a coordinate
            is NaN. Differentiable w.r.t. ``x`` and ``y``.
        """
        return cell_height(self.interpolation, *self._cells(x, y, map_index)[:6])

    def slope(self, x, y, map_index=None) -> tuple[torch.Tensor, torch.Tensor]:
        """Surface gradient ``(dz/dx, dz/dy)`` [m/m] of the interpolant at world ``(x, y)`` (0
        across the border outside the grid; on a cell edge, the cell at the higher index's)."""
        return self.height_slope(x, y, map_index)[1:]

    def height_slope(self, x, y, map_index=None):
        """``(height, dz/dx, dz/dy)`` of :meth:`height` and :meth:`slope` from one lookup."""
        h00, h10, h01, h11, fx, fy, u, v = self._cells(x, y, map_index)
        g = self._grid
        du, dv = cell_gradient(self.interpolation, h00, h10, h01, h11, fx, fy)
        inside_u = (u >= 0) & (u <= g.nx - 1)
        inside_v = (v >= 0) & (v <= g.ny - 1)
        zero = torch.zeros((), dtype=du.dtype, device=du.device)
        dzdx = torch.where(inside_u | torch.isnan(u), du, zero * du) * (1.0 / g.res_x)
        dzdy = torch.where(inside_v | torch.isnan(v), dv, zero * dv) * (1.0 / g.res_y)
        return cell_height(self.interpolation, h00, h10, h01, h11, fx, fy), dzdx, dzdy

    def normal(self, x, y, map_index=None) -> torch.Tensor:
        """Unit surface normal pointing up (+z side), world frame; shape ``S + (3,)``.

        ``n = (-dz/dx, -dz/dy, 1) / |(-dz/dx, -dz/dy, 1)|``; NaN where :meth:`height` is NaN.
        Differentiable w.r.t. ``x`` and ``y``.
        """
        gx, gy = self.slope(x, y, map_index)
        n = torch.stack((-gx, -gy, torch.ones_like(gx)), dim=-1)
        return n / torch.linalg.vector_norm(n, dim=-1, keepdim=True)

    def in_bounds(self, x, y) -> torch.Tensor:
        """Bool tensor, True where world ``(x, y)`` lies on the grid (borders included)."""
        x = self._as_tensor(x, "x")
        y = self._as_tensor(y, "y")
        x0, x1, y0, y1 = self.bounds
        return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)

    def grid_indices(self, x, y) -> tuple[torch.Tensor, torch.Tensor]:
        """Nearest sample indices ``(iy, ix)`` (int64, clamped to the grid) of world ``(x, y)``."""
        x = self._as_tensor(x, "x")
        y = self._as_tensor(y, "y")
        g = self._grid
        ix = torch.round((x - g.x0) / g.res_x).clamp(0, g.nx - 1).to(torch.int64)
        iy = torch.round((y - g.y0) / g.res_y).clamp(0, g.ny - 1).to(torch.int64)
        return iy, ix


def stack(maps: Iterable[HeightMap]) -> HeightMap:
    """Module-level alias of :meth:`HeightMap.stack`."""
    return HeightMap.stack(list(maps))
