"""Skid-steer: a planar rigid body on K wheels with wheel spin and slip
(:func:`~offroad_env.physics.skid.skid_steer_step`; its parameters, substeps included, are
:class:`~offroad_env.physics.skid.SkidSteerParams` in ``SimConfig.dynamics_params``), driven
with the normal loads of the last placement, then placed by ground following.

Action ``(left, right)`` in [-1, 1]: wheel-speed targets scaled by ``max_speed / wheel_radius``
(the nominal vehicle's radius); ``(0, 0)`` sets the holding brake (the wheels lock, static
friction holds the vehicle up to ``mu`` times the normal loads). The loads are normal forces:
the placement's vertical support forces times ``cos(roll) cos(pitch)``. The vehicle's
``driven`` and ``coupling`` lay out the drive (:mod:`offroad_env.physics.drive`). State: the centre of mass's body-frame velocity ``vx_b``,
``vy_b`` [m/s], ``yaw_rate`` [rad/s] and the wheel spins ``wheel_omega`` ``(N, K)`` [rad/s].
"""

from __future__ import annotations

import torch

from ..drive import coupling_matrix
from ..skid import SkidSteerParams, SkidSteerState, side_targets, skid_steer_step
from .base import Drive, Field, register_model
from .ground_following import GroundFollowing

__all__ = ["SkidSteer"]


@register_model
class SkidSteer(GroundFollowing):
    name = "skid_steer"
    action_labels = ("left wheel speed", "right wheel speed")
    fields = {"vx_b": Field(), "vy_b": Field(), "yaw_rate": Field(),
              "wheel_omega": Field(("K",), column_major=True)}
    Params = SkidSteerParams
    needs_loads = True

    def planar_step(self, state, vehicle, params, a):
        """The targets scale with the nominal vehicle's wheel radius; the physics uses
        ``vehicle`` (which may carry per-environment mass properties) and ``params``'
        per-environment friction."""
        cfg, nominal = self.cfg, self.vehicle
        targets = side_targets(nominal, a[:, 0], a[:, 1]) * (
            cfg.max_speed / max(nominal.wheel_radius, 1e-3))
        gc = state.contact
        s0 = SkidSteerState(state.x, state.y, state.yaw, state.vx_b, state.vy_b, state.yaw_rate,
                            state.wheel_omega)
        # the placement's support forces are vertical; the ground's normal part of them is what
        # friction scales with (the body's tilt: cos(roll) cos(pitch) = R_zz)
        normal = gc.normal_force * (torch.cos(gc.roll) * torch.cos(gc.pitch)).unsqueeze(1)
        s, info = skid_steer_step(
            vehicle, self.params, s0, None, normal, gc.roll, gc.pitch, cfg.dt,
            substeps=self.params.substeps, speed_targets=targets,
            mu=None if params is None else params["friction"], gravity=cfg.gravity,
            max_torque=nominal.wheel_torque, driven=nominal.driven,
            coupling=self._coupling(state.x))
        state.x, state.y, state.yaw = s.x, s.y, s.yaw
        state.vx_b, state.vy_b, state.yaw_rate, state.wheel_omega = s.vx, s.vy, s.yaw_rate, \
            s.wheel_omega
        return Drive(info["kappa"], info["torque"], s.wheel_omega)

    def _coupling(self, like):
        """The nominal vehicle's :func:`coupling_matrix` in ``like``'s dtype and device, built
        once (None: a motor per wheel)."""
        key = (self.vehicle, like.dtype, like.device)
        if getattr(self, "_coupling_key", None) != key:
            self._coupling_key = key
            self._coupling_s = coupling_matrix(self.vehicle, like.dtype, like.device)
        return self._coupling_s

    def body_velocity(self, state):
        return torch.stack((state.vx_b, state.vy_b, state.yaw_rate), 1)
