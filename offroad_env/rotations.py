"""Rotations and transforms, batched over leading dimensions.

Convention (the whole project): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` maps body vectors to the
world frame; body x forward, y left, z up. With it, positive roll lifts the body's left side
(``R @ e_y`` gains +z) and positive pitch puts the nose down (``R @ e_x`` gains -z).
"""

from __future__ import annotations

import torch

__all__ = ["rot_zyx", "rot_zyx_entries", "stack_entries", "ypr_from_matrix", "make_transform",
           "invert_transform", "matmul3", "matvec3"]


def matmul3(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """``A @ B`` for ``(..., 3, 3)`` matrices (broadcast), as a multiply and a sum over the
    inner index: a compiled step fuses it into its kernel, where a batched ``@`` of 3 x 3
    matrices is a separate BLAS call (costly at small N, and ~5 % of the step at N = 4096)."""
    return (A.unsqueeze(-1) * B.unsqueeze(-3)).sum(-2)


def matvec3(A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``A @ v`` for ``(..., 3, 3)`` matrices and ``(..., 3)`` vectors (broadcast); see
    :func:`matmul3`."""
    return (A * v.unsqueeze(-2)).sum(-1)


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


def ypr_from_matrix(R: torch.Tensor) -> torch.Tensor:
    """``(..., 3)`` angles ``[yaw, pitch, roll]`` [rad] of ``(..., 3, 3)`` rotations (inverse of
    :func:`rot_zyx` for pitch in [-pi/2, pi/2]); ``asin`` input clamped so a rounding error past
    +-1 never gives NaN."""
    pitch = torch.asin((-R[..., 2, 0]).clamp(-1.0, 1.0))
    roll = torch.atan2(R[..., 2, 1], R[..., 2, 2])
    yaw = torch.atan2(R[..., 1, 0], R[..., 0, 0])
    return torch.stack((yaw, pitch, roll), dim=-1)


def make_transform(R: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``(..., 4, 4)`` homogeneous transform from ``(..., 3, 3)`` R and ``(..., 3)`` t."""
    top = torch.cat((R, t.unsqueeze(-1)), dim=-1)
    bottom = torch.zeros(top.shape[:-2] + (1, 4), dtype=R.dtype, device=R.device)
    bottom[..., 0, 3] = 1.0
    return torch.cat((top, bottom), dim=-2)


def invert_transform(T: torch.Tensor) -> torch.Tensor:
    """Inverse of rigid ``(..., 4, 4)`` transforms: ``[R^T, -R^T t; 0, 1]``."""
    Rt = T[..., :3, :3].transpose(-1, -2)
    return make_transform(Rt, -(Rt @ T[..., :3, 3:4]).squeeze(-1))
