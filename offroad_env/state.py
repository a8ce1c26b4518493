"""The simulator's state: every per-environment quantity a step reads and writes, declared once.

A step replaces the tensors (it never writes into them), so a shallow :meth:`SimState.copy` is a
snapshot. Rows are merged with :func:`offroad_env.batch.merge` (resets, action-repeat restores),
which keeps each tensor's memory layout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from .physics.batch import merge, merge_rows
from .physics.ground import GroundContact

__all__ = ["SimState", "STREAM_FIELDS"]

#: fields that continue across episodes (the per-env random stream); a reset keeps them
STREAM_FIELDS = ("keys", "counters")


@dataclass
class SimState:
    """N environments' state. ``(N,)`` float tensors unless noted; frames in the suffixes:
    ``_w`` world, ``_b`` body (base_link axes), ``_s`` IMU sensor frame (parallel to base_link).

    Attributes:
        x, y, yaw: planar pose of the rear-axle frame, world [m, m, rad] (yaw raw, unwrapped).
        steer: Ackermann steering angle [rad].
        v, w: commanded forward speed [m/s] and yaw rate [rad/s] of the kinematic models.
        vx_b, vy_b, yaw_rate: skid-steer centre-of-mass velocity, body frame [m/s], and yaw
            rate [rad/s].
        wheel_omega: ``(N, K)`` skid-steer wheel spins [rad/s] (a transposed view of
            wheel-major ``(K, N)`` storage).
        goal_w: ``(N, 2)`` goal position, world [m]. command: ``(N, 2)`` commanded speed [m/s]
            and yaw rate [rad/s] (velocity task).
        prev_action: ``(N, A)`` the last clipped action. prev_distance: distance from base_link
            to the goal after the last step [m].
        keys, counters: int64, each environment's random stream (:mod:`offroad_env.rng`).
        map_index: int64, the map each environment drives on. steps: int64, steps in the
            episode.
        sensor_pos_w, sensor_vel_w: ``(N, 3)`` IMU position [m] and velocity [m/s], world.
        prev_rot_sw: ``(N, 3, 3)`` sensor-to-world rotation after the last step.
        accel_s, gyro_s: ``(N, 3)`` IMU specific force [m/s^2] and angular rate [rad/s].
        accel_bias_s, gyro_bias_s: ``(N, 3)`` their random-walk biases.
        prev_vel_b: ``(N, 3)`` body velocity ``(v_x, v_y, w)`` of the step before [m/s, rad/s]
            (the acceleration of the stability measure differences it).
        accel_b: ``(N, 3)`` low-passed body acceleration [m/s^2] (the stability measure's
            inertial force, :func:`offroad_env.stability.filter_acceleration`).
        margin: force-angle stability margin after the last step [rad]
            (:mod:`offroad_env.stability`; 0 where the step does not compute it).
        unstable_steps: int64, consecutive steps with a negative margin.
        contact: the last ground placement (None before the first reset).
    """

    x: torch.Tensor
    y: torch.Tensor
    yaw: torch.Tensor
    steer: torch.Tensor
    v: torch.Tensor
    w: torch.Tensor
    vx_b: torch.Tensor
    vy_b: torch.Tensor
    yaw_rate: torch.Tensor
    wheel_omega: torch.Tensor
    goal_w: torch.Tensor
    command: torch.Tensor
    prev_action: torch.Tensor
    prev_distance: torch.Tensor
    keys: torch.Tensor
    counters: torch.Tensor
    map_index: torch.Tensor
    steps: torch.Tensor
    sensor_pos_w: torch.Tensor
    sensor_vel_w: torch.Tensor
    prev_rot_sw: torch.Tensor
    accel_s: torch.Tensor
    gyro_s: torch.Tensor
    accel_bias_s: torch.Tensor
    gyro_bias_s: torch.Tensor
    prev_vel_b: torch.Tensor
    accel_b: torch.Tensor
    margin: torch.Tensor
    unstable_steps: torch.Tensor
    contact: GroundContact | None = None

    @classmethod
    def zeros(cls, n: int, num_wheels: int, action_dim: int, dtype=torch.float32,
              device=None) -> "SimState":
        """The state before the first reset: zeros, identity rotations, no contact."""
        def z(*shape, dt=dtype):
            return torch.zeros((n,) + shape, dtype=dt, device=device)
        i64 = torch.int64
        return cls(
            x=z(), y=z(), yaw=z(), steer=z(), v=z(), w=z(), vx_b=z(), vy_b=z(), yaw_rate=z(),
            wheel_omega=torch.zeros(num_wheels, n, dtype=dtype, device=device).T,
            goal_w=z(2), command=z(2), prev_action=z(action_dim), prev_distance=z(),
            keys=z(dt=i64), counters=z(dt=i64), map_index=z(dt=i64), steps=z(dt=i64),
            sensor_pos_w=z(3), sensor_vel_w=z(3),
            prev_rot_sw=torch.eye(3, dtype=dtype, device=device).expand(n, 3, 3).clone(),
            accel_s=z(3), gyro_s=z(3), accel_bias_s=z(3), gyro_bias_s=z(3), prev_vel_b=z(3),
            accel_b=z(3), margin=z(), unstable_steps=z(dt=i64))

    def copy(self) -> "SimState":
        """A shallow copy: a snapshot, as steps replace tensors instead of writing into them."""
        return dataclasses.replace(self)

    def put(self, mask: torch.Tensor, idx: torch.Tensor | None = None, **rows) -> None:
        """Replace rows of the named fields: the rows ``idx`` ``(M,)`` (then each value holds
        M rows), or else those where ``mask`` ``(N,)`` is set (values hold N rows)."""
        for name, value in rows.items():
            setattr(self, name, merge(getattr(self, name), value, mask, idx))

    def restart(self, mask: torch.Tensor, idx: torch.Tensor | None = None, later=(),
                **rows) -> None:
        """Start new episodes in some rows (as :meth:`put`): the given fields take ``rows``;
        every other per-episode field restarts at zero, except the ``later`` ones (set by the
        caller afterwards), the random streams (:data:`STREAM_FIELDS`) and ``contact``."""
        m = mask.shape[0] if idx is None else idx.shape[0]
        for f in dataclasses.fields(self):
            name = f.name
            if name in STREAM_FIELDS or name == "contact" or name in later:
                continue
            old = getattr(self, name)
            new = rows[name] if name in rows else old.new_zeros((m,) + old.shape[1:])
            setattr(self, name, merge_rows(old, new, mask, idx))

    def restore(self, mask: torch.Tensor, snapshot: "SimState") -> None:
        """Put the masked rows back to ``snapshot`` (every field)."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, merge(getattr(self, f.name), getattr(snapshot, f.name), mask))
