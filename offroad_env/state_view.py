"""The state view: a read-only view of a simulator's state (the pose, the IMU, the goal, the
contact) as the faces' ``state_view()`` and the look-ahead's privileged policies read it."""

from __future__ import annotations

from typing import NamedTuple

import torch

from offroad_env.core.frames import to_world
from offroad_env.core.state import wheel_ruts
from offroad_env.physics.ground import GroundContact

__all__ = ["StateView", "view_of"]


class StateView(NamedTuple):
    """A read-only view of the simulator state (references: do not write into them), N rows.

    Attributes:
        x, y, yaw: ``(N,)`` planar pose of the rear-axle frame, world [m, m, rad]; x and y
            in float64 (world coordinates can be UTM metres).
        base_position_w: ``(N, 3)`` base_link origin, world [m], float64.
        ypr: ``(N, 3)`` yaw, pitch, roll [rad]. roll, pitch: ``(N,)`` [rad].
        accel_s, gyro_s: ``(N, 3)`` IMU specific force [m/s^2] and angular rate [rad/s],
            sensor frame.
        body_velocity: ``(N, 3)`` forward, left speed [m/s], yaw rate [rad/s].
        goal_w: ``(N, 2)`` goal, world [m], float64. map_index, steps: ``(N,)`` int64.
        contact: the last :class:`~offroad_env.physics.ground.GroundContact`, with its per-wheel loads
            (computed for the view where the step did not need them), in the simulation frame:
            its positions plus ``origin`` are world positions.
        origin: ``(3,)`` float64 world position [m] of the simulation frame's origin (the map
            centre, and a multiple of 64 m in z; zeros for maps centred at the origin).
        wheel_slip: ``(N, K)`` each wheel's slip ratio in the last step (0 for kinematic
            models). wheel_sinkage: ``(N, K)`` each wheel's rut depth on soil [m] (0 on hard
            ground): a wheel digging in reads a slip near 1 and a growing rut.
    """

    x: torch.Tensor
    y: torch.Tensor
    yaw: torch.Tensor
    base_position_w: torch.Tensor
    ypr: torch.Tensor
    roll: torch.Tensor
    pitch: torch.Tensor
    accel_s: torch.Tensor
    gyro_s: torch.Tensor
    body_velocity: torch.Tensor
    goal_w: torch.Tensor
    map_index: torch.Tensor
    steps: torch.Tensor
    contact: GroundContact
    origin: torch.Tensor
    wheel_slip: torch.Tensor | None = None
    wheel_sinkage: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> "StateView":
        """The view of ``rows`` (an index or a bool mask over the N rows); ``contact`` is
        left out (None): its per-wheel tensors are the simulator's, not a row's copy."""
        n = self.x.shape[0]
        return StateView(**{k: (None if k == "contact" else
                                v[rows] if isinstance(v, torch.Tensor) and v.dim() >= 1
                                and v.shape[0] == n and k != "origin" else v)
                            for k, v in self._asdict().items()})


def view_of(sim, contact: GroundContact) -> StateView:
    """The :class:`StateView` of simulator ``sim``'s state, with ``contact`` (the state's own,
    or it with its loads)."""
    st = sim.state
    xy = to_world(sim.origin, torch.stack((st.x, st.y), 1))
    return StateView(x=xy[:, 0], y=xy[:, 1], yaw=st.yaw,
                     base_position_w=to_world(sim.origin, contact.base_position),
                     ypr=contact.ypr, roll=contact.roll, pitch=contact.pitch,
                     accel_s=st.accel_s, gyro_s=st.gyro_s, body_velocity=st.vel_b,
                     goal_w=to_world(sim.origin, st.goal_w), map_index=st.map_index,
                     steps=st.steps, contact=contact,
                     origin=torch.tensor(sim.origin, dtype=torch.float64, device=st.x.device),
                     wheel_slip=st.wheel_slip, wheel_sinkage=wheel_ruts(st))
