"""Helpers shared by the ground-following methods: input checks, the wheel hubs as body
constants, terrain queries under the hubs and hole filling.

Layout: per-wheel arrays inside the package are wheel-major ``(K, N)`` (the environment index
innermost, so compiled kernels vectorize over it); the public results are ``(N, K)`` views.
Rotations are passed as their nine entries (:func:`~offroad_env.physics.rotations.rot_zyx_entries`).
"""

from __future__ import annotations

import torch

from terrain import HeightMap

from ..vehicle import Vehicle, rectangle_corners

__all__ = ["pose_inputs", "body_columns", "query", "fill_holes", "offsets", "rotate",
           "hub_query", "subset"]


def pose_inputs(terrain: HeightMap, x, y, yaw, map_index):
    """``x, y, yaw`` as ``(N,)`` tensors in the map's dtype and device (scalars broadcast), and
    the map index as a ``(1, N)`` row (per-wheel arrays are ``(K, N)``), or None."""
    def as_t(v, name):
        t = torch.as_tensor(v, dtype=terrain.dtype, device=terrain.device)
        if t.ndim == 0:
            t = t.reshape(1)
        if t.ndim != 1:
            raise ValueError(f"{name} must have shape (N,), got {tuple(t.shape)}")
        return t

    x, y, yaw = as_t(x, "x"), as_t(y, "y"), as_t(yaw, "yaw")
    x, y, yaw = torch.broadcast_tensors(x, y, yaw)
    if map_index is not None:
        map_index = torch.as_tensor(map_index, device=terrain.device)
        if map_index.ndim == 0:
            map_index = map_index.expand(x.shape)
        map_index = map_index.reshape(1, -1)
    return x, y, yaw, map_index


def body_columns(vehicle: Vehicle, like: torch.Tensor, which: str = "wheels"):
    """Wheel hubs in the rear-axle frame as two ``(K, 1)`` columns ``(x, y)`` [m], or the
    four-wheel method's rectangle FL, FR, RL, RR. Separate 1-D constants, not the columns of one
    (K, 2) tensor: inductor fails to vectorize the strided column loads (11x slower compiled)."""
    if which == "wheels":
        pts = vehicle.wheel_positions
    else:
        pts = rectangle_corners(vehicle.wheel_base, vehicle.track_width)
    kw = dict(dtype=like.dtype, device=like.device)
    return (torch.tensor([p[0] for p in pts], **kw).unsqueeze(1),
            torch.tensor([p[1] for p in pts], **kw).unsqueeze(1))


def query(terrain: HeightMap, px, py, map_index):
    """Heights ``(K, N)`` [m] under the points (NaN over holes), the hole mask and the off-map
    mask."""
    h = terrain.height(px, py, map_index)
    hole = torch.isnan(h)
    off = ~terrain.in_bounds(px, py)
    return h, hole, off


def fill_holes(h: torch.Tensor, hole: torch.Tensor, drop: float) -> torch.Tensor:
    """Replace NaN heights by ``(lowest finite height of the env) - drop`` (0 if none finite)."""
    big = torch.finfo(h.dtype).max
    low = torch.where(hole, torch.full_like(h, big), h).amin(dim=0, keepdim=True)
    low = torch.where(low == big, torch.zeros_like(low), low)
    return torch.where(hole, (low - drop).expand_as(h), h)


def offsets(rot, wheels):
    """World-frame offsets ``R @ p_j`` of body points with z = 0: three ``(K, N)`` tensors.
    ``rot``: rotation entries (:func:`~offroad_env.physics.rotations.rot_zyx_entries`)."""
    px, py = wheels
    return tuple(rot[i][0] * px + rot[i][1] * py for i in range(3))


def rotate(rot, v) -> tuple:
    """``R @ v`` for one body vector ``v`` (3 floats, or three ``(N,)`` tensors): three ``(N,)``
    tensors."""
    return tuple(rot[i][0] * v[0] + rot[i][1] * v[1] + rot[i][2] * v[2] for i in range(3))


def hub_query(vehicle, terrain, x, y, rot, wheels, map_idx):
    """For attitude ``rot`` (rotation entries): the hub offsets (three ``(K, N)``), hub world
    ``x, y``, the terrain heights under the hubs with holes filled by a deep drop, and the hole
    and off-map masks (``(K, N)`` each)."""
    offs = offsets(rot, wheels)
    hx = x + offs[0]
    hy = y + offs[1]
    h, hole, off = query(terrain, hx, hy, map_idx)
    drop = 10.0 * (vehicle.wheel_base + vehicle.track_width) + 10.0
    return offs, hx, hy, fill_holes(h, hole, drop), hole, off


def subset(v, idx):
    """``v[idx]`` for a per-environment ``(N,)`` tensor; floats (and idx None) unchanged."""
    if idx is None or not isinstance(v, torch.Tensor) or v.ndim == 0:
        return v
    return v[idx]

