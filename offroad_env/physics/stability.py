"""Tip-over stability that depends on driving: the force-angle measure of Papadopoulos and Rey
(1996, "A new measure of tipover stability margin for mobile manipulators", ICRA).

For each edge of the support polygon (the convex hull of the wheels that carry load, at their
contact points ``p_i``) the measure is the angle between the net force ``f`` acting at the centre
of mass ``c`` and the edge's tip-over axis normal ``l`` (the perpendicular from ``c`` to the
edge), both taken in the plane normal to the edge::

    a = unit(p_j - p_i)                 the edge, oriented with the polygon on its left
    l = (I - a a^T) (p_i - c)           CoM -> tip-over axis, normal to it
    f = (I - a a^T) m (g - acc)         net force normal to the axis (gravity and inertia)
    theta = atan2(-((f x l) . a), f . l)

``theta`` is positive while ``f`` points inside the polygon and reaches 0 when it points along
the tip-over axis normal: the vehicle starts to roll about that edge. The stability margin is
the minimum over the edges. Closed forms (flat ground, a rectangle of half track ``t`` and CoM
height ``h``): at rest the margin about a side edge is ``atan(t / h)``; a lateral acceleration
``a_y`` leaves ``atan(t / h) - atan(a_y / g)``, 0 at ``a_y / g = t / h``; at rest on a side slope
of angle ``beta`` it is ``atan(t / h) - beta``, 0 at ``tan(beta) = t / h`` (the static roll limit
of :func:`static_tip_limits`).

The acceleration comes from the dynamics: the body-frame velocity ``(v_x, v_y)`` and yaw rate
``w`` of two steps give ``acc_b = (dv_x/dt - w v_y, dv_y/dt + w v_x, 0)`` (longitudinal and
centripetal), turned into the world by the body's attitude. It is low-passed (first order, time
constant :data:`ACCEL_TIME`) before it enters the measure: the kinematic models change speed
within one step, which no drive train does, and a body needs a sustained force, not a one-step
spike, to roll over (:func:`filter_acceleration`).

Edges are found without a per-environment loop: every pair ``(i, j)`` of wheels is a candidate;
it is an edge of the loaded wheels' hull where both carry load and no other loaded wheel lies
strictly on its right (in the vehicle's plan view, which is fixed), and it is oriented so that
they lie on its left. Fewer than three loaded wheels (a support line or point) give the measure
of the line's pairs, which is negative unless the CoM is exactly over it.
"""

from __future__ import annotations

import itertools
import math

import torch

from .rotations import matvec3
from .vehicle import Vehicle

__all__ = ["static_tip_limits", "ledge_climb_limit", "net_force", "friction_limited_force",
           "hub_positions", "EdgeTable", "edge_table", "pseudo_angle", "force_angle_margin",
           "contact_margin", "body_acceleration", "filter_acceleration", "LOAD_SHARE",
           "ACCEL_TIME", "ROCK_GAP", "energy_margin"]

#: a rigid rest's support polygon includes wheels within this many wheel radii of the ground:
#: a rest on two diagonal wheels and a lightly loaded third rocks onto the fourth, which hangs
#: 0.1-0.2 m up on rough ground (Husky), before the body could roll over
ROCK_GAP = 2.0

#: a wheel carries load where its normal force exceeds this share of an equal split of m g
LOAD_SHARE = 1e-3


def static_tip_limits(vehicle: Vehicle):
    """``(roll limit, pitch limit)`` [rad] of static stability on a slope: the angle at which the
    centre of mass passes over the downhill wheels, ``atan(half track / h)`` and
    ``atan(CoM-to-axle distance / h)``, ``h`` the CoM height above flat ground.

    Floats for a :class:`Vehicle`; ``(N,)`` tensors for a :class:`VehicleBatch` (per-env mass
    properties)."""
    batched = isinstance(vehicle.wheel_radius, torch.Tensor)
    like = vehicle.wheel_radius if batched else torch.zeros((), dtype=torch.float64)
    as_t = lambda v: torch.as_tensor(v, dtype=like.dtype, device=like.device)  # noqa: E731
    cx, cy, cz = (as_t(c) for c in vehicle.com)
    h = as_t(vehicle.wheel_radius) + cz
    xs = [p[0] for p in vehicle.wheel_positions]
    ys = [p[1] for p in vehicle.wheel_positions]
    lateral = torch.minimum(max(ys) - cy, cy - min(ys))
    longitudinal = torch.minimum(max(xs) - cx, cx - min(xs))
    upright = torch.full_like(h, math.pi / 2)
    roll = torch.where(h > 0, torch.atan2(lateral, h), upright)
    pitch = torch.where(h > 0, torch.atan2(longitudinal, h), upright)
    return (roll, pitch) if batched else (float(roll), float(pitch))


