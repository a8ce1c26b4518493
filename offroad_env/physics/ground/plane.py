"""The rigid-contact rest found directly: the supporting plane of the wheels' contact points
under the centre of mass, iterated to a fixed point over the sideways shift of the wheels as the
body tilts. It gives the same equilibrium as the paper's drop (:mod:`.drop`); see the package
docstring for which rest it returns where two exist."""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import torch

from ..rotations import rot_zyx_entries
from .common import body_columns, hub_query, rotate, subset
from .contact import GroundContact, assemble

__all__ = ["rigid_plane", "support_plane", "attitude_from_normal"]


class PlanePass(NamedTuple):
    """One pass of the plane iteration for some poses: the terrain under the hubs at the pass's
    attitude and the supporting facet found there."""

    offs: tuple  #: three (K, N) hub offsets R p_j, world frame [m]
    heights: torch.Tensor  #: (K, N) terrain under the hubs, holes filled [m]
    hole: torch.Tensor  #: (K, N) bool
    off_map: torch.Tensor  #: (K, N) bool
    normal: tuple  #: three (N,) components of the facet's unit upward normal
    point: tuple  #: three (N,) components of a point of the facet (a hub + r), world [m]
    found: torch.Tensor | None  #: (N,) bool, a facet holds the CoM (None: decided at the end)


#: the axis of the environment index in each field of :class:`PlanePass`
_ENV_AXIS = PlanePass(offs=1, heights=1, hole=1, off_map=1, normal=0, point=0, found=0)


def _keep(new, old, live, axis):
    """``new`` where ``live`` ``(N,)``, ``old`` elsewhere (tuples of tensors field by field)."""
    if old is None:
        return None
    if isinstance(old, tuple):
        return tuple(_keep(a, b, live, axis) for a, b in zip(new, old))
    return torch.where(live if axis == 0 else live.unsqueeze(0), new, old)


def _put(old, rows, idx, axis):
    """``old`` with the environments ``idx`` replaced by ``rows`` (tuples field by field)."""
    if old is None:
        return None
    if isinstance(old, tuple):
        return tuple(o.index_copy(axis, idx, s) for o, s in zip(old, rows))
    return old.index_copy(axis, idx, rows)


def attitude_from_normal(n: tuple, yaw: torch.Tensor):
    """Roll and pitch of a body with heading ``yaw`` whose z axis is the unit normal ``n``
    (three ``(N,)`` components; kept apart, as a stacked ``(N, 3)`` makes compiled kernels read
    it with stride 3 and fall back to scalar loops).

    In the yaw-aligned frame ``n' = Rz(-yaw) n = (cos(roll) sin(pitch), -sin(roll),
    cos(roll) cos(pitch))``.
    """
    c, s = torch.cos(yaw), torch.sin(yaw)
    nx = c * n[0] + s * n[1]
    ny = -s * n[0] + c * n[1]
    nz = n[2]
    pitch = torch.atan2(nx, nz)
    roll = torch.atan2(-ny, torch.sqrt(nx * nx + nz * nz))
    return roll, pitch


def _triples(K: int, device) -> torch.Tensor:
    return torch.tensor(list(itertools.combinations(range(K), 3)), dtype=torch.long,
                        device=device)


