"""Static wheel loads: the vertical forces of the loaded wheels that hold a rigid body's weight
(force and moment balance, minimum norm, negative forces released), the paper's SVD
pseudo-inverse solution at rest, in closed form.

Which wheels may carry load (``support_forces(..., touching=...)``):

* the paper's rule (``touching=None``; the ``drop`` method's own forces): every wheel within
  ``d_eps`` (1 cm) of the ground, as the pose-estimation paper. Its minimum-norm split can load a
  wheel hovering a few millimetres up while a wheel that touches gets nothing (on a 6-wheel rover
  over bumps, 16 % of rests in ``tests/test_ground_contact.py``'s setting).
* the touching rule (what the ground-following methods use): the wheels that touch (gap within
  :data:`TOUCH_TOL`) first; only where they cannot hold the centre of mass (the split over them is not a balance with forces
  >= 0) are the wheels within ``d_eps`` used, as the paper. So no hovering wheel carries load
  while a touching one carries none, unless the touching wheels alone cannot hold the body.
"""

from __future__ import annotations

import torch

__all__ = ["support_forces", "support_forces_kn", "TOUCH_TOL"]

#: a wheel touches the ground when its gap is at most this [m] (0.5 mm)
TOUCH_TOL = 5e-4


def support_forces(wheel_x: torch.Tensor, wheel_y: torch.Tensor, com_x: torch.Tensor,
                   com_y: torch.Tensor, active: torch.Tensor, weight: float,
                   tol: float | None = None, touching: torch.Tensor | None = None):
    """Vertical wheel forces that hold the weight, for wheels that may carry load.

    Solves ``sum_j f_j = W``, ``sum_j f_j (x_j - c_x) = 0``, ``sum_j f_j (y_j - c_y) = 0`` with
    the minimum-norm ``f`` over the ``active`` wheels (for three wheels this is the lever rule; on
    a symmetric layout it is ``W / K``), releases wheels whose force comes out negative and solves
    again, as the paper does. This is also what the SVD pseudo-inverse of the paper's contact
    matrix gives at rest. ``f = a_j (l0 + l1 dx_j + l2 dy_j)`` with ``(l0, l1, l2)`` from the 3x3
    normal equations, solved in closed form (adjugate), elementwise over N.

    Args:
        wheel_x, wheel_y: ``(N, K)`` horizontal contact positions, world frame [m].
        com_x, com_y: ``(N,)`` horizontal centre of mass [m].
        active: ``(N, K)`` bool, wheels allowed to carry load (the paper's: within ``d_eps``).
        weight: ``m g`` [N].
        touching: ``(N, K)`` bool, the wheels that touch: they carry the load where they can
            hold it alone; None: the paper's rule over ``active``.

    Returns:
        ``(forces (N, K) >= 0 [N], stable (N,) bool)``; stable means the solution balances the
        weight and moments with non-negative forces.
    """
    f, stable = support_forces_kn(wheel_x.T, wheel_y.T, com_x, com_y, active.T, weight, tol,
                                  None if touching is None else touching.T)
    return f.T, stable


def support_forces_kn(wheel_x, wheel_y, com_x, com_y, active, weight: float, tol=None,
                      touching=None):
    """:func:`support_forces` on wheel-major ``(K, N)`` arrays (the layout inside this module:
    the environment index innermost, so compiled kernels vectorize over it)."""
    f, stable = _split(wheel_x, wheel_y, com_x, com_y, active, weight, tol)
    if touching is None:
        return f, stable
    ft, held = _split(wheel_x, wheel_y, com_x, com_y, touching & active, weight, tol)
    return torch.where(held, ft, f), held | stable


def _split(wheel_x, wheel_y, com_x, com_y, active, weight: float, tol=None):
    """The minimum-norm split over ``active`` with negative forces released ``(K, N)``."""
    dtype = wheel_x.dtype
    K = wheel_x.shape[0]
    if tol is None:
        tol = 1e-6 if dtype == torch.float64 else 1e-3
    ridge = 1e-12 if dtype == torch.float64 else 1e-6
    dx = wheel_x - com_x
    dy = wheel_y - com_y
    scale = torch.maximum(dx.abs().amax(0), dy.abs().amax(0)).clamp_min(1e-3)
    ux, uy = dx / scale, dy / scale  # unit-free lever arms, for conditioning
    for _ in range(max(1, K - 2)):
        a = active.to(dtype)
        ax, ay = a * ux, a * uy
        s0, s1, s2 = a.sum(0), ax.sum(0), ay.sum(0)
        s11, s12, s22 = (ax * ux).sum(0), (ax * uy).sum(0), (ay * uy).sum(0)
        reg = ridge * (s0 + s11 + s22).clamp_min(1.0)  # keeps G invertible with < 3 wheels
        s0, s11, s22 = s0 + reg, s11 + reg, s22 + reg
        # first column of adj(G), G = [[s0, s1, s2], [s1, s11, s12], [s2, s12, s22]]
        c0 = s11 * s22 - s12 * s12
        c1 = s2 * s12 - s1 * s22
        c2 = s1 * s12 - s2 * s11
        k = weight / (s0 * c0 + s1 * c1 + s2 * c2)
        f = a * (c0 * k) + ax * (c1 * k) + ay * (c2 * k)
        active = active & ~(f < -tol * weight)
    f = f.clamp_min(0.0) * active.to(dtype)
    res_f = (f.sum(0) - weight).abs()
    res_m = torch.maximum((f * ux).sum(0).abs(), (f * uy).sum(0).abs())
    stable = (res_f <= tol * weight) & (res_m <= tol * weight)
    return f, stable

