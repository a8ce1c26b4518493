"""The pose-estimation paper's method: the rigid body dropped vertically from level at fixed
``(x, y, yaw)``, integrated with SVD pseudo-inverse contact forces until it comes to rest (the
reference the plane method is tested against).

Free coordinates ``q = (z, roll, pitch)``, ``M = diag(m, I_roll, I_pitch)``; ``d_j`` the gap of
wheel j, ``f_j >= 0`` its vertical force. The columns of ``W_f`` map a unit vertical force at a
hub to the generalized force on q; ``W_g G`` is the weight at the centre of mass. Each step::

    v_i = v_{i-1} + dt M^-1 (W_f f_i + W_g G)
    d_i = d_{i-1} + dt W_f^T v_i = A f_i + b,   A = dt^2 W_f^T M^-1 W_f,
    b = d_{i-1} + dt W_f^T v_{i-1} + dt^2 W_f^T M^-1 W_g G

The wheels in contact (``d_j <= d_eps``, or touching) get ``d_i = 0``: ``A f = -b``, solved with
the SVD pseudo-inverse (singular values below ``rtol sigma_max`` zeroed); a wheel whose force
comes out negative leaves the ground and the rest are solved again. Gaps are measured from the
wheels' true 3-D positions ``t + R p_j``. The drop ends when the velocities vanish; at rest
``sum f = m g``, the moments balance and every ``f_j >= 0``.
"""

from __future__ import annotations

import torch

from ..rotations import rot_zyx_entries
from .common import body_columns, hub_query, rotate
from .contact import GroundContact, assemble

__all__ = ["rigid_drop"]



def rigid_drop(vehicle, terrain, x, y, yaw, map_idx, d_eps, gravity, max_iter, dt, tol,
               loads: bool = True) -> GroundContact:
    """The drop on checked inputs (:func:`~offroad_env.physics.ground.rigid_contact`)."""
    dtype = x.dtype
    dev = x.device
    if tol is None:
        tol = 1e-7 if dtype == torch.float64 else 1e-4
    rtol = 1e-10 if dtype == torch.float64 else 1e-5  # SVD: sigma < rtol * sigma_max -> 0
    wheels = body_columns(vehicle, x)
    com_b = vehicle.com
    r = vehicle.wheel_radius
    m, g = vehicle.mass, gravity
    N, K = x.shape[0], vehicle.num_wheels
    Minv = torch.tensor([1.0 / m, 1.0 / vehicle.inertia_roll, 1.0 / vehicle.inertia_pitch],
                        dtype=dtype, device=dev)
    roll = torch.zeros_like(x)
    pitch = torch.zeros_like(x)
    # start level, the highest wheel just touching
    rot0 = rot_zyx_entries(yaw, pitch, roll)
    _, _, _, h0, _, _ = hub_query(vehicle, terrain, x, y, rot0, wheels, map_idx)
    z = (h0 + r).amax(0)
    v = torch.zeros(N, 3, dtype=dtype, device=dev)
    done = torch.zeros(N, dtype=torch.bool, device=dev)
    iters = torch.full((N,), max_iter, dtype=torch.int32, device=dev)
    f = torch.zeros(N, K, dtype=dtype, device=dev)
    for i in range(max_iter):
        rot = rot_zyx_entries(yaw, pitch, roll)
        off_b, hx, hy, h, hole, off = hub_query(vehicle, terrain, x, y, rot, wheels, map_idx)
        d = (z + off_b[2] - r - h).T  # (N, K) gaps
        Wf, WgG = _wrenches(roll, pitch, wheels, com_b, m * g)
        A = dt * dt * Wf.transpose(1, 2) @ (Minv.view(1, 3, 1) * Wf)  # (N, K, K)
        b = d + dt * (Wf.transpose(1, 2) @ v.unsqueeze(-1)).squeeze(-1) \
            + dt * dt * (Wf.transpose(1, 2) @ (Minv * WgG).unsqueeze(-1)).squeeze(-1)
        # Touching wheels, and loaded wheels within d_eps. A wheel released for a negative force
        # comes back only when it touches again (without this hysteresis a wheel hovering within
        # d_eps is pulled down and released in turn, and the drop never settles).
        active = (d <= 0) | ((d <= d_eps) & (f > 0))
        f = _svd_forces(A, b, active, rtol)
        v_new = v + dt * Minv * ((Wf @ f.unsqueeze(-1)).squeeze(-1) + WgG)
        moving = ~done
        v = torch.where(moving.unsqueeze(1), v_new, v)
        z = torch.where(moving, z + dt * v[:, 0], z)
        roll = torch.where(moving, roll + dt * v[:, 1], roll)
        pitch = torch.where(moving, pitch + dt * v[:, 2], pitch)
        settled = moving & (v.abs().amax(1) < tol) & (active.sum(1) >= 3)
        iters = torch.where(settled, torch.full_like(iters, i + 1), iters)
        done = done | settled
        if (i + 1) % 25 == 0 and bool(done.all()):
            break
    rot = rot_zyx_entries(yaw, pitch, roll)
    off_b, hx, hy, h, hole, off = hub_query(vehicle, terrain, x, y, rot, wheels, map_idx)
    t = torch.stack((x, y, z), 1)
    gap = z + off_b[2] - r - h  # (K, N)
    # The paper's forces at rest: v = 0 and d = 0 for the wheels within d_eps, solved by the
    # SVD pseudo-inverse with negative forces released.
    contact = ((gap <= d_eps) & ~hole).T
    Wf, WgG = _wrenches(roll, pitch, wheels, com_b, m * g)
    A = dt * dt * Wf.transpose(1, 2) @ (Minv.view(1, 3, 1) * Wf)
    b = dt * dt * (Wf.transpose(1, 2) @ (Minv * WgG).unsqueeze(-1)).squeeze(-1)
    f = _svd_forces(A, b, contact, rtol)
    cx, cy, _ = rotate(rot, vehicle.com)
    dx, dy = (off_b[0] - cx).T, (off_b[1] - cy).T
    res_f = (f.sum(1) - m * g).abs()
    res_m = torch.maximum((f * dx).sum(1).abs(), (f * dy).sum(1).abs())
    scale = torch.maximum(dx.abs().amax(1), dy.abs().amax(1)).clamp_min(1e-3)
    stable = (res_f <= 1e-6 * m * g) & (res_m <= 1e-6 * m * g * scale)
    return assemble(vehicle, torch.stack((yaw, pitch, roll), 1), rot, t, wheels, h, hole, off,
                    d_eps, gravity, done, iters, gap=gap, forces=f.T, stable=stable, offs=off_b,
                    loads=loads, settled=done)