def support_plane(Pxy: torch.Tensor, Z: torch.Tensor, com_xy: torch.Tensor, triples, tol):
    """The upper-hull facet over the centre of mass.

    The upper hull's height over a point ``c`` is the largest height at ``c`` of the planes
    through any three points whose triangle contains ``c`` (a linear program whose optimum sits
    on three points), so the facet is the triangle that contains the CoM's projection and is
    highest there: one pass over the ``C(K, 3)`` triangles, no test of every wheel against
    every plane. ``tol`` is the barycentric slack of "contains".

    Args:
        Pxy: ``(N, K, 2)`` horizontal contact positions; Z: ``(N, K)`` required hub heights
            ``h + r``; com_xy: ``(N, 2)``; triples: ``(T, 3)`` wheel index triples.

    Returns:
        ``(normal (N, 3) unit, up; point on plane (N, 3); found (N,) bool)``. Where no triangle
        contains the CoM (it lies outside the support polygon: the vehicle tips), the triangle
        that comes closest is returned with ``found`` False.
    """
    N, K = Z.shape
    A = torch.cat((Pxy, Z.unsqueeze(-1)), dim=-1)  # (N, K, 3)
    a, b, c = A[:, triples[:, 0]], A[:, triples[:, 1]], A[:, triples[:, 2]]  # (N, T, 3)
    bx, by, bz = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1], b[..., 2] - a[..., 2]
    cx, cy, cz = c[..., 0] - a[..., 0], c[..., 1] - a[..., 1], c[..., 2] - a[..., 2]
    det = bx * cy - by * cx  # twice the signed xy-area
    span = (Pxy.amax(1) - Pxy.amin(1)).amax(-1).clamp_min(1e-6)  # (N,)
    nondegenerate = det.abs() > 1e-6 * (span * span).unsqueeze(1)
    safe = torch.where(nondegenerate, det, torch.ones_like(det))
    # barycentric coordinates of the CoM in the triangle's xy projection
    ex, ey = com_xy[:, None, 0] - a[..., 0], com_xy[:, None, 1] - a[..., 1]
    l1 = (ex * cy - ey * cx) / safe
    l2 = (bx * ey - by * ex) / safe
    margin = torch.minimum(torch.minimum(1.0 - l1 - l2, l1), l2)
    height = a[..., 2] + l1 * bz + l2 * cz  # the triangle's plane at the CoM
    contains = nondegenerate & (margin >= -tol)
    neg_inf = torch.full_like(height, -math.inf)
    found = contains.any(1)
    # The highest containing triangle is the facet. Where the CoM sits on (or within rounding
    # of) an edge, several triangles tie in height and only some are hull facets: check the
    # few highest against every wheel (no wheel above the plane) and, among those that pass
    # and tie, take the one that holds the CoM best (as the closed-form four-wheel path).
    k = min(3, height.shape[1])
    top_h, cand = torch.where(contains, height, neg_inf).topk(k, dim=1)  # (N, k)
    g = lambda v: v.gather(1, cand)  # noqa: E731
    ux, uy, uz, vx, vy, vz = g(bx), g(by), g(bz), g(cx), g(cy), g(cz)
    nz = ux * vy - uy * vx
    nz_safe = torch.where(nz.abs() > 0, nz, torch.ones_like(nz))
    nx, ny = uy * vz - uz * vy, uz * vx - ux * vz
    ax_, ay_, az_ = (A[..., i].gather(1, triples[cand][..., 0]) for i in range(3))  # (N, k)
    zp = az_.unsqueeze(-1) - (nx.unsqueeze(-1) * (Pxy[:, None, :, 0] - ax_.unsqueeze(-1))
                              + ny.unsqueeze(-1) * (Pxy[:, None, :, 1] - ay_.unsqueeze(-1))) \
        / nz_safe.unsqueeze(-1)  # (N, k, K): each candidate plane at every wheel
    feasible = (zp >= Z.unsqueeze(1) - tol).all(-1) & torch.isfinite(top_h)
    best_f = torch.where(feasible, top_h, torch.full_like(top_h, -math.inf)).amax(1, keepdim=True)
    near = feasible & (top_h >= best_f - tol * span.clamp_min(1.0).unsqueeze(1))
    held = torch.where(near, g(margin), torch.full_like(top_h, -math.inf))
    any_f = feasible.any(1)
    choice = torch.where(any_f, held.argmax(1), torch.zeros_like(held.argmax(1)))
    best_contain = cand.gather(1, choice.view(N, 1)).squeeze(1)
    closest = torch.where(nondegenerate, margin, neg_inf)
    best = torch.where(found, best_contain, closest.argmax(1))
    pick = best.view(N, 1)
    ux, uy, uz = (v.gather(1, pick).squeeze(1) for v in (bx, by, bz))
    vx, vy, vz = (v.gather(1, pick).squeeze(1) for v in (cx, cy, cz))
    n = torch.stack((uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx), 1)
    n = n * torch.where(n[:, 2:3] < 0, -1.0, 1.0).to(n.dtype)
    n = n / torch.linalg.vector_norm(n, dim=1, keepdim=True)
    p_sel = a.gather(1, best.view(N, 1, 1).expand(N, 1, 3)).squeeze(1)
    return n, p_sel, found


