"""Where the physical model (:mod:`offroad_env.physics.rigid_body`) meets the height map: each tyre's support
from its rim samples and its tread's edges, the chassis points' contact forces, and the roof's
check.

Units: m, s, kg, N, rad. Shapes: ``(N,)`` per environment, ``(K, N)`` per wheel (wheel-major),
``(K, M, N)`` per rim sample, ``(P, N)`` per chassis point; vectors as 3-tuples of those (world
axes).
"""

from __future__ import annotations

import math

import torch

from typing import NamedTuple

from .rotations import rotation_entries, vcross, vdot, vrot

__all__ = ["rim_support", "tyre_edges", "point_forces", "roof_down", "EDGE_TILT",
           "WheelContacts", "wheel_contacts", "contact_frame", "CAMBER_LIMIT", "chassis_forces"]


class WheelContacts(NamedTuple):
    """Where the K tyres meet the ground at one body pose (``(K, N)`` each; vectors 3-tuples
    of those, world axes): ``s`` the compression that puts each tyre on its support (the
    rut's floor on soil; < 0 a wheel in the air by that much along z_b), ``compression`` it
    clamped at 0, ``touch`` on the ground (and the body upright), ``n`` and ``t`` the
    contact's normal and tangent in the wheel plane, ``d``, ``e`` the contact's offset along
    the wheel's forward direction and ``sqrt(r^2 - d^2)``, ``hub`` the hubs at that
    compression, ``point`` the contact points [m], ``hole`` the disc's centre over a hole,
    ``slope`` the ground's ``(dz/dx, dz/dy)`` at the contact (for :func:`contact_frame`)."""

    s: torch.Tensor
    compression: torch.Tensor
    touch: torch.Tensor
    n: tuple
    t: tuple
    d: torch.Tensor
    e: torch.Tensor
    hub: tuple
    point: tuple
    hole: torch.Tensor
    slope: tuple


