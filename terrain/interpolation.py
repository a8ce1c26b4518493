"""The interpolants of a height-map cell, given its four corner samples ``h00, h10, h01, h11``
(``h10`` at ``ix + 1``, ``h01`` at ``iy + 1``) and the fractions ``fx, fy`` in [0, 1] across it.

Interpolation:

* ``"bilinear"``: ``h = lerp(lerp(h00, h10, fx), lerp(h01, h11, fx), fy)`` -- the four-wheel
  ground-following seed's lookup.
* ``"triangles"``: two planar triangles per cell split along the diagonal from ``(x_i, y_j)`` to
  ``(x_i+1, y_j+1)`` (raisim, MuJoCo). For ``fx >= fy`` the triangle is (00, 10, 11):
  ``h = h00 + fx (h10 - h00) + fy (h11 - h10)``; otherwise (00, 01, 11):
  ``h = h00 + fy (h01 - h00) + fx (h11 - h01)``.

Both are exact at the nodes and on planes. A cell touching a hole (a NaN corner) is a hole for
both: the unused corners enter as ``0 * h``, which is 0, or NaN.
"""

from __future__ import annotations

import torch

__all__ = ["INTERPOLATIONS", "cell_height", "cell_gradient"]

INTERPOLATIONS = ("bilinear", "triangles")


def cell_height(kind: str, h00, h10, h01, h11, fx, fy) -> torch.Tensor:
    """The height of the interpolant ``kind`` at ``(fx, fy)`` in the cell."""
    if kind == "bilinear":
        return torch.lerp(torch.lerp(h00, h10, fx), torch.lerp(h01, h11, fx), fy)
    upper = fy > fx  # triangle (00, 01, 11)
    ha = h00 + fx * (h10 - h00) + fy * (h11 - h10)
    hb = h00 + fy * (h01 - h00) + fx * (h11 - h01)
    return torch.where(upper, hb, ha) + 0.0 * (h01 + h10)


def cell_gradient(kind: str, h00, h10, h01, h11, fx, fy) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dh/dfx, dh/dfy)`` of the interpolant ``kind`` at ``(fx, fy)`` (per cell fraction; on a
    triangle edge, the triangle at the higher index)."""
    if kind == "bilinear":
        return torch.lerp(h10 - h00, h11 - h01, fy), torch.lerp(h01 - h00, h11 - h10, fx)
    upper = fy > fx
    du = torch.where(upper, h11 - h01, h10 - h00) + 0.0 * h01
    dv = torch.where(upper, h01 - h00, h11 - h10) + 0.0 * h10
    if fx.requires_grad or fy.requires_grad:
        # planar triangles: the slope's derivative is 0, but keep the graph connected
        du = du + 0.0 * fx
        dv = dv + 0.0 * fy
    return du, dv