def ledge_climb_limit(vehicle: Vehicle, mu: float) -> float:
    """The quasi-static all-wheel-drive limit ``h / r`` of a rigid two-axle vehicle on a ledge
    of height ``h`` (wheel radius ``r``) on ground of friction ``mu``, to 0.005.

    Planar statics, the binding case: the rear axle at the ledge's edge with the front axle
    on top (the body pitched by ``asin(h / L)``, ``L`` the wheel base). The edge's force on the
    rear wheels is ``N_e n + F_e t`` with ``n = (-sin(theta), cos(theta))``, ``t =
    (cos(theta), sin(theta))``, ``cos(theta) = 1 - h / r``; the top's on the front wheels
    ``N_f (0, 1) + F_f (1, 0)``; ``|F_e| <= mu N_e``, ``|F_f| <= mu N_f``. The three equations
    of planar equilibrium (forces along x and z, and the moment about the centre of mass) leave
    one free force, ``F_f``; the ledge is climbable where some choice keeps both forces in their
    friction cones. Husky: 0.255, 0.46 and 0.585 at mu 0.5, 0.8 and 1.0."""
    import numpy as np

    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite number > 0, got {mu!r}")
    r, L = vehicle.wheel_radius, vehicle.wheel_base
    cx, cz = vehicle.com[0], vehicle.com[2]
    f_front = np.linspace(-1.5 * mu, 1.5 * mu, 601)

    def feasible(hr: float) -> bool:
        h = hr * r
        th = math.acos(1 - h / r)
        s, c = math.sin(th), math.cos(th)
        phi = math.asin(min(1.0, h / L))
        com = np.array([cx * math.cos(phi) - cz * math.sin(phi),
                        r + cx * math.sin(phi) + cz * math.cos(phi)])
        pe = np.array([r * s, h]) - com
        pf = np.array([L * math.cos(phi), h]) - com
        A = np.array([[-s, c, 0.0], [c, s, 1.0],
                      [pe[0] * c + pe[1] * s, pe[0] * s - pe[1] * c, pf[0]]])
        rhs = np.stack([-f_front, np.ones_like(f_front), pf[1] * f_front], 1)
        n_e, f_e, n_f = np.linalg.solve(A, rhs.T)
        ok = (n_e >= 0) & (n_f >= 0) & (np.abs(f_e) <= mu * n_e) & (np.abs(f_front) <= mu * n_f)
        return bool(ok.any())
    climbable = [hr for hr in np.arange(0.005, 1.0, 0.005) if feasible(hr)]
    return float(max(climbable)) if climbable else 0.0


class EdgeTable:
    """The candidate support edges of a vehicle (one per wheel pair), for
    :func:`force_angle_margin`.

    Attributes:
        i: ``(E,)`` int64 the first wheel of each pair.
        j: ``(E,)`` int64 the second wheel of each pair.
        right: ``(E, K)`` bool, wheel ``k`` lies strictly right of ``i -> j`` in plan view (the
            rear-axle frame's xy).
        left: ``(E, K)`` bool, wheel ``k`` lies strictly left of ``i -> j``.
        pairs: the same as Python values, ``[(i, j, right wheels, left wheels)]`` (the
            unrolled :func:`force_angle_margin` reads them at trace time).
    """

    def __init__(self, vehicle: Vehicle, device=None):
        pos = [(float(x), float(y)) for x, y in vehicle.wheel_positions]
        pairs = list(itertools.combinations(range(len(pos)), 2))
        right, left = [], []
        for i, j in pairs:
            (xi, yi), (xj, yj) = pos[i], pos[j]
            cross = [(xj - xi) * (yk - yi) - (yj - yi) * (xk - xi) for xk, yk in pos]
            scale = 1e-9 * max(1.0, abs(xj - xi) + abs(yj - yi))
            right.append([c < -scale for c in cross])
            left.append([c > scale for c in cross])
        self.i = torch.tensor([p[0] for p in pairs], dtype=torch.int64, device=device)
        self.j = torch.tensor([p[1] for p in pairs], dtype=torch.int64, device=device)
        self.right = torch.tensor(right, dtype=torch.bool, device=device)
        self.left = torch.tensor(left, dtype=torch.bool, device=device)
        K = len(pos)
        self.pairs = [(i, j, [k for k in range(K) if r[k]], [k for k in range(K) if lf[k]])
                      for (i, j), r, lf in zip(pairs, right, left)]


