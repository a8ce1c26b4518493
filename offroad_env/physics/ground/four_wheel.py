"""The four-wheel seed's ground following, exactly (vertical projection of the rectangle's
corners, pitch and roll from the averaged axle and side heights)."""

from __future__ import annotations

import torch

from terrain import HeightMap

from ..constants import GRAVITY
from ..rotations import place_points, rot_zyx_entries
from ..vehicle import Vehicle
from .common import body_columns, fill_holes, pose_inputs, query
from .contact import GroundContact, assemble

__all__ = ["four_wheel"]


def four_wheel(vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None, *,
               d_eps: float = 0.01, gravity: float = GRAVITY, loads: bool = True
               ) -> GroundContact:
    """The four-wheel seed's ground following, batched over N (and over a stack of maps).

    The four wheels are the corners of the ``wheel_base x track_width`` rectangle, in the seed's
    order FL, FR, RL, RR. Their planar positions are projected straight down onto the terrain
    (the map's interpolation), and::

        z_front = (z_FL + z_FR) / 2    z_rear = (z_RL + z_RR) / 2
        z_left  = (z_FL + z_RL) / 2    z_right = (z_FR + z_RR) / 2
        pitch = atan((z_rear - z_front) / wheel_base)
        roll  = atan((z_left - z_right) / track_width)
        R = Rz(yaw) Ry(pitch) Rx(roll),   t = [x, y, z_rear] + wheel_radius * R e_z

    The rear-axle frame's origin ``t`` sits ``wheel_radius`` along the body z axis above the
    rear contact point ``[x, y, z_rear]``: the seed's block "internally applies wheel radius to
    lift above the contact plane" (on a tilted body the lift tilts with it, which is what
    reproduces the seed's worked example: its distance and its z minimum).

    Per-wheel outputs are for the vehicle's own K wheels: heights under their planar positions
    (vertical projection, as the seed), gaps at the resulting pose, contacts within ``d_eps`` and
    the static loads of the contacting wheels (:func:`~offroad_env.physics.ground.loads.support_forces`). A wheel over a hole reads
    the lowest height among the other wheels (flagged in ``wheel_hole``/``hole``).
    ``loads=False`` skips the per-wheel quantities (:meth:`GroundContact.with_loads`).
    """
    x, y, yaw, map_idx = pose_inputs(terrain, x, y, yaw, map_index)
    rx, ry = body_columns(vehicle, x, "rectangle")  # (4, 1) each
    c, s = torch.cos(yaw), torch.sin(yaw)
    px, py = place_points(x, y, c, s, rx, ry)  # (4, N)
    h, hole, off = query(terrain, px, py, map_idx)
    h = fill_holes(h, hole, 0.0)
    z_fl, z_fr, z_rl, z_rr = h.unbind(0)
    z_front, z_rear = 0.5 * (z_fl + z_fr), 0.5 * (z_rl + z_rr)
    z_left, z_right = 0.5 * (z_fl + z_rl), 0.5 * (z_fr + z_rr)
    pitch = torch.atan((z_rear - z_front) / vehicle.wheel_base)
    roll = torch.atan((z_left - z_right) / vehicle.track_width)
    rot = rot_zyx_entries(yaw, pitch, roll)
    r = vehicle.wheel_radius
    t = torch.stack((x + r * rot[0][2], y + r * rot[1][2], z_rear + r * rot[2][2]), dim=1)
    wheels = body_columns(vehicle, x)
    if vehicle.is_rectangle:
        wh, whole, woff = h, hole, off
    else:  # other layouts: their own planar positions, projected down
        wx, wy = place_points(x, y, c, s, wheels[0], wheels[1])
        wh, whole, woff = query(terrain, wx, wy, map_idx)
        wh = fill_holes(wh, whole, 0.0)
    ones = torch.ones_like(x, dtype=torch.bool)
    iters = torch.ones_like(x, dtype=torch.int32)
    return assemble(vehicle, torch.stack((yaw, pitch, roll), 1), rot, t, wheels, wh,
                    whole, woff, d_eps, gravity, ones, iters, loads=loads)

