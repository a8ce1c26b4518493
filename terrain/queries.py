"""Reading a height map at points: :class:`HeightQueries`, the query half of
:class:`~terrain.heightmap.HeightMap` (height, slope, normal, bounds and nearest samples at world
``(x, y)``, any broadcastable shape, one map of a stack per point). It reads the map's grid, its
flat sample table and its interpolation (:mod:`terrain.interpolation`); the map builds them."""

from __future__ import annotations

import numpy as np
import torch

from .interpolation import cell_gradient, cell_height

__all__ = ["HeightQueries"]


class HeightQueries:
    """The queries of a :class:`~terrain.heightmap.HeightMap` (its methods; a mixin that reads
    the map's ``_grid``, ``_table``, ``_taps``, ``_tap_offsets``, ``_index_dtype``,
    ``interpolation``, ``dtype``, ``device``, ``bounds`` and ``len``)."""

    def _coords(self, x, y, map_index):
        """Query inputs as tensors on the map's device, broadcast to one shape, in the dtype of
        the index arithmetic (:meth:`_as_tensor`)."""
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
        """``v`` as a tensor for the index arithmetic: float64 where it comes as numbers, an
        array or a float64 tensor (a DEM's own coordinates, 5e6 m, keep their centimetres:
        float32's steps there are 0.5 m), else the map's dtype (a float32 tensor: the
        simulator's queries, in the map's own frame)."""
        if isinstance(v, torch.Tensor):
            if v.device != self.device:
                raise ValueError(f"{name} is on {v.device}, the map on {self.device}: "
                                 "move one of them")
            if v.dtype != self.dtype and v.dtype != torch.float64:
                v = v.to(self.dtype)
            return v
        return torch.as_tensor(v, dtype=torch.float64, device=self.device)

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
        fx = (uc - iu).to(self.dtype)  # the weights in the map's dtype, from exact indices
        fy = (vc - iv).to(self.dtype)
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
