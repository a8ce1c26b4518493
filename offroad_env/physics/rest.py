"""The physical model's own rest: the pose at which a braked vehicle's springs, tyres and ruts
hold it still on the ground where it was put (a reset), found before its first step.

A reset's placement (:func:`~.ground.rigid_contact`) is a rigid body on point contacts straight
below its hubs. The physical model's wheels meet the ground along their own contact normals, on
springs that each carry their own load, and on soil in ruts as deep as that load sinks them.
Started from the rigid rest with every spring at the flat-ground sag, the body is thrown off a
slope by its springs. :func:`settle` moves it to its own rest instead.

**The equations.** In the body frame (x forward, y left, z up, origin at the centre of mass),
wheel j's ground force is ``F_j z_b + f_j``: ``F_j`` the spring's push (``k s_j``, plus the bump
stop past ``s_max``; ``s_j`` the compression that puts the tyre on its support, the rut's floor
on soil, :func:`~.body_contact.wheel_contacts`) and ``f_j`` friction in the body's x-y plane.
The brake shares the in-plane friction that holds the weight by the wheels' normal loads, as the
step's holding brake does (:func:`~.drive.braked_body_forces`): ``f_j = -(N_j / sum N) g_xy``
with ``g_b = R^T (0, 0, -m g)`` the weight in the body frame. At rest the forces and the moments
about the centre of mass vanish, with the contact points at ``(x_j, y_j, z_j)``:

    sum F_j + g_z = 0,   sum (y_j F_j - z_j f_y,j) = 0,   sum (x_j F_j - z_j f_x,j) = 0

The unknowns are the body's height along z_b and its tilt about x_b and y_b (its heading and
its place in the plane stay where they were put). Raising the body by ``delta`` and turning it by
``phi`` about x_b and ``theta`` about y_b lifts wheel j by ``delta + y_j phi - x_j theta``, which
unloads its spring by ``k_j`` times that: Newton's step solves the 3 x 3 system of those
stiffnesses (Cramer's rule, elementwise). Each iteration re-reads the contacts at the new pose
(wheels that lift off or touch down leave or join the system) and, on soil, sinks each wheel to
the static sinkage of its load (:func:`~.soil.sinkage`, ``static=True``).

**Whether it holds.** A rest is settled when the residual force is under ``1e-4 m g`` and the
moments under ``1e-4 m g`` times the wheelbase. It holds when friction can carry the weight's
component in the body's plane: ``|g_xy| <= sum_j mu_j N_j`` over the braked wheels, with
``mu_j`` the ground's friction, or on soil its holding coefficient ``tan(phi) + b l c / N``
(:func:`~.soil_contact.soil_shear`). Whether it tips is the step's own judgement, made on the
result (the static force-angle margin over every wheel's support point).

Units: m, N, rad. Shapes: ``(N,)`` per environment, ``(K, N)`` per wheel (wheel-major).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .body_contact import WheelContacts, wheel_contacts
from .drive import caster_mask
from .rotations import quat_step, rotation_entries, vrot_inv
from .soil import sinkage, sinkage_slope
from .soil_contact import soil_shear

__all__ = ["Rest", "settle", "REST_ITERATIONS", "REST_TOL"]

#: Newton iterations of :func:`settle`, at most (it stops once every row has settled: on the
#: default Perlin maps 95 % of rows within 6, hard ground; soil, under-relaxed, in about 10)
REST_ITERATIONS = 12
#: rounds of the bracketed root search for a wheel's load on soil (``_wheel_loads``)
LOAD_STEPS = 8
#: the settled residual: force over ``m g``, moments over ``m g`` times the wheelbase
REST_TOL = 1e-4


class Rest(NamedTuple):
    """The result of :func:`settle`: the centre of mass ``c`` and attitude ``q`` (lists of
    ``(N,)``, world; ``(w, x, y, z)``), the ruts ``z_rut`` ``(K, N)`` [m] (None: no soil), the
    contacts there (:class:`~.body_contact.WheelContacts`), each wheel's ground force
    ``G`` (3-tuple of ``(K, N)``, world [N]) and normal load ``N`` ``(K, N)`` [N], ``settled``
    and ``holds`` ``(N,)`` bool (module docstring)."""

    c: list
    q: list
    z_rut: torch.Tensor | None
    contacts: WheelContacts
    G: tuple
    N: torch.Tensor
    settled: torch.Tensor
    holds: torch.Tensor


def settle(vehicle, layout, c, q, maps, map_index, gravity: float, mu, soil=None,
           soft=None, iterations: int = REST_ITERATIONS) -> Rest:
    """The braked rest (module docstring) of bodies placed at ``c`` (three ``(N,)``, world
    [m]) with attitude ``q`` (four ``(N,)``), their wheels unsteered.

    Args:
        layout: :func:`~.rigid_body.make_layout`'s constants of ``vehicle``.
        mu: the hard ground's friction: a float, ``(N,)`` or ``(K, N)``.
        soil: the soil (:class:`~.soil.Soil` or the per-wheel view of a material map), or None
            (hard ground); soft: ``(K, N)`` bool, the wheels on soil (None: all, with a soil).
    """
    K, m, r = vehicle.num_wheels, vehicle.mass, vehicle.wheel_radius
    half_w = 0.5 * vehicle.wheel_width
    b = 2.0 * half_w
    c, q = list(c), list(q)
    like = c[0]
    caster = caster_mask(vehicle, like.device)
    z_rut = None
    if soil is not None:  # start as deep as the ruts of equal shares of the weight
        w0 = torch.full((K, like.shape[0]), m * gravity / K, dtype=like.dtype, device=like.device)
        drop = _rut(soil, soft, b, r, w0).mean(0)
        R = rotation_entries(*q)
        c = [c[i] - drop * R[i][2] for i in range(3)]
    x_scale = m * gravity * max(vehicle.wheel_base, 1e-3)
    for it in range(iterations + 1):
        R = rotation_entries(*q)
        xb = (R[0][0], R[1][0], R[2][0])
        yb = (R[0][1], R[1][1], R[2][1])
        zb = (R[0][2], R[1][2], R[2][2])
        wc = wheel_contacts(layout, c, R, xb, yb, maps, map_index, r, half_w)
        ratio_n = wc.e / r
        upright = zb[2] > 0.1
        F, k, z_rut = _wheel_loads(layout, wc.s, ratio_n, upright, soil, soft, b, r)
        N0 = F / ratio_n
        Nb = N0 if caster is None else torch.where(caster, torch.zeros_like(N0), N0)
        total = Nb.sum(0)
        share = Nb / torch.where(total > 0, total, torch.ones_like(total))
        gx, gy, gz = (-m * gravity * R[2][i] for i in range(3))
        fx, fy = -share * gx, -share * gy
        x, y, z = vrot_inv(R, tuple(wc.point[i] - c[i] for i in range(3)))
        r1 = F.sum(0) + gz
        r2 = (y * F - z * fy).sum(0)
        r3 = (x * F - z * fx).sum(0)
        done = ((r1.abs() <= REST_TOL * m * gravity) & (r2.abs() <= REST_TOL * x_scale)
                & (r3.abs() <= REST_TOL * x_scale))
        if it == iterations or (it >= 2 and bool(done.all())):  # (a host sync, once an
            break                                                 # iteration)
        # a row that has settled stays where it settled while the others go on, so that its
        # rest does not depend on which other rows were settled with it
        hold = done if it >= 2 else torch.zeros_like(done)
        # Newton: sum_j k_j [1, y, -x; y, y^2, -x y; x, x y, -x^2] (delta, phi, theta) = r
        a = [[(k * u * w).sum(0) for w in (1.0, y, -x)] for u in (1.0, y, x)]
        delta, phi, theta, ok = _solve3(a, (r1, r2, r3))
        if soil is not None:  # the ruts' stiffness moves with the load: under-relaxed
            relax = 0.6 if soft is None else torch.where(soft.any(0), 0.6, 1.0)
            delta, phi, theta = relax * delta, relax * phi, relax * theta
        # fewer than three wheels down (a twisted placement): lower the body until a third
        # wheel touches
        third = (wc.s - z_rut if z_rut is not None else wc.s).topk(min(3, K), 0).values[-1]
        delta = torch.where(ok, delta, third.clamp_max(0.0) - 1e-3 * r)
        delta = delta.clamp(-0.25 * r, 0.25 * r)
        phi, theta = phi.clamp(-0.1, 0.1), theta.clamp(-0.1, 0.1)
        c = [torch.where(hold, c[i], c[i] + delta * zb[i]) for i in range(3)]
        q = [torch.where(hold, a, b) for a, b in
             zip(q, quat_step(q, (phi, theta, torch.zeros_like(phi)), 1.0))]
    if z_rut is not None:  # the hubs and contacts over the ruts' floors
        wc = wheel_contacts(layout, c, R, xb, yb, maps, map_index, r, half_w, z_rut)
    settled = ((r1.abs() <= REST_TOL * m * gravity) & (r2.abs() <= REST_TOL * x_scale)
               & (r3.abs() <= REST_TOL * x_scale) & (wc.touch.sum(0) >= 3))
    G = tuple(F * zb[i] + fx * xb[i] + fy * yb[i] for i in range(3))
    N = vdot_rows(G, wc.n).clamp_min(0.0)
    mu_w = _holding_mu(soil, soft, b, r, z_rut, N, mu)
    if caster is not None:
        mu_w = torch.where(caster, torch.zeros_like(N), mu_w * torch.ones_like(N))
    holds = torch.sqrt(gx * gx + gy * gy) <= (mu_w * N).sum(0)
    return Rest(c, q, z_rut, wc, G, N, settled, holds)


def vdot_rows(a, b):
    """``a . b`` of two 3-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _wheel_loads(layout, p, ratio_n, upright, soil, soft, b, r, steps: int = LOAD_STEPS):
    """Each wheel's spring force ``F`` [N] along z_b, its stiffness ``dF/dp`` [N/m] against
    the ground's rise ``p`` into the free tyre (``(K, N)``, :attr:`WheelContacts.s` on rigid
    ground) and its rut ``(K, N)`` [m] (None off soil). On soil the wheel sinks to the static
    sinkage ``Z`` of its normal load ``F / ratio_n``: the spring's compression ``c`` is the
    root of ``H(c) = c + Z(spring(c) / ratio_n) - p``, which rises from ``H(0) = -p`` to
    ``H(p) >= 0``. The bracket is split first at the bump stop's onset ``s_max`` (where the
    spring's slope jumps), then narrowed by ``steps`` rounds of the Illinois variant of regula
    falsi (superlinear, bracketed, no host sync; 8 rounds meet an 80-step bisection within
    3e-9 relative in float64 over every soil of :data:`~.soil.SOILS`: ``tests/test_rest.py``).
    The stiffness is that of the spring and the soil in series, ``k_s / (1 + k_s dZ/dF)``,
    with the slope of the same sinkage interpolant (:func:`~.soil.sinkage_slope`)."""
    def spring(s):
        s = s.clamp_min(0.0)
        return layout.k * s + layout.k_b * (s - layout.s_max).clamp_min(0.0)

    def stiffness(s):
        return layout.k + torch.where(s > layout.s_max, layout.k_b, torch.zeros_like(s))

    down = (p > 0) & upright
    zero = torch.zeros_like(p)
    if soil is None:
        return (torch.where(down, spring(p), zero), torch.where(down, stiffness(p), zero),
                None)
    # c, the spring's compression: H(c) = c + Z(spring(c) / ratio_n) - p rises from
    # H(0) = -p to H(p) = Z(spring(p) / ratio_n) >= 0; the Illinois variant of regula falsi
    # keeps that bracket and converges superlinearly
    # (split first at the bump stop's onset, where the spring's slope jumps: each piece is
    # smooth)
    top = torch.where(down, p, zero)
    m = torch.minimum(top, layout.s_max * torch.ones_like(top))
    fm = m + _rut(soil, soft, b, r, spring(m) / ratio_n) - top
    up = fm >= 0
    a_, b_ = torch.where(up, zero, m), torch.where(up, m, top)
    fa = torch.where(up, -top, fm)
    fb = torch.where(up, fm, _rut(soil, soft, b, r, spring(top) / ratio_n))
    side = torch.zeros_like(p)
    for _ in range(steps):
        den = fb - fa
        c = torch.where(den > 0, (a_ * fb - b_ * fa) / torch.where(den > 0, den, 1.0), a_)
        fc = c + _rut(soil, soft, b, r, spring(c) / ratio_n) - top
        left = fc < 0  # the root lies above c
        # Illinois: halve the kept end's value when the same end is kept twice
        fb = torch.where(left & (side < 0), 0.5 * fb, fb)
        fa = torch.where(~left & (side > 0), 0.5 * fa, fa)
        a_, fa = torch.where(left, c, a_), torch.where(left, fc, fa)
        b_, fb = torch.where(left, b_, c), torch.where(left, fb, fc)
        side = torch.where(left, -1.0, 1.0)
    den = fb - fa
    c = torch.where(den > 0, (a_ * fb - b_ * fa) / torch.where(den > 0, den, 1.0), a_)
    F = torch.where(down, spring(c), zero)
    z, dz = _rut_slope(soil, soft, b, r, F / ratio_n)
    k_s = stiffness(p - z)
    k = torch.where(F > 0, k_s / (1.0 + k_s * dz / ratio_n), zero)
    if soft is not None:  # wheels on a material map's hard ground: the spring alone
        F = torch.where(soft, F, torch.where(down, spring(p), zero))
        k = torch.where(soft, k, torch.where(down, stiffness(p), zero))
    return F, k, z


