"""Actuation: from the normalised action ``(N, 2)`` in [-1, 1] to the planar motion of each
dynamics model, and each model's body velocity. A new dynamics model adds its physics to
:mod:`offroad_env.dynamics` and one entry here (:data:`ACTUATORS`).

* ``unicycle``: ``(v, omega)`` scaled by ``max_speed`` [m/s] and ``max_yaw_rate`` [rad/s].
* ``ackermann``: ``(v, steering rate)``, the rate scaled by ``ackermann.max_steer_rate``.
* ``skid_steer``: ``(left, right)`` wheel-speed targets scaled by ``max_speed / wheel_radius``,
  driven through the slip model with the normal loads of the last ground placement.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .physics.dynamics import (SkidSteerState, ackermann_step, side_targets, skid_steer_step,
                       unicycle_step)

__all__ = ["Drive", "ACTUATORS", "DYNAMICS", "body_velocity", "check_action"]


def check_action(action, n: int, action_dim: int, device, dtype, nan_action: str
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate an ``(n, action_dim)`` action where it enters; returns ``(clipped action in
    dtype, bad-row mask (n,) bool)``. Raises ValueError on another device or shape, and
    (``nan_action="raise"``) on a non-finite value, naming the environments; with
    ``nan_action="zero"`` non-finite rows become 0 and are flagged."""
    if action is None:
        raise ValueError(f"action is None; expected {n} x {action_dim} finite numbers in [-1, 1]")
    try:
        a = torch.as_tensor(action)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"action {action!r} is not a numeric array ({exc})") from None
    if a.requires_grad:  # a policy's output: keep no autograd graph alive in the env
        a = a.detach()
    if a.is_complex() or a.dtype == torch.bool or not (a.is_floating_point()
                                                       or a.dtype in _INT_DTYPES):
        raise ValueError(f"action dtype {a.dtype} is not accepted; actions are real numbers "
                         "(float or int)")
    dev = torch.device(device)
    if a.device.type != dev.type or (dev.index is not None and a.device.index != dev.index):
        raise ValueError(f"action is on {a.device}, the environment on {dev}")
    if a.shape != (n, action_dim):
        raise ValueError(f"action must have shape {(n, action_dim)}, got {tuple(a.shape)}")
    given_finite = torch.isfinite(a).all(1)
    a = a.to(dtype)
    bad = ~torch.isfinite(a).all(1)
    if nan_action == "raise":
        if bool(bad.any()):
            idx = torch.nonzero(bad).flatten().tolist()
            what = ("non-finite (NaN or inf)" if not bool(given_finite[bad].all())
                    else f"out of {dtype} range")
            raise ValueError(f"{what} action in environment(s) {idx[:20]}"
                             f"{' ...' if len(idx) > 20 else ''}; actions must be finite "
                             "numbers in [-1, 1] (or set nan_action='zero')")
    else:
        a = torch.where(bad.unsqueeze(1), torch.zeros_like(a), a)
    return a.clamp(-1.0, 1.0), bad


_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


class Drive(NamedTuple):
    """What a model's step reports for the reward: ``kappa`` ``(N, K)`` wheel slip ratios
    (zeros for kinematic models), ``torque`` and ``wheel_omega`` ``(N, K)`` [N m, rad/s] (None
    for kinematic models)."""

    kappa: torch.Tensor
    torque: torch.Tensor | None
    wheel_omega: torch.Tensor | None


def _no_slip(state) -> Drive:
    return Drive(torch.zeros(state.wheel_omega.shape, dtype=state.x.dtype,
                             device=state.x.device), None, None)


def unicycle(cfg, nominal, vehicle, params, state, a) -> Drive:
    """The unicycle seed's odometry (forward Euler, or exact arcs: ``cfg.integrator``)."""
    state.v, state.w = a[:, 0] * cfg.max_speed, a[:, 1] * cfg.max_yaw_rate
    state.x, state.y, state.yaw = unicycle_step(state.x, state.y, state.yaw, state.v, state.w,
                                                cfg.dt, cfg.integrator)
    return _no_slip(state)


def ackermann(cfg, nominal, vehicle, params, state, a) -> Drive:
    """Kinematic bicycle with steering angle and rate limits; ``w`` is the yaw rate at the
    step's start steering angle."""
    v = a[:, 0] * cfg.max_speed
    state.v = v
    yaw0 = state.yaw
    state.w = v * torch.tan(state.steer) / cfg.ackermann.wheel_base
    state.x, state.y, state.yaw, state.steer = ackermann_step(
        cfg.ackermann, state.x, state.y, state.yaw, state.steer, v,
        a[:, 1] * cfg.ackermann.max_steer_rate, cfg.dt, integrator=cfg.integrator)
    if cfg.integrator == "exact":  # the step's mean yaw rate
        state.w = (state.yaw - yaw0) / cfg.dt
    return _no_slip(state)


def skid_steer(cfg, nominal, vehicle, params, state, a) -> Drive:
    """Skid-steer with wheel slip (``cfg.substeps`` substeps); the targets scale with the
    ``nominal`` vehicle's wheel radius, the physics uses ``vehicle`` (which may carry
    per-environment mass properties) and ``params``' per-environment friction."""
    targets = side_targets(nominal, a[:, 0], a[:, 1]) * (
        cfg.max_speed / max(nominal.wheel_radius, 1e-3))
    gc = state.contact
    s0 = SkidSteerState(state.x, state.y, state.yaw, state.vx_b, state.vy_b, state.yaw_rate,
                        state.wheel_omega)
    s, info = skid_steer_step(
        vehicle, cfg.skid, s0, None, gc.normal_force, gc.roll, gc.pitch, cfg.dt,
        substeps=cfg.substeps, speed_targets=targets,
        mu=None if params is None else params["friction"], gravity=cfg.gravity)
    state.x, state.y, state.yaw = s.x, s.y, s.yaw
    state.vx_b, state.vy_b, state.yaw_rate, state.wheel_omega = s.vx, s.vy, s.yaw_rate, \
        s.wheel_omega
    return Drive(info["kappa"], info["torque"], s.wheel_omega)


#: ``{dynamics name: step(cfg, nominal, vehicle, params, state, action) -> Drive}``: ``cfg`` the
#: SimConfig, ``nominal`` the preset :class:`~offroad_env.vehicle.Vehicle`, ``vehicle`` it or its
#: per-environment :class:`~offroad_env.vehicle.VehicleBatch`, ``params`` the per-environment
#: parameters (or None), ``action`` ``(N, 2)`` clipped. A step updates the planar pose and its
#: model's fields of the :class:`~offroad_env.state.SimState` in place.
ACTUATORS = {"unicycle": unicycle, "ackermann": ackermann, "skid_steer": skid_steer}
DYNAMICS = tuple(ACTUATORS)


def body_velocity(state, dynamics: str) -> torch.Tensor:
    """``(N, 3)`` forward and left speed [m/s] and yaw rate [rad/s] (the centre of mass's for
    skid-steer; the commanded rates of the kinematic models)."""
    if dynamics == "skid_steer":
        return torch.stack((state.vx_b, state.vy_b, state.yaw_rate), 1)
    return torch.stack((state.v, torch.zeros_like(state.v), state.w), 1)
