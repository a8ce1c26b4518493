"""Planar vehicle dynamics, batched over N environments (first dimension).

* :func:`unicycle_step` -- the unicycle-odometry seed's contract, exactly: forward Euler with the
  heading held at its start-of-step value, heading raw and never wrapped::

      x += v Ts cos(theta),   y += v Ts sin(theta),   theta += omega Ts

  :func:`wheel_speeds_to_body` gives ``v = r/2 (wL + wR)``, ``omega = r/b (wR - wL)``.
* :func:`ackermann_step` -- kinematic bicycle (the four-wheel seed's example drives its Husky
  with it): ``theta' = v tan(psi) / L``, steering angle ``psi`` with angle and rate limits.
* :func:`skid_steer_step` -- a planar rigid body on K wheels with wheel spin dynamics and slip,
  and its drive (servo, torque limit, holding brake): :mod:`.skid`, re-exported here.

Frames: world z up; body x forward, y left. Poses ``(x, y, yaw)`` are the rear-axle frame's (as
in ground following). Skid-steer velocities are those of the centre of mass in the body frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# the skid-steer model and its drive live in .skid; their names stay importable from here
from .skid import (CONTROLLERS, SkidSteerParams, SkidSteerState, braked_body_forces,
                   side_targets, skid_steer_step, speed_controller, speed_servo)

__all__ = ["INTEGRATORS", "UnicycleParams", "EXACT_SUBSTEPS", "unicycle_step",
           "wheel_speeds_to_body", "AckermannParams", "ackermann_step", "SkidSteerParams",
           "SkidSteerState", "skid_steer_step", "side_targets", "speed_controller", "speed_servo",
           "braked_body_forces", "CONTROLLERS"]


#: the kinematic models' integrators: ``"euler"`` (the unicycle seed's contract) or ``"exact"``
INTEGRATORS = ("euler", "exact")

#: substeps of the exact Ackermann step (the steering angle moves within a step; 4 already give
#: the four-wheel seed's example to its printed digits)
EXACT_SUBSTEPS = 8


def _check_kinematic(params) -> None:
    if params.integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {params.integrator!r}")
    if isinstance(params.mu, bool) or not isinstance(params.mu, (int, float)) \
            or not math.isfinite(params.mu) or params.mu < 0:
        raise ValueError(f"mu must be a finite number >= 0, got {params.mu!r}")


# ----------------------------------------------------------------------------- unicycle
@dataclass(frozen=True, kw_only=True)
class UnicycleParams:
    """The unicycle model's parameters (``SimConfig.dynamics_params`` of ``"unicycle"``).

    Attributes:
        integrator: ``"euler"`` (the odometry seed's forward Euler) or ``"exact"`` (circular
            arcs), :data:`INTEGRATORS`.
        mu: the ground's friction coefficient: the model does not slip, but the tip-over rule
            counts only the forces friction can transmit (a per-environment ``friction``
            parameter replaces it).
    """

    integrator: str = "euler"
    mu: float = 0.8

    def __post_init__(self):
        _check_kinematic(self)


def unicycle_step(x, y, theta, v, omega, dt: float, integrator: str = "euler"):
    """One step of the unicycle. All ``(N,)`` tensors; returns the new ``(x, y, theta)``;
    ``theta`` is not wrapped.

    ``integrator="euler"``: forward Euler, the seed's recursion. ``"exact"``: the circular arc
    of constant ``v`` and ``omega``, exact for any ``dt``: the chord ``v dt sinc(omega dt / 2)``
    along ``theta + omega dt / 2``."""
    if integrator == "euler":
        return x + v * dt * torch.cos(theta), y + v * dt * torch.sin(theta), theta + omega * dt
    if integrator != "exact":
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    half = 0.5 * omega * dt
    chord = v * dt * torch.sinc(half / math.pi)  # torch.sinc(u) = sin(pi u) / (pi u)
    mid = theta + half
    return x + chord * torch.cos(mid), y + chord * torch.sin(mid), theta + omega * dt


def wheel_speeds_to_body(w_left, w_right, wheel_radius: float, track: float):
    """Differential drive: ``v = r/2 (wL + wR)``, ``omega = r/b (wR - wL)``.

    Raises ValueError for a non-positive or non-finite radius or track (the seed requires a
    non-zero track in this mode)."""
    for name, val in (("wheel_radius", wheel_radius), ("track", track)):
        if not isinstance(val, (int, float)) or not math.isfinite(val) or val <= 0:
            raise ValueError(f"wheel-speed mode needs {name} > 0, got {val!r}")
    return 0.5 * wheel_radius * (w_left + w_right), wheel_radius / track * (w_right - w_left)


# ----------------------------------------------------------------------------- Ackermann
@dataclass(frozen=True, kw_only=True)
class AckermannParams:
    """Kinematic bicycle model.

    Attributes:
        wheel_base: [m] > 0.
        max_steer: steering angle limit [rad], in (0, pi/2).
        max_steer_rate: steering rate limit [rad/s], > 0.
        integrator: ``"euler"`` or ``"exact"`` (the steering angle moving through the step),
            :data:`INTEGRATORS`.
        mu: the ground's friction coefficient, as :class:`UnicycleParams`' ``mu``.
    """

    wheel_base: float = 0.512
    max_steer: float = 0.6
    max_steer_rate: float = 2.0
    integrator: str = "euler"
    mu: float = 0.8

    def __post_init__(self):
        _check_kinematic(self)
        if not (math.isfinite(self.wheel_base) and self.wheel_base > 0):
            raise ValueError(f"wheel_base must be > 0, got {self.wheel_base}")
        if not (0 < self.max_steer < math.pi / 2):
            raise ValueError(f"max_steer must be in (0, pi/2), got {self.max_steer}")
        if not (math.isfinite(self.max_steer_rate) and self.max_steer_rate > 0):
            raise ValueError(f"max_steer_rate must be > 0, got {self.max_steer_rate}")


def ackermann_step(params: AckermannParams, x, y, theta, steer, v, steer_input, dt: float,
                   mode: str = "rate", integrator: str = "euler"):
    """One step of the kinematic bicycle, all ``(N,)``.

    ``mode="rate"``: ``steer_input`` is the steering rate [rad/s] (clipped to the rate limit);
    ``mode="angle"``: it is the commanded angle [rad], reached at the rate limit. The steering
    angle holds at its limit while the rate pushes it on (no wind-up). ``integrator="euler"``:
    the heading uses the start-of-step steering angle, as :func:`unicycle_step` uses the
    start-of-step heading. ``"exact"``: the steering angle moves linearly through the step (at
    the constant rate, clipped), and the pose follows :data:`EXACT_SUBSTEPS` exact arcs, each at
    its substep's mean steering angle. Returns ``(x, y, theta, steer)``.
    """
    if integrator == "exact":
        rate = _steer_rate(params, steer, steer_input, dt, mode)
        h = dt / EXACT_SUBSTEPS
        for _ in range(EXACT_SUBSTEPS):
            s1 = (steer + rate * h).clamp(-params.max_steer, params.max_steer)
            omega = v * torch.tan(0.5 * (steer + s1)) / params.wheel_base
            x, y, theta = unicycle_step(x, y, theta, v, omega, h, "exact")
            steer = s1
        return x, y, theta, steer
    if integrator != "euler":
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    omega = v * torch.tan(steer) / params.wheel_base
    x1, y1, th1 = unicycle_step(x, y, theta, v, omega, dt)
    rate = _steer_rate(params, steer, steer_input, dt, mode)
    steer1 = (steer + rate * dt).clamp(-params.max_steer, params.max_steer)
    return x1, y1, th1, steer1


def _steer_rate(params: AckermannParams, steer, steer_input, dt: float, mode: str):
    """The step's steering rate [rad/s] from a rate or angle command, within the rate limit."""
    if mode == "rate":
        rate = steer_input.clamp(-params.max_steer_rate, params.max_steer_rate)
    elif mode == "angle":
        rate = ((steer_input.clamp(-params.max_steer, params.max_steer) - steer) / dt).clamp(
            -params.max_steer_rate, params.max_steer_rate)
    else:
        raise ValueError(f"mode must be 'rate' or 'angle', got {mode!r}")
    return rate