def wheel_contacts(layout, c, R, f, l_, maps, map_index, r: float, half_w: float,
                   z_rut=None) -> WheelContacts:
    """The tyres' support (:class:`WheelContacts`) of a body with its centre of mass at ``c``
    (three ``(N,)``, world [m]) and rotation entries ``R`` (body to world), wheels heading
    along ``f`` with axles ``l_`` (3-tuples, ``(N,)`` or ``(K, N)``), on the rim samples and
    hubs of ``layout`` (:func:`~.rigid_body.make_layout`); ``z_rut`` ``(K, N)`` each wheel's
    rut depth on soil [m] (None: rigid ground). The rim's and the tread's support are
    :func:`rim_support` and :func:`tyre_edges`."""
    zb = (R[0][2], R[1][2], R[2][2])
    d, e = layout.d, layout.e
    # free hubs (s = 0) and the rim samples (K, M, N)
    off = vrot(R, (layout.bx, layout.by, layout.bz - layout.s0))
    H = tuple(c[i] + off[i] for i in range(3))
    fk = tuple(torch.broadcast_to(f[i], H[0].shape) for i in range(3))
    Q = tuple(H[i].unsqueeze(1) + d * fk[i].unsqueeze(1) - e * zb[i] for i in range(3))
    ground, gx, gy = maps.height_slope(Q[0], Q[1], map_index)
    zbz = zb[2]
    upright = zbz > 0.1
    # the distance along z_b from the rim point to the ground's tangent plane under it:
    # the vertical gap times nu_z / (z_b . nu), nu the ground's normal
    toward = zbz - zb[0] * gx - zb[1] * gy
    cand = (ground - Q[2]) / toward.clamp_min(0.3 * zbz.clamp_min(0.1))
    cand = torch.where(torch.isnan(cand), torch.full_like(cand, -1e9), cand)
    s_w, d_s, e_s = rim_support(cand, d, e, r)
    n = tuple((e_s * zb[i] - d_s * fk[i]) / r for i in range(3))
    t = tuple((d_s * zb[i] + e_s * fk[i]) / r for i in range(3))
    if half_w > 0.0:
        s_w, side, gx2, gy2 = tyre_edges(s_w, H, zb, n, l_, r, half_w, maps, map_index)
    if z_rut is not None:
        s_w = s_w - z_rut  # the wheel stands on its rut's floor
    touch = (s_w > 0) & upright
    s_c = s_w.clamp_min(0.0)
    A = tuple(H[i] + s_c * zb[i] for i in range(3))  # hubs
    Cp = tuple(A[i] - r * n[i] for i in range(3))  # contact points
    if half_w > 0.0:
        Cp = tuple(Cp[i] + side * half_w * l_[i] for i in range(3))
        # the ground's slope at the contact: the tread edges' (read there already), weighed
        # by where across the tread the contact is
        up = 0.5 * (1.0 + side)
        slope = (gx2[1] + up * (gx2[0] - gx2[1]), gy2[1] + up * (gy2[0] - gy2[1]))
    else:
        slope = maps.height_slope(Cp[0], Cp[1], map_index)[1:]
    return WheelContacts(s_w, s_c, touch, n, t, d_s, e_s, A, Cp,
                         torch.isnan(ground[:, ground.shape[1] // 2]), slope)


#: the largest tilt of a tyre's contact normal out of its wheel plane (:func:`contact_frame`)
CAMBER_LIMIT = math.radians(15.0)


def contact_frame(slope, n, l_, ratio_n, keep=None):
    """The directions of a tyre's ground force: ``(normal, lateral, normal . z_b, lateral .
    z_b)``, each direction a 3-tuple of ``(K, N)`` (world), the dots ``(K, N)``.

    The ground pushes along its own normal ``nu`` (of its ``slope`` ``(dz/dx, dz/dy)`` at the
    contact, :attr:`WheelContacts.slope`), and a normal
    must be square to the rim's rolling direction ``t`` there, so it is ``nu`` projected on
    the plane of the disc's radius ``n`` and the axle ``l_``: ``n`` turned about ``t`` toward
    ``l_`` by the tread's camber against the ground, ``tan(gamma) = (nu . l) / (nu . n)``.
    The lateral direction turns with it and stays in the ground's tangent plane. A wheel
    square to the ground has ``gamma = 0`` (``n`` and ``l_`` as they are); a body rolled by
    its springs (the outside wheels of a turn, a vehicle on a side slope) would otherwise tilt
    its tyres' friction cones with it, and a tyre with ``mu`` would grip sideways only
    ``tan(atan(mu) - phi)`` of its load (the rc_truck slid at 1.28 g on mu 1.5 instead of
    rolling at its tilt table's 1.36 g). ``gamma`` is held within :data:`CAMBER_LIMIT`: a
    body's roll is a few degrees, and a steeper one is the bilinear map's face at a step's
    edge, which no tread lies on (a hole: 0). ``ratio_n = n . z_b`` (``l_ . z_b = 0``).
    ``keep`` ``(N,)`` bool: rows that keep the wheel-plane frame (``n``, ``l_``): the holding
    brake's, whose solve is in the body's plane (its rest, :mod:`.rest`, is taken so)."""
    gx, gy = slope
    inv = torch.rsqrt(1.0 + gx * gx + gy * gy)
    nu = (-gx * inv, -gy * inv, inv)
    a, b = vdot(nu, n), vdot(nu, l_)
    lim = math.tan(CAMBER_LIMIT)
    tg = (b / a.clamp_min(0.05)).clamp(-lim, lim)
    tg = torch.where(torch.isnan(tg), torch.zeros_like(tg), tg)
    if keep is not None:
        tg = torch.where(keep, torch.zeros_like(tg), tg)
    cg = torch.rsqrt(1.0 + tg * tg)
    normal = tuple((n[i] + tg * l_[i]) * cg for i in range(3))
    lateral = tuple((l_[i] - tg * n[i]) * cg for i in range(3))
    return normal, lateral, ratio_n * cg, -tg * cg * ratio_n


def rim_support(cand, d, e, r: float):
    """The wheel's support from its rim samples: ``(s, d, e)`` ``(K, N)``, the compression and
    the contact's offset ``d`` along the wheel's forward direction, ``e = sqrt(r^2 - d^2)``.

    ``cand`` ``(K, M, N)``: the compression each rim sample asks for; ``d``, ``e`` ``(M, 1)``:
    the samples' offsets along the wheel's forward direction and ``sqrt(r^2 - d^2)``. In the
    wheel's plane the terrain under sample i is the point ``(d_i, u_i = cand_i - e_i)`` (``u``
    along z_b from the free hub), and the profile between two samples the segment joining
    them. The disc rests on
    the highest support of any point or segment: a point asks ``s = cand_i`` (its normal is the
    disc's radius there); a segment of slope ``k`` asks ``s = u_i - k d_i + r sqrt(1 + k^2)``
    where its tangent point ``d = r k / sqrt(1 + k^2)`` lies on it (its normal is the
    segment's). On a plane this is the exact tangent point; at an edge the corner sample
    carries the wheel, a sample spacing from the true corner at most."""
    u = cand - e
    d0, d1 = d[:-1], d[1:]
    k = (u[:, 1:] - u[:, :-1]) / (d1 - d0)
    root = torch.sqrt(1.0 + k * k)
    d_t = r * k / root
    s_seg = u[:, :-1] - k * d0 + r * root
    ok = (d_t >= d0) & (d_t <= d1) & (cand[:, :-1] > -1e8) & (cand[:, 1:] > -1e8)
    s_seg = torch.where(ok, s_seg, torch.full_like(s_seg, -1e9))
    # the highest point and segment (the first of equals), unrolled over the M samples so that
    # a compiled step vectorises it (an argmax reduction stays a scalar loop)
    s_pt, d_pt = cand[:, 0], d[0].expand_as(cand[:, 0])
    for i in range(1, cand.shape[1]):
        up = cand[:, i] > s_pt
        s_pt, d_pt = torch.where(up, cand[:, i], s_pt), torch.where(up, d[i], d_pt)
    s_sg, d_sg = s_seg[:, 0], d_t[:, 0]
    for i in range(1, s_seg.shape[1]):
        up = s_seg[:, i] > s_sg
        s_sg, d_sg = torch.where(up, s_seg[:, i], s_sg), torch.where(up, d_t[:, i], d_sg)
    seg = s_sg > s_pt
    d_s = torch.where(seg, d_sg, d_pt)
    e_s = torch.sqrt((r * r - d_s * d_s).clamp_min(0.0))
    return torch.where(seg, s_sg, s_pt), d_s, e_s


EDGE_TILT = math.radians(2.0)  #: the tread's tilt over which a tyre's contact moves across


def tyre_edges(s_w, H, zb, n, l_, r: float, half_w: float, maps, map_index):
    """The tyre's width: ``(s, side, gx, gy)``: ``(K, N)`` the compression with the tyre's
    edges and the contact's place across the tread (-1 .. 1, times ``half_w`` along the axle
    ``l``); ``(2, K, N)`` the ground's slope under the two edges (+l, -l).

    The tread is the line through the mid-plane's contact (at the compression ``s_w``, or at
    full extension) along the axle, ``half_w`` each side. The ground's height at its two
    edges gives each edge's gap (> 0: the ground is above the edge); the compression grows by
    the highest gap along z_b. The contact moves from the mid-plane to an edge as that edge's
    gap exceeds the higher of the other two places' by up to ``w tan(EDGE_TILT)``, the tread
    tilted 2 deg against the ground (a stiff tyre's give; a rigid one's contact would jump):
    on a level tread it stays in the middle, and on a tread tilted further (the downhill
    wheels of a vehicle about to tip, the outside wheels of a hard turn) it is at the outer
    edge, so the tipping axis is ``t + w / 2`` from the centre line. The edges are
    looked at only at the mid-plane contact's place along the wheel: a ledge across the
    tyre's path at an angle meets the mid-plane first."""
    s0 = s_w.clamp_min(0.0)
    zbz = zb[2].clamp_min(0.1)
    base = tuple(H[i] + s0 * zb[i] - r * n[i] for i in range(3))
    # the two edges (+l, -l) in one lookup, (2, K, N)
    edge = tuple(torch.stack((base[i] + half_w * l_[i], base[i] - half_w * l_[i]))
                 for i in range(3))
    g, gx, gy = maps.height_slope(edge[0], edge[1], map_index)
    g = g - edge[2]
    gap = torch.where(torch.isnan(g), torch.full_like(g, -1e9), g)
    mid = (s_w - s0) * zbz  # the mid-plane's gap (0 on the ground; < 0 a wheel in the air)
    s = torch.maximum(s_w, s0 + torch.maximum(gap[0], gap[1]) / zbz)
    give = 2.0 * half_w * math.tan(EDGE_TILT)
    out = ((gap[0] - torch.maximum(gap[1], mid)) / give).clamp(0.0, 1.0)
    inn = ((gap[1] - torch.maximum(gap[0], mid)) / give).clamp(0.0, 1.0)
    return s, out - inn, gx, gy


def point_forces(off, nrm, pen, hit, scale, v, w_w, k_c: float, c_c: float, stick: float, mu,
                 v_out: float = math.inf, g_h: float = 0.0):
    """The ground's force and moment on chassis points ``(P, N)`` at ``off`` from the centre of
    mass (world axes) that are ``pen`` deep along the contact normal ``nrm`` where ``hit``: a
    spring-damper ``scale (k_c pen - c_c v_n)`` (no pull), at most ``scale stick ((v_out -
    v_n)^+ + g_h)`` (the push that leaves the point at ``v_out`` out of the ground after the
    substep, holding its share of the weight: a point that finds itself deep in a ledge's face
    at once comes out at that speed instead of being shot out by the spring), and Coulomb
    friction against the sliding velocity, up to the force that stops it within the substep
    (``scale stick v_t``). Returns the sums over the points, ``(F, tau)``, each three
    ``(N,)``."""
    wxp = vcross(w_w, off)
    vP = tuple(v[i] + wxp[i] for i in range(3))
    vn = vdot(vP, nrm)
    push = torch.minimum(k_c * pen - c_c * vn, stick * ((v_out - vn).clamp_min(0.0) + g_h))
    Fn = torch.where(hit, (scale * push).clamp_min(0.0), torch.zeros_like(pen))
    vt = tuple(vP[i] - vn * nrm[i] for i in range(3))
    vt_n = torch.sqrt(vdot(vt, vt))
    ft = torch.minimum(vt_n * (scale * stick), mu * Fn) / vt_n.clamp_min(1e-9)
    FP = tuple(torch.where(hit, Fn * nrm[i] - ft * vt[i], torch.zeros_like(pen))
               for i in range(3))
    tq = vcross(off, FP)
    return tuple(f.sum(0) for f in FP), tuple(t.sum(0) for t in tq)


def roof_down(c, q, roof, maps, map_index) -> torch.Tensor:
    """``(N,)`` bool: a roof corner (``roof``: three ``(4, 1)`` columns from the centre of
    mass, body frame) is at or below the ground (the body lies on its back or
    side). Judged once a step, at its end: a roof on the ground ends the episode (its corners
    carry contact forces too, so a body stepped on afterwards lies on its roof)."""
    R = rotation_entries(*q)
    off = vrot(R, roof)
    W = tuple(c[i] + off[i] for i in range(3))
    return (maps.height(W[0], W[1], map_index) >= W[2]).any(0)


def chassis_forces(F, tau, layout, R, c, v, w_w, maps, map_index, k_c, c_c, stick, mu,
                   v_out, g_h):
    """Add the chassis points' contact forces to the body's force ``F`` and moment ``tau`` (3
    lists of ``(N,)``, world), in order: the belly, then the bumpers (and roof corners as
    bumpers); returns ``(F, tau, hit_b, hit_u)``, the points on the ground ``(P, N)``.

    ``layout``: the rigid body's (``belly``, ``bumper`` points, body frame); ``R`` the
    rotation entries, ``c``, ``v`` the centre of mass and its velocity, ``w_w`` the world
    angular velocity; ``k_c``, ``c_c``, ``stick``, ``mu``, ``v_out``, ``g_h``: as
    :func:`point_forces` takes them (stiffness, damping, the mass a point stops within the
    substep, friction, the separation speed, gravity times the substep).
    """
    zb = (R[0][2], R[1][2], R[2][2])
    zbz = zb[2]
    # the belly: a plate that the ground's crests meet, along the plate's normal z_b (the
    # depth of the ground over each sample along it), so a ridge lifts the belly rather
    # than push it back. It is as stiff as four points however many samples touch: its
    # springs and stick scale by min(1, 4 max(depth) / sum(depth)) (flat on the ground:
    # four points' stiffness; on a crest: each sample's own), continuous as samples touch
    off_b = vrot(R, layout.belly)
    W = tuple(c[i] + off_b[i] for i in range(3))
    pen_b = (maps.height_slope(W[0], W[1], map_index)[0] - W[2]) * zbz
    hit_b = (pen_b > 0) & (zbz > 0)  # a hole (NaN) or a belly facing up: no contact
    depth = torch.where(hit_b, pen_b, torch.zeros_like(pen_b))
    share_b = (4.0 * depth.amax(0) / depth.sum(0).clamp_min(1e-12)).clamp_max(1.0)
    # bumpers and roof corners meet the ground's face: its normal, the depth along it
    off_u = vrot(R, layout.bumper)
    W = tuple(c[i] + off_u[i] for i in range(3))
    g_u, sx, sy = maps.height_slope(W[0], W[1], map_index)
    inv = torch.rsqrt(1.0 + sx * sx + sy * sy)
    pen_u = (g_u - W[2]) * inv
    hit_u = pen_u > 0
    for off, nrm, pen, hit, scale in ((off_b, zb, pen_b, hit_b, share_b),
                                      (off_u, (-sx * inv, -sy * inv, inv), pen_u, hit_u,
                                       1.0)):
        FP, tqP = point_forces(off, nrm, pen, hit, scale, v, w_w, k_c, c_c, stick, mu,
                               v_out, g_h)
        for i in range(3):
            F[i] = F[i] + FP[i]
            tau[i] = tau[i] + tqP[i]
    return F, tau, hit_b, hit_u