def _quad_plane(hx, hy, Z, cx, cy, inside: bool = True):
    """:func:`support_plane` for the four rectangle wheels FL, FR, RL, RR, in closed form.

    The hubs of a tilted rectangle project to a parallelogram whose diagonals bisect each other,
    so the upper hull splits along the diagonal with the higher midpoint: FL-RR if
    ``Z_FL + Z_RR >= Z_FR + Z_RL``, else FR-RL. The facet is the one on the centre of mass's side.
    """
    d03 = (Z[0] + Z[3]) >= (Z[1] + Z[2])
    # diagonal endpoints (a, b) and the two off-diagonal corners (c1, c2)
    ia = torch.where(d03, 0, 1)
    ib = torch.where(d03, 3, 2)
    ic1 = torch.where(d03, 1, 0)
    ic2 = torch.where(d03, 2, 3)

    def pick(v, i):
        return v.gather(0, i.unsqueeze(0)).squeeze(0)

    ax, ay, az = pick(hx, ia), pick(hy, ia), pick(Z, ia)
    bx, by, bz = pick(hx, ib) - ax, pick(hy, ib) - ay, pick(Z, ib) - az
    side_c = bx * (cy - ay) - by * (cx - ax)
    c1x, c1y = pick(hx, ic1) - ax, pick(hy, ic1) - ay
    side_1 = bx * c1y - by * c1x
    ic = torch.where((side_c >= 0) == (side_1 >= 0), ic1, ic2)
    ex, ey, ez = pick(hx, ic) - ax, pick(hy, ic) - ay, pick(Z, ic) - az
    nx, ny, nz = by * ez - bz * ey, bz * ex - bx * ez, bx * ey - by * ex
    k = torch.where(nz < 0, -1.0, 1.0).to(nz.dtype) / torch.sqrt(nx * nx + ny * ny + nz * nz)
    n = (nx * k, ny * k, nz * k)
    if not inside:  # an intermediate pass needs the facet only
        return n, (ax, ay, az), None
    return n, (ax, ay, az), _com_inside(hx, hy, cx, cy)


def _com_inside(hx, hy, cx, cy) -> torch.Tensor:
    """``(N,)``: the point ``(cx, cy)`` lies inside the quadrilateral of the four rectangle hubs
    FL, FR, RL, RR (``(K, N)`` each)."""
    order = (0, 1, 3, 2)  # FL, FR, RR, RL around the parallelogram
    signs = []
    for k in range(4):
        i, j = order[k], order[(k + 1) % 4]
        ex_, ey_ = hx[j] - hx[i], hy[j] - hy[i]
        signs.append(ex_ * (cy - hy[i]) - ey_ * (cx - hx[i]))
    s = torch.stack(signs, 1)
    return (s >= 0).all(1) | (s <= 0).all(1)