_TABLES: dict = {}


def edge_table(vehicle: Vehicle, device) -> EdgeTable:
    """The (cached) :class:`EdgeTable` of ``vehicle``'s wheel layout on ``device``."""
    key = (tuple(map(tuple, vehicle.wheel_positions)), str(device))
    if key not in _TABLES:
        _TABLES[key] = EdgeTable(vehicle, device)
    return _TABLES[key]


#: time constant of the acceleration low-pass [s]
ACCEL_TIME = 0.2


def filter_acceleration(filtered: torch.Tensor, raw: torch.Tensor, dt: float) -> torch.Tensor:
    """One step of the first-order low-pass ``a_f += dt / (ACCEL_TIME + dt) * (a - a_f)``: a
    speed change ``dv`` within one step peaks at ``dv / (ACCEL_TIME + dt)``, a sustained
    acceleration passes unchanged."""
    return filtered + (dt / (ACCEL_TIME + dt)) * (raw - filtered)


def body_acceleration(vel_b: torch.Tensor, prev_vel_b: torch.Tensor, dt: float) -> torch.Tensor:
    """``(N, 3)`` acceleration of the body in its own heading frame [m/s^2] from the body
    velocity ``(v_x, v_y, w)`` ``(N, 3)`` [m/s, m/s, rad/s] now and a step ``dt`` [s] before:
    ``(dv_x/dt - w v_y, dv_y/dt + w v_x, 0)``."""
    dv = (vel_b - prev_vel_b) / dt
    w, vx, vy = vel_b[:, 2], vel_b[:, 0], vel_b[:, 1]
    return torch.stack((dv[:, 0] - w * vy, dv[:, 1] + w * vx, torch.zeros_like(w)), 1)


def net_force(accel_w: torch.Tensor, gravity: float) -> torch.Tensor:
    """``(N, 3)`` the force per unit mass the contacts must balance: gravity and inertia,
    ``g - a`` (world frame, gravity along -z) [m/s^2]."""
    g = torch.zeros_like(accel_w)
    g[:, 2] = -gravity
    return g - accel_w


