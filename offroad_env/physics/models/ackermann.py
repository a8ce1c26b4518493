"""Ackermann: the kinematic bicycle with steering angle and rate limits
(:class:`~offroad_env.physics.dynamics.AckermannParams` in ``SimConfig.dynamics_params``), placed
by ground following.

Action ``(v, steering rate)`` in [-1, 1], scaled by ``cfg.max_speed`` [m/s] and
``AckermannParams.max_steer_rate`` [rad/s]. State: the steering angle ``steer`` [rad], the commanded
``v`` [m/s] and the yaw rate ``w`` [rad/s] (at the step's start steering angle; the step's mean
with the exact integrator).
"""

from __future__ import annotations

import torch

from ..dynamics import AckermannParams, ackermann_step
from .base import Field, register_model
from .ground_following import GroundFollowing, no_slip

__all__ = ["Ackermann"]


@register_model
class Ackermann(GroundFollowing):
    name = "ackermann"
    action_labels = ("forward speed", "steering rate")
    fields = {"steer": Field(), "v": Field(), "w": Field()}
    Params = AckermannParams

    def planar_step(self, state, vehicle, params, a):
        cfg, p = self.cfg, self.params
        v = a[:, 0] * cfg.max_speed
        state.v = v
        yaw0 = state.yaw
        state.w = v * torch.tan(state.steer) / p.wheel_base
        state.x, state.y, state.yaw, state.steer = ackermann_step(
            p, state.x, state.y, state.yaw, state.steer, v, a[:, 1] * p.max_steer_rate, cfg.dt,
            integrator=p.integrator)
        if p.integrator == "exact":  # the step's mean yaw rate
            state.w = (state.yaw - yaw0) / cfg.dt
        return no_slip(state, self.vehicle.num_wheels)

    def body_velocity(self, state):
        return torch.stack((state.v, torch.zeros_like(state.v), state.w), 1)