def rigid_plane(vehicle, terrain, x, y, yaw, map_idx, d_eps, gravity, max_iter, tol,
                init_roll=None, init_pitch=None, loads: bool = True) -> GroundContact:
    """The plane method on checked inputs (:func:`~offroad_env.physics.ground.rigid_contact`)."""
    dtype = x.dtype
    if tol is None:
        tol = 1e-9 if dtype == torch.float64 else 1e-5
    geo_tol = 1e-9 if dtype == torch.float64 else 1e-5
    wheels = body_columns(vehicle, x)
    quad = vehicle.is_rectangle
    triples = None if quad else _triples(vehicle.num_wheels, x.device)

    def plane(roll, pitch, idx=None) -> PlanePass:
        """The facet for attitude (roll, pitch) of the poses ``idx`` (None: all)."""
        xs, ys, yws = (x, y, yaw) if idx is None else (x[idx], y[idx], yaw[idx])
        ms = map_idx if (map_idx is None or idx is None) else map_idx[:, idx]
        com_b = tuple(subset(c, idx) for c in vehicle.com)  # per-env (VehicleBatch)
        r = subset(vehicle.wheel_radius, idx)
        rot = rot_zyx_entries(yws, pitch, roll)
        offs, hx, hy, h, hole, off = hub_query(vehicle, terrain, xs, ys, rot, wheels, ms)
        cx, cy, _ = rotate(rot, com_b)
        if quad:
            n, p, found = _quad_plane(hx, hy, h + r, xs + cx, ys + cy, inside=False)
        else:
            n, p, found = support_plane(torch.stack((hx.T, hy.T), -1), (h + r).T,
                                        torch.stack((xs + cx, ys + cy), 1), triples, geo_tol)
            n, p = n.unbind(1), p.unbind(1)
        return PlanePass(offs, h, hole, off, n, p, found)

    roll = torch.zeros_like(x) if init_roll is None else torch.as_tensor(init_roll).to(x)
    pitch = torch.zeros_like(x) if init_pitch is None else torch.as_tensor(init_pitch).to(x)
    roll, pitch = roll.expand_as(x).contiguous(), pitch.expand_as(x).contiguous()
    change = torch.full_like(x, math.inf)
    iters = torch.zeros_like(x, dtype=torch.int32)
    n_env = x.shape[0]
    # Each pass evaluates the facet at the current attitude and moves the attitude to the
    # facet's. A pose stops when the move is below ``tol``; it returns the attitude of its last
    # pass with that pass's facet, heights and hub offsets (consistent with each other; the
    # fixed point is within ``tol``). After two passes over all poses only those still moving
    # are iterated (on rough ground ~45 % after 3 passes, ~10 % after 4, ~0.2 % after 5): eager
    # on the CPU by running the pass on those alone; compiled graphs and accelerators keep fixed
    # shapes, run the pass on every pose and keep the stopped poses' previous results, so every
    # path stops each pose at the same pass (where a pose has two rests, a "wobbly table", they
    # also pick the same one).
    compact = not torch.compiler.is_compiling() and x.device.type == "cpu"
    att_roll, att_pitch, last = roll, pitch, None
    for k in range(max(1, max_iter)):
        idx = None
        if compact and k >= 2:
            idx = torch.nonzero(change > tol).squeeze(1)
            if idx.numel() == 0:
                break
            if idx.numel() == n_env:
                idx = None
        r0, p0 = (roll, pitch) if idx is None else (roll[idx], pitch[idx])
        res = plane(r0, p0, idx)
        new_roll, new_pitch = attitude_from_normal(res.normal, yaw if idx is None else yaw[idx])
        ch = torch.maximum((new_roll - r0).abs(), (new_pitch - p0).abs())
        if k == 0:
            first = res
        if idx is None and k < 2:
            change, att_roll, att_pitch, last = ch, r0, p0, res
            roll, pitch = new_roll, new_pitch
            iters = iters + 1
        elif idx is None:  # every pose ran; those that had stopped keep their last pass
            live = change > tol
            change, att_roll = _keep(ch, change, live, 0), _keep(r0, att_roll, live, 0)
            att_pitch = _keep(p0, att_pitch, live, 0)
            roll, pitch = _keep(new_roll, roll, live, 0), _keep(new_pitch, pitch, live, 0)
            iters = iters + live.to(torch.int32)
            last = PlanePass(*(_keep(n, o, live, ax) for n, o, ax in zip(res, last, _ENV_AXIS)))
        else:
            change = change.index_copy(0, idx, ch)
            att_roll = att_roll.index_copy(0, idx, r0)
            att_pitch = att_pitch.index_copy(0, idx, p0)
            roll = roll.index_copy(0, idx, new_roll)
            pitch = pitch.index_copy(0, idx, new_pitch)
            iters = iters.index_add(0, idx, torch.ones_like(idx, dtype=torch.int32))
            last = PlanePass(*(_put(o, n, idx, ax) for n, o, ax in zip(res, last, _ENV_AXIS)))
    offs, h, hole, off, n, p, found = last
    rot = rot_zyx_entries(yaw, att_pitch, att_roll)
    if quad:  # the centre of mass inside the hub quadrilateral (else no facet holds it)
        cx, cy, _ = rotate(rot, vehicle.com)
        found = _com_inside(x + offs[0], y + offs[1], x + cx, y + cy)
    # origin height: the hub plane through the facet, at the origin's (x, y)
    z0 = p[2] - (n[0] * (x - p[0]) + n[1] * (y - p[1])) / n[2]
    t = torch.stack((x, y, z0), 1)
    settled = change <= tol
    # a wheel over a hole (or off the map) at the start attitude counts: the hole's deep fill
    # tilts the body so far that the wheel's hub may no longer lie above it at the rest
    hole, off = hole | first.hole, off | first.off_map
    return assemble(vehicle, torch.stack((yaw, att_pitch, att_roll), 1), rot, t, wheels, h, hole,
                    off, d_eps, gravity, settled & found, iters, offs=offs, loads=loads,
                    settled=settled)
