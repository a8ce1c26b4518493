"""Wheel-ground interaction laws, elementwise over tensors of any shape.

From the slip/skid seed: the symmetric slip ratio, the slip angle, linear forces saturated onto
the friction ellipse by radial scaling (the seed proves it is the Euclidean projection), the
soft-soil traction surrogate and rolling resistance. Units: m, s, rad, N.
"""

from __future__ import annotations

import torch

__all__ = ["slip_ratio", "slip_angle", "friction_ellipse", "soft_soil_traction",
           "rolling_resistance", "smooth_sign"]


def slip_ratio(vx: torch.Tensor, omega: torch.Tensor, radius, eps: float = 1e-6) -> torch.Tensor:
    """``kappa = (R w - vx) / max(|vx|, |R w|, eps)``, in [-2, 2]; > 0 driving, < 0 braking.

    ``vx``: longitudinal ground speed of the wheel centre [m/s]; ``omega``: wheel spin [rad/s].
    """
    rw = radius * omega
    den = torch.maximum(torch.maximum(vx.abs(), rw.abs()), torch.full_like(vx, eps))
    return (rw - vx) / den


def slip_angle(vx: torch.Tensor, vy: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``alpha = atan2(vy, |vx| + eps)`` [rad]: lateral slip of the contact."""
    return torch.atan2(vy, vx.abs() + eps)


def friction_ellipse(fx: torch.Tensor, fy: torch.Tensor, cap: torch.Tensor):
    """Project ``(fx, fy)`` onto ``fx^2 + fy^2 <= cap^2`` (``cap = mu F_z >= 0``) by radial
    scaling: unchanged inside, scaled by ``cap / |f|`` outside; ``cap = 0`` gives zero force."""
    norm = torch.sqrt(fx * fx + fy * fy)
    scale = torch.where(norm > cap, cap / norm.clamp_min(1e-30), torch.ones_like(norm))
    return fx * scale, fy * scale


def soft_soil_traction(kappa, fz, mu_peak, k_shape):
    """The seed's surrogate ``F_z mu_peak (1 - exp(-k |kappa|)) sgn(kappa)`` [N]."""
    return fz.clamp_min(0.0) * mu_peak * (1.0 - torch.exp(-k_shape * kappa.abs())) \
        * torch.sign(kappa)


def smooth_sign(v: torch.Tensor, v_eps: float) -> torch.Tensor:
    """``tanh(v / v_eps)``: the sign of a speed, continuous through zero (no chatter at rest)."""
    return torch.tanh(v / v_eps)


def rolling_resistance(vx, fz, c_rr, v_eps: float = 0.01, fx=None, fy=None, cap=None):
    """``-C_rr F_z sgn(vx)`` [N] with the smooth sign of :func:`smooth_sign`.

    With the contact's other tangential forces ``fx`` (along ``vx``), ``fy`` and its friction
    limit ``cap`` (``mu F_z``), the resistance is cut where it would carry their sum out of the
    friction circle: a tyre at its grip (a wheel stalled against a ledge's edge, held by
    friction at ``mu F_z``) slides rather than take ``C_rr F_z`` more from the ground."""
    f = -c_rr * fz.clamp_min(0.0) * smooth_sign(vx, v_eps)
    if cap is None:
        return f
    room = torch.sqrt((cap * cap - fy * fy).clamp_min(0.0))
    return torch.minimum(torch.maximum(fx + f, -room), room) - fx
