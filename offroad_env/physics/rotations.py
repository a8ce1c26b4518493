"""Rotations and transforms, batched over leading dimensions.

Convention (the whole project): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` maps body vectors to the
world frame; body x forward, y left, z up. With it, positive roll lifts the body's left side
(``R @ e_y`` gains +z) and positive pitch puts the nose down (``R @ e_x`` gains -z).
"""

from __future__ import annotations

import torch

__all__ = ["rot_zyx", "rot_zyx_entries", "stack_entries", "make_transform", "matmul3",
           "matvec3", "norm3", "place_points", "quat_from_ypr", "rotation_entries",
           "ypr_from_entries", "quat_step", "vcross", "vdot", "vrot", "vrot_inv", "vmat"]


def matmul3(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """``A @ B`` for ``(..., 3, 3)`` matrices (broadcast), written out as three elementwise
    multiply-adds: a compiled step fuses them into its kernel (a batched ``@`` of 3 x 3 matrices
    is a separate BLAS call), and unlike a ``sum`` over the inner index their rounding does not
    depend on the batch size (a reduction kernel vectorizes differently at other N, so sub-env i
    of a vector env would differ from the single env in the last bit)."""
    return (A[..., :, 0:1] * B[..., 0:1, :] + A[..., :, 1:2] * B[..., 1:2, :]
            + A[..., :, 2:3] * B[..., 2:3, :])


def matvec3(A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``A @ v`` for ``(..., 3, 3)`` matrices and ``(..., 3)`` vectors (broadcast); see
    :func:`matmul3`."""
    v = v.unsqueeze(-2)
    return A[..., 0] * v[..., 0] + A[..., 1] * v[..., 1] + A[..., 2] * v[..., 2]


def norm3(v: torch.Tensor) -> torch.Tensor:
    """Euclidean norm over the last dimension of size 3, written out (see :func:`matmul3`)."""
    return torch.sqrt(v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1] + v[..., 2] * v[..., 2])


def rot_zyx_entries(yaw: torch.Tensor, pitch: torch.Tensor, roll: torch.Tensor):
    """The nine entries of ``Rz(yaw) Ry(pitch) Rx(roll)`` as rows of separate tensors shaped like
    the angles (for elementwise kernels: no strided loads from a stacked matrix)."""
    cy, sy = torch.cos(yaw), torch.sin(yaw)
    cp, sp = torch.cos(pitch), torch.sin(pitch)
    cr, sr = torch.cos(roll), torch.sin(roll)
    spsr, spcr = sp * sr, sp * cr
    return ((cy * cp, cy * spsr - sy * cr, cy * spcr + sy * sr),
            (sy * cp, sy * spsr + cy * cr, sy * spcr - cy * sr),
            (-sp, cp * sr, cp * cr))


def stack_entries(E) -> torch.Tensor:
    """``(..., 3, 3)`` matrix from the nested rows of :func:`rot_zyx_entries`."""
    m = torch.stack([e for row in E for e in row], dim=-1)
    return m.view(*m.shape[:-1], 3, 3)


def rot_zyx(yaw: torch.Tensor, pitch: torch.Tensor, roll: torch.Tensor) -> torch.Tensor:
    """``(..., 3, 3)`` rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` from angles of shape ``(...)`` [rad]."""
    return stack_entries(rot_zyx_entries(yaw, pitch, roll))


def make_transform(R: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``(..., 4, 4)`` homogeneous transform from ``(..., 3, 3)`` R and ``(..., 3)`` t."""
    top = torch.cat((R, t.unsqueeze(-1)), dim=-1)
    bottom = torch.zeros(top.shape[:-2] + (1, 4), dtype=R.dtype, device=R.device)
    bottom[..., 0, 3] = 1.0
    return torch.cat((top, bottom), dim=-2)


def place_points(x, y, c, s, px, py):
    """World ``(x, y)`` of body points ``(px, py)`` of frames at ``(x, y)`` with heading
    ``(cos, sin) = (c, s)``: ``x + c px - s py``, ``y + s px + c py`` (a yaw rotation and a
    shift; shapes broadcast, e.g. ``(N,)`` poses and ``(K, 1)`` points give ``(K, N)``)."""
    return x + c * px - s * py, y + s * px + c * py


# ------------------------------------------------------------- unit quaternions (w, x, y, z)
def quat_from_ypr(yaw, pitch, roll) -> torch.Tensor:
    """``(N, 4)`` unit quaternion ``(w, x, y, z)`` of ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    cy, sy = torch.cos(0.5 * yaw), torch.sin(0.5 * yaw)
    cp, sp = torch.cos(0.5 * pitch), torch.sin(0.5 * pitch)
    cr, sr = torch.cos(0.5 * roll), torch.sin(0.5 * roll)
    return torch.stack((cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr,
                        cy * sp * cr + sy * cp * sr, sy * cp * cr - cy * sp * sr), 1)


def rotation_entries(qw, qx, qy, qz):
    """The nine entries ``R[i][j]`` (a tuple of rows of ``(N,)`` tensors) of a unit
    quaternion's rotation."""
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    return ((1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)),
            (2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)),
            (2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)))


def ypr_from_entries(R):
    """``(yaw, pitch, roll)`` ``(N,)`` each of ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    yaw = torch.atan2(R[1][0], R[0][0])
    pitch = torch.asin((-R[2][0]).clamp(-1.0, 1.0))
    roll = torch.atan2(R[2][1], R[2][2])
    return yaw, pitch, roll


def quat_step(q, w, h):
    """``q exp(h w / 2)``, renormalised: the body turns by ``h |w|`` about ``w`` (body frame)."""
    wn = torch.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    half = 0.5 * h * wn
    k = torch.where(wn > 1e-12, torch.sin(half) / wn.clamp_min(1e-12),
                    torch.full_like(wn, 0.5 * h))
    dw, dx, dy, dz = torch.cos(half), k * w[0], k * w[1], k * w[2]
    qw, qx, qy, qz = q
    nw = qw * dw - qx * dx - qy * dy - qz * dz
    nx = qw * dx + qx * dw + qy * dz - qz * dy
    ny = qw * dy - qx * dz + qy * dw + qz * dx
    nz = qw * dz + qx * dy - qy * dx + qz * dw
    norm = torch.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    return [nw / norm, nx / norm, ny / norm, nz / norm]


# ---- vectors as 3-tuples of component tensors (any broadcastable shapes), as the physical
# ---- model's step keeps them: elementwise work a compiled step fuses
def vcross(a, b):
    """``a x b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def vdot(a, b):
    """``a . b``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def vrot(R, v):
    """``R v``: the world components of body vector ``v`` (``R`` as :func:`rotation_entries`
    gives it, nested 3 x 3 of tensors)."""
    return tuple(R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3))


def vrot_inv(R, v):
    """``R^T v``: the body components of world vector ``v``."""
    return tuple(R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2] for i in range(3))


def vmat(J, v):
    """``J v`` for a 3 x 3 ``J`` of floats (an inertia tensor)."""
    return tuple(J[i][0] * v[0] + J[i][1] * v[1] + J[i][2] * v[2] for i in range(3))