def _rut_slope(soil, soft, b, r, load):
    """``(K, N)`` the static sinkage of ``load`` [N] on the soil and its slope [m/N] (0 off
    it)."""
    z, dz = sinkage_slope(soil, b, r, load, static=True)
    if soft is None:
        return z, dz
    return torch.where(soft, z, torch.zeros_like(z)), torch.where(soft, dz, torch.zeros_like(dz))


def _rut(soil, soft, b, r, load):
    """``(K, N)`` the static sinkage of ``load`` [N] on the soil (0 off it)."""
    z = sinkage(soil, b, r, load, static=True)
    return z if soft is None else torch.where(soft, z, torch.zeros_like(z))


def _holding_mu(soil, soft, b, r, z_rut, N, mu):
    """Each wheel's holding friction coefficient: ``mu`` on hard ground, the soil's shear
    strength over the load on soil (:func:`~.soil_contact.soil_shear`)."""
    mu = torch.as_tensor(mu, dtype=N.dtype, device=N.device)
    if soil is None:
        return mu
    zero = torch.zeros_like(N)
    mu_soil = soil_shear(soil, b, r, z_rut, zero, zero, zero, N, 1e-3)[2]
    return mu_soil if soft is None else torch.where(soft, mu_soil, mu * torch.ones_like(N))


def _solve3(a, rhs):
    """``a u = rhs`` for ``(N,)``-batched 3 x 3 systems (nested lists of tensors), by
    Cramer's rule: elementwise, the same on every machine. Returns ``u`` and ``ok``; a
    singular system (fewer than three wheels carrying the body) gives ``u = 0``, ``ok``
    False."""
    def det(m):
        return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    d = det(a)
    scale = (a[0][0].abs() * (a[1][1].abs() + 1e-30) * (a[2][2].abs() + 1e-30))
    ok = d.abs() > 1e-9 * scale
    safe = torch.where(ok, d, torch.ones_like(d))
    out = []
    for col in range(3):
        m = [[rhs[i] if j == col else a[i][j] for j in range(3)] for i in range(3)]
        out.append(torch.where(ok, det(m) / safe, torch.zeros_like(d)))
    return out + [ok]