def _wrenches(roll, pitch, wheels, com_b, weight):
    """Wrench matrices of the drop, ``q = (z, roll, pitch)`` of the rear-axle frame.

    ``W_f (N, 3, K)``: column j is the generalized force of a unit upward force at hub j,
    ``d(p_jz)/dq = (1, py ca cb, -px cb - py sa sb)`` (hubs have body z = 0; ``a`` roll, ``b``
    pitch). ``W_g G (N, 3)``: the weight at the centre of mass c,
    ``-m g (1, (cy ca - cz sa) cb, -cx cb - (cy sa + cz ca) sb)``.
    """
    px, py = wheels[0][:, 0], wheels[1][:, 0]
    cx, cy, cz = com_b[0], com_b[1], com_b[2]
    ca, sa, cb, sb = torch.cos(roll), torch.sin(roll), torch.cos(pitch), torch.sin(pitch)
    c1 = lambda t: t.unsqueeze(1)  # noqa: E731
    Wf = torch.stack((torch.ones_like(c1(ca) * px), py * c1(ca * cb),
                      -px * c1(cb) - py * c1(sa * sb)), dim=1)
    WgG = -weight * torch.stack((torch.ones_like(ca), (cy * ca - cz * sa) * cb,
                                 -cx * cb - (cy * sa + cz * ca) * sb), dim=1)
    return Wf, WgG


def _svd_forces(A: torch.Tensor, b: torch.Tensor, active: torch.Tensor, rtol: float):
    """``f = -A^# b`` over the active wheels, SVD pseudo-inverse (singular values below
    ``rtol * sigma_max`` zeroed); wheels whose force comes out negative are released and the
    rest solved again. ``A: (N, K, K)``, ``b, active: (N, K)``; returns ``(N, K)`` forces >= 0."""
    dtype = A.dtype
    f = torch.zeros_like(b)
    for _ in range(A.shape[-1]):
        am = active.to(dtype)
        Aa = A * am.unsqueeze(1) * am.unsqueeze(2)
        f = -(torch.linalg.pinv(Aa, rtol=rtol, hermitian=True) @ (b * am).unsqueeze(-1)
              ).squeeze(-1) * am
        negative = active & (f < 0)
        active = active & ~negative
    return f.clamp_min(0.0) * active.to(dtype)