def friction_limited_force(force: torch.Tensor, normal: torch.Tensor, mu
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """The part of ``force`` ``(N, 3)`` (per unit mass, :func:`net_force`) the contacts can
    balance, and the share of the friction cone it demands.

    The contacts push back with ``c = -force``: along the support ``normal`` ``(N, 3)`` (unit)
    without limit (a geometric force: the ground, or a bump's flank, pushes), across it at most
    ``mu`` times the normal part (``mu`` a float or ``(N,)``). A demand past the cone is not
    transmitted (the vehicle slides or spins instead), so it cannot tip the body. Returns
    ``(force within the cone (N, 3), demand |c_t| / (mu c_n) (N,))``; the demand is 0 for no
    tangential force and ``inf`` where nothing presses on the ground."""
    c = -force
    cn = (c * normal).sum(-1, keepdim=True)
    ct = c - cn * normal
    t = torch.linalg.vector_norm(ct, dim=-1, keepdim=True)
    mu = torch.as_tensor(mu, dtype=force.dtype, device=force.device).reshape(-1, 1)
    limit = mu * cn.clamp_min(0.0)
    over = t > limit
    scale = torch.where(over, limit / torch.where(over, t, torch.ones_like(t)),
                        torch.ones_like(t))
    demand = torch.where(t > 0, t / limit, torch.zeros_like(t))
    return -(cn * normal + ct * scale), demand.squeeze(-1)


def _any(columns: list[torch.Tensor]) -> torch.Tensor | None:
    """The elementwise or of ``columns`` (None for none)."""
    out = None
    for c in columns:
        out = c if out is None else out | c
    return out


def pseudo_angle(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A monotone stand-in for ``atan2(y, x)`` over ``(-pi, pi]`` without trigonometry (the
    "diamond angle": ``1 - x / (|x| + |y|)``, negated below the x axis), in ``[-2, 2]``; 0 at
    the origin. Comparing these orders the angles as ``atan2`` would, to rounding."""
    s = x.abs() + y.abs()
    q = 1.0 - x / torch.where(s > 0, s, torch.ones_like(s))
    return torch.where(y < 0, -q, q)


def force_angle_margin(contact_points: torch.Tensor, loaded: torch.Tensor, com_w: torch.Tensor,
                       accel_w: torch.Tensor, gravity: float, table: EdgeTable,
                       force: torch.Tensor | None = None) -> torch.Tensor:
    """``(N,)`` force-angle stability margin [rad]: the minimum over the support polygon's edges
    of the angle between the net force at the CoM and the edge's tip-over axis normal; negative
    where the vehicle tips about an edge.

    Written for the machine: the candidate edges are unrolled at the table's fixed wheel
    indices, each a few dozen operations on ``(N,)`` columns (one loop over the environments
    when compiled, every lane busy), and the edges are compared by :func:`pseudo_angle`, so
    ``atan2`` runs once per environment, on the least edge's pair.

    Args:
        contact_points: ``(N, K, 3)`` wheel contact points, world [m].
        loaded: ``(N, K)`` bool, the wheel carries load.
        com_w: ``(N, 3)`` centre of mass, world [m].
        accel_w: ``(N, 3)`` acceleration of the centre of mass, world [m/s^2].
        gravity: [m/s^2] (acting along -z).
        table: the vehicle's :class:`EdgeTable`.
        force: ``(N, 3)`` the net force per unit mass to use instead of ``g - accel_w``
            (:func:`friction_limited_force`).
    """
    K = contact_points.shape[1]
    p = [contact_points[:, k].unbind(1) for k in range(K)]
    ld = [loaded[:, k] for k in range(K)]
    fx, fy, fz = (net_force(accel_w, gravity) if force is None else force).unbind(1)
    cx, cy, cz = com_w.unbind(1)
    best = by = bx = None
    for i, j, right, left in table.pairs:
        # loaded wheels strictly on each side of i -> j: an edge has them all on one side
        on_r, on_l = _any([ld[k] for k in right]), _any([ld[k] for k in left])
        edge = ld[i] & ld[j]
        if on_r is not None and on_l is not None:
            edge = edge & ~(on_r & on_l)
        (xi, yi, zi), (xj, yj, zj) = p[i], p[j]
        ax, ay, az = xj - xi, yj - yi, zj - zi
        n = torch.sqrt(ax * ax + ay * ay + az * az)
        ax, ay, az = ax / n, ay / n, az / n
        # the CoM -> axis vector l and the force f, each less its part along the edge a
        rx, ry, rz = xi - cx, yi - cy, zi - cz
        ra = rx * ax + ry * ay + rz * az
        lx, ly, lz = rx - ra * ax, ry - ra * ay, rz - ra * az
        fa = fx * ax + fy * ay + fz * az
        gx, gy, gz = fx - fa * ax, fy - fa * ay, fz - fa * az
        c = (gy * lz - gz * ly) * ax + (gz * lx - gx * lz) * ay + (gx * ly - gy * lx) * az
        d = gx * lx + gy * ly + gz * lz
        # theta = atan2(-c, d) about a, the polygon on its left; reversed (the polygon on the
        # right) atan2(c, d); a support line (no loaded wheel on either side): the worse side
        y = -c
        if on_r is not None:
            y = torch.where(on_r if on_l is None else on_r & ~on_l, c, y)
        line = (None if on_r is None and on_l is None else ~on_l if on_r is None
                else ~on_r if on_l is None else ~on_r & ~on_l)
        y = -c.abs() if line is None else torch.where(line, -c.abs(), y)
        q = torch.where(edge, pseudo_angle(y, d), torch.full_like(d, math.inf))
        if best is None:
            best, by, bx = q, y, d
        else:
            take = q < best
            best = torch.where(take, q, best)
            by, bx = torch.where(take, y, by), torch.where(take, d, bx)
    # no loaded pair at all (airborne, or one wheel): no support
    return torch.where(torch.isfinite(best), torch.atan2(by, bx),
                       torch.full_like(bx, -math.pi / 2))


def energy_margin(points: torch.Tensor, com_w: torch.Tensor, omega_w: torch.Tensor,
                  inertia_about, mass: float, table: EdgeTable,
                  gravity: float) -> torch.Tensor:
    """``(N,)`` the energy stability margin [m]: over the edges of the support polygon of
    ``points``, the least height the centre of mass must still rise to tip over an edge, less
    the rotational kinetic energy the body carries toward tipping about that edge over ``m g``
    (Messuri and Klein's energy stability level, with the kinetic term of Ghasempoor and
    Sepehri). Negative: the body has passed over an edge, or it rolls toward one with the
    energy to pass it (a dynamic tip a static margin cannot see).

    Per edge ``a`` (unit, the polygon on its left) through ``p_i``, with ``d`` the
    perpendicular from the axis to the centre of mass (``|d| = R``): the centre of mass
    rotating about the axis tops out at ``R sqrt(1 - a_z^2)`` above it, so the rise left is
    ``e = R sqrt(1 - a_z^2) - d_z`` (signed: negative once the centre of mass is outside the
    edge's vertical plane, the static force-angle margin's sign). A rotation ``omega_a = omega
    . a`` that lowers that rise carries ``omega_a^2 (a^T J a + m R^2) / 2`` toward the tip.

    Args:
        points: ``(N, K, 3)`` the support points, world [m] (every wheel's lowest point, as the
            physical model's tip-over judgement takes them).
        com_w: ``(N, 3)`` centre of mass; omega_w: ``(N, 3)`` angular velocity, world
            [rad/s].
        inertia_about: ``f(a (N, E, 3)) -> (N, E)``: ``a^T J_w a`` about the centre of mass
            [kg m^2].
        mass: [kg]; table: the vehicle's :class:`EdgeTable`; gravity [m/s^2].
    """
    pi_, pj = points[:, table.i], points[:, table.j]  # (N, E, 3)
    K = points.shape[1]
    everyone = torch.ones(points.shape[0], K, dtype=torch.bool, device=points.device)
    on_right = (everyone.unsqueeze(1) & table.right).any(2)
    on_left = (everyone.unsqueeze(1) & table.left).any(2)
    edge = ~(on_right & on_left)
    flip = on_right & ~on_left
    a = torch.where(flip.unsqueeze(2), pi_ - pj, pj - pi_)
    a = a / torch.linalg.vector_norm(a, dim=2, keepdim=True)
    r = com_w.unsqueeze(1) - pi_
    d = r - (r * a).sum(2, keepdim=True) * a
    R = torch.linalg.vector_norm(d, dim=2)
    top = R * torch.sqrt((1.0 - a[..., 2] * a[..., 2]).clamp_min(0.0))
    rise = top - d[..., 2]
    # inside the edge's vertical plane: the polygon's side, left of a (plan view)
    inside = (a[..., 0] * d[..., 1] - a[..., 1] * d[..., 0]) >= 0
    rise = torch.where(inside, rise, -rise)
    w_a = (omega_w.unsqueeze(1) * a).sum(2)
    # the rise's rate under that rotation: -(w_a a x d)_z; toward the tip where it falls
    lowering = w_a * (a[..., 0] * d[..., 1] - a[..., 1] * d[..., 0]) > 0
    kinetic = 0.5 * w_a * w_a * (inertia_about(a) + mass * R * R)
    margin = rise - torch.where(lowering, kinetic, torch.zeros_like(kinetic)) / (mass * gravity)
    return torch.where(edge, margin, torch.full_like(margin, math.inf)).amin(1)


def hub_positions(gc, vehicle) -> torch.Tensor:
    """``(N, K, 3)`` wheel hub centres, world [m], of a placement ``gc`` from its pose alone
    (``position + R (x_j, y_j, 0)``, the wheels in the rear-axle frame): what
    ``gc.wheel_position`` holds, without computing the per-wheel loads."""
    R = gc.rotation
    wp = torch.tensor([(float(x), float(y)) for x, y in vehicle.wheel_positions], dtype=R.dtype,
                      device=R.device)
    # elementwise, not einsum: a BLAS product rounds by the CPU it runs on (tests/test_golden.py)
    return (gc.position.unsqueeze(1) + R[:, None, :, 0] * wp[None, :, 0:1]
            + R[:, None, :, 1] * wp[None, :, 1:2])


def contact_margin(gc, vehicle, rigid: bool, accel_b: torch.Tensor | None, gravity: float,
                   table: EdgeTable, idx: torch.Tensor | None = None, maps=None,
                   map_index: torch.Tensor | None = None, mu=None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """``((M,) force-angle margin [rad], (M,) friction demand)`` of a placement ``gc`` (a
    ``GroundContact`` with loads, of the rows ``idx`` of ``vehicle``'s per-env properties;
    None: all), under the body-frame acceleration ``accel_b`` ``(M, 3)`` (None: at rest).

    With four-wheel ground following (not ``rigid``) it needs no per-wheel loads: the hubs come
    from the pose (:func:`hub_positions`). The contact points lie a wheel radius from the hubs
    along the terrain normals of ``maps`` (a ``terrain.HeightMap`` stack; row i on map
    ``map_index[i]``) under the wheels; without ``maps``, or over a hole, straight down (a flat
    ground's). The support polygon: of a ``rigid`` rest, the wheels that carry load or hang at
    most :data:`ROCK_GAP` wheel radii above the ground (the body rocks onto them); with
    four-wheel ground following (which keeps every wheel on the ground, as a suspended vehicle
    does) every wheel not over a hole. ``mu`` (float or ``(M,)``; None: no limit): the force
    that can tip the body is what the contacts can transmit (:func:`friction_limited_force`,
    about the load-weighted mean normal of the supporting wheels), and the demand is the share
    of the friction cone the motion asks for (0 without ``mu``)."""
    rows = (lambda v: v) if idx is None else (lambda v: v[idx] if isinstance(
        v, torch.Tensor) and v.ndim else v)
    R = gc.rotation
    com_b = torch.stack(torch.broadcast_tensors(*(
        torch.as_tensor(rows(c), dtype=R.dtype, device=R.device) + torch.zeros_like(R[:, 0, 0])
        for c in vehicle.com)), 1)
    com_w = gc.position + matvec3(R, com_b)
    r = torch.as_tensor(rows(vehicle.wheel_radius), dtype=R.dtype, device=R.device)
    hubs = gc.wheel_position if rigid else hub_positions(gc, vehicle)
    up = torch.zeros_like(hubs)
    up[..., 2] = 1.0
    n = up
    if maps is not None:
        normals = maps.normal(hubs[..., 0], hubs[..., 1], map_index.unsqueeze(1))
        n = torch.where(torch.isfinite(normals).all(-1, keepdim=True), normals, up)
    pts = hubs - r.reshape(-1, 1, 1) * n
    if rigid:
        mass = torch.as_tensor(rows(vehicle.mass), dtype=R.dtype, device=R.device)
        share = (LOAD_SHARE * gravity / vehicle.num_wheels) * mass
        loaded = (gc.normal_force > share.reshape(-1, 1)) | (
            (gc.gap <= ROCK_GAP * r.reshape(-1, 1)) & ~gc.wheel_hole)
    else:
        loaded = ~gc.wheel_hole
    acc = (torch.zeros_like(com_w) if accel_b is None
           else matvec3(R, accel_b))
    if mu is None:
        return (force_angle_margin(pts, loaded, com_w, acc, gravity, table),
                torch.zeros_like(com_w[:, 0]))
    if rigid:  # the support normal: the supporting wheels' normals weighted by their loads
        fz = gc.normal_force
        w = torch.where(loaded, fz.clamp_min(0.0) + 1e-9, torch.zeros_like(fz))
    else:  # every wheel on the ground carries its share
        w = loaded.to(n.dtype)
    mean = (w.unsqueeze(-1) * n).sum(1)
    norm = torch.linalg.vector_norm(mean, dim=-1, keepdim=True)
    support = torch.where(norm > 0, mean / norm.clamp_min(1e-12), R[:, :, 2])
    force, demand = friction_limited_force(net_force(acc, gravity), support, mu)
    return force_angle_margin(pts, loaded, com_w, acc, gravity, table, force), demand
