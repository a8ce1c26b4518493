"""Rotations and transforms, batched over leading dimensions.

Convention (the whole project): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` maps body vectors to the
world frame; body x forward, y left, z up. With it, positive roll lifts the body's left side
(``R @ e_y`` gains +z) and positive pitch puts the nose down (``R @ e_x`` gains -z).
"""

from __future__ import annotations

import torch

__all__ = ["rot_zyx", "rot_zyx_entries", "stack_entries", "make_transform", "matmul3",
           "matvec3", "norm3", "place_points"]


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
