"""Rotations and transforms: the fused 3x3 products and the yaw placement of points."""

import torch

from offroad_env.physics.rotations import matmul3, matvec3, place_points, rot_zyx

F64 = torch.float64


def test_matmul3_and_matvec3_equal_the_matrix_product():
    g = torch.Generator().manual_seed(0)
    A = torch.randn(5, 2, 3, 3, dtype=F64, generator=g)
    B = torch.randn(2, 3, 3, dtype=F64, generator=g)
    v = torch.randn(5, 1, 3, dtype=F64, generator=g)
    torch.testing.assert_close(matmul3(A, B), A @ B)
    torch.testing.assert_close(matvec3(A, v), (A @ v.unsqueeze(-1)).squeeze(-1))


def test_place_points_is_a_yaw_rotation_and_a_shift():
    g = torch.Generator().manual_seed(0)
    x, y, yaw = (torch.randn(5, generator=g, dtype=torch.float64) for _ in range(3))
    px, py = (torch.randn(3, 1, generator=g, dtype=torch.float64) for _ in range(2))
    wx, wy = place_points(x, y, torch.cos(yaw), torch.sin(yaw), px, py)
    R = rot_zyx(yaw, torch.zeros_like(yaw), torch.zeros_like(yaw))  # (5, 3, 3)
    body = torch.stack((px.expand(3, 5), py.expand(3, 5), torch.zeros(3, 5, dtype=torch.float64)),
                       -1)  # (3, 5, 3)
    world = (R.unsqueeze(0) @ body.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(wx, x + world[..., 0])
    torch.testing.assert_close(wy, y + world[..., 1])
