"""The unicycle: the odometry seed's contract (forward Euler, or exact arcs with
``UnicycleParams(integrator="exact")``), placed by ground following; its parameters
(:class:`~offroad_env.physics.dynamics.UnicycleParams`) are ``SimConfig.dynamics_params``.

Action ``(v, omega)`` in [-1, 1], scaled by ``cfg.max_speed`` [m/s] and ``cfg.max_yaw_rate``
[rad/s]. State: the commanded ``v`` [m/s] and ``w`` [rad/s] of the last step.
"""

from __future__ import annotations

import torch

from ..dynamics import UnicycleParams, unicycle_step
from .base import Field, register_model
from .ground_following import GroundFollowing, no_slip

__all__ = ["Unicycle"]


@register_model
class Unicycle(GroundFollowing):
    name = "unicycle"
    action_labels = ("forward speed", "yaw rate")
    fields = {"v": Field(), "w": Field()}
    Params = UnicycleParams

    def planar_step(self, state, vehicle, params, a):
        cfg = self.cfg
        state.v, state.w = a[:, 0] * cfg.max_speed, a[:, 1] * cfg.max_yaw_rate
        state.x, state.y, state.yaw = unicycle_step(state.x, state.y, state.yaw, state.v,
                                                    state.w, cfg.dt, self.params.integrator)
        return no_slip(state, self.vehicle.num_wheels)

    def body_velocity(self, state):
        return torch.stack((state.v, torch.zeros_like(state.v), state.w), 1)
