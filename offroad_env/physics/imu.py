"""IMU readings from a sensor's world trajectory: the one implementation, used by the
simulator (one step at a time, batched over N) and by the demo (over a whole logged drive).

Frames: world z up, gravity ``(0, 0, -g)``; ``R`` maps sensor-frame vectors to world.
An accelerometer measures specific force ``f = R^T (a - g_w) = R^T (a + (0, 0, g))``: at rest on
flat ground it reads ``(0, 0, +g)``. A gyro measures the body angular rate, here the rotation
``log(R_prev^T R)`` over the step divided by ``dt`` (exact for a constant rate).
"""

from __future__ import annotations

import torch

from .rotations import matmul3, matvec3, norm3

__all__ = ["specific_force", "angular_rate"]


def specific_force(accel_world: torch.Tensor, R: torch.Tensor, gravity: float) -> torch.Tensor:
    """``(..., 3)`` specific force [m/s^2] in the sensor frame from the world acceleration
    ``(..., 3)`` [m/s^2] and the sensor-to-world rotation ``(..., 3, 3)``."""
    a = accel_world.clone()
    a[..., 2] = a[..., 2] + gravity
    return matvec3(R.transpose(-1, -2), a)


def angular_rate(R_prev: torch.Tensor, R: torch.Tensor, dt: float) -> torch.Tensor:
    """``(..., 3)`` body-frame angular rate [rad/s] that turns ``R_prev`` into ``R``
    (``(..., 3, 3)`` each) in ``dt`` [s]: the axis-angle of ``R_prev^T R`` over ``dt``."""
    M = matmul3(R_prev.transpose(-1, -2), R)
    s = 0.5 * torch.stack((M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0],
                           M[..., 1, 0] - M[..., 0, 1]), -1)
    sin_t = norm3(s)
    cos_t = 0.5 * (M[..., 0, 0] + M[..., 1, 1] + M[..., 2, 2] - 1.0)
    # atan2 evaluated in float64 and rounded: torch's vectorized and scalar atan2 may differ in
    # the last bit, and which one an element gets depends on the batch size N; rounded from
    # float64 the float32 result no longer does (sub-env i equals the single env)
    theta = torch.atan2(sin_t.double(), cos_t.double()).to(sin_t.dtype) \
        if sin_t.dtype == torch.float32 else torch.atan2(sin_t, cos_t)
    scale = torch.where(sin_t > 1e-7, theta / sin_t.clamp_min(1e-7), torch.ones_like(theta))
    return s * (scale / dt).unsqueeze(-1)
