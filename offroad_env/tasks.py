"""Reward terms and termination predicates: small named functions over ``(N,)`` tensors.

Each reward term returns ``(N,)``; :class:`RewardWeights` combines them by explicit weights (no
hidden scaling by the time step), and the environment reports every term in ``info``.
Terminations return ``(N,)`` bool and are kept apart from truncation (the time limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

from .vehicle import Vehicle

__all__ = ["RewardWeights", "progress_to_goal", "goal_reached", "velocity_tracking", "tilt_l2",
           "angular_rate_l2", "action_rate_l2", "slip_l1", "energy", "tip_over",
           "static_tip_limits", "tipped_over", "REASONS"]

#: episode end reasons reported in ``info["end_reason"]``
REASONS = {0: "none", 1: "tip_over", 2: "off_map", 3: "hole", 4: "goal_reached",
           5: "time_limit"}


@dataclass(frozen=True, kw_only=True)
class RewardWeights:
    """Weights of the reward terms (the reward is ``sum_k weight_k * term_k``).

    Attributes (term: what it measures, unit):
        progress: decrease of the distance to the goal this step [m].
        goal_reached: 1 on the step the goal is reached.
        tracking: ``exp(-(v - v_cmd)^2 / 0.25) + exp(-(w - w_cmd)^2 / 0.25)`` (velocity task).
        tilt: ``roll^2 + pitch^2`` [rad^2].
        angular_rate: ``gyro_x^2 + gyro_y^2`` [rad^2/s^2] (roll and pitch rates).
        action_rate: ``|a - a_prev|^2`` (normalised actions).
        slip: mean ``|kappa|`` over the wheels (skid-steer; 0 for kinematic models).
        energy: ``sum |T w|`` [W] (skid-steer; 0 for kinematic models).
        tip_over: 1 on the step the vehicle tips over.
    """

    progress: float = 1.0
    goal_reached: float = 10.0
    tracking: float = 0.0
    tilt: float = -0.05
    angular_rate: float = -0.005
    action_rate: float = -0.01
    slip: float = -0.01
    energy: float = -1e-4
    tip_over: float = -10.0

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"reward weight {f.name} must be a finite number, got {v!r}")

    def items(self):
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


def progress_to_goal(prev_distance: torch.Tensor, distance: torch.Tensor) -> torch.Tensor:
    return prev_distance - distance


def goal_reached(reached: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    return reached.to(dtype)


def velocity_tracking(v, w, v_cmd, w_cmd, sigma2: float = 0.25) -> torch.Tensor:
    return torch.exp(-(v - v_cmd) ** 2 / sigma2) + torch.exp(-(w - w_cmd) ** 2 / sigma2)


def tilt_l2(roll, pitch) -> torch.Tensor:
    return roll * roll + pitch * pitch


def angular_rate_l2(gyro: torch.Tensor) -> torch.Tensor:
    return gyro[:, 0] ** 2 + gyro[:, 1] ** 2


def action_rate_l2(action, prev_action) -> torch.Tensor:
    return ((action - prev_action) ** 2).sum(1)


def slip_l1(kappa: torch.Tensor) -> torch.Tensor:
    return kappa.abs().mean(1)


def energy(torque: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    return (torque * omega).abs().sum(1)


def tip_over(tipped: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    return tipped.to(dtype)


def static_tip_limits(vehicle: Vehicle):
    """``(roll limit, pitch limit)`` [rad] of static stability on a slope: the angle at which the
    centre of mass passes over the downhill wheels, ``atan(half track / h)`` and
    ``atan(CoM-to-axle distance / h)``, ``h`` the CoM height above flat ground.

    Floats for a :class:`Vehicle`; ``(N,)`` tensors for a :class:`VehicleBatch` (per-env mass
    properties)."""
    batched = isinstance(vehicle.wheel_radius, torch.Tensor)
    like = vehicle.wheel_radius if batched else torch.zeros((), dtype=torch.float64)
    as_t = lambda v: torch.as_tensor(v, dtype=like.dtype, device=like.device)  # noqa: E731
    cx, cy, cz = (as_t(c) for c in vehicle.com)
    h = as_t(vehicle.wheel_radius) + cz
    xs = [p[0] for p in vehicle.wheel_positions]
    ys = [p[1] for p in vehicle.wheel_positions]
    lateral = torch.minimum(max(ys) - cy, cy - min(ys))
    longitudinal = torch.minimum(max(xs) - cx, cx - min(xs))
    upright = torch.full_like(h, math.pi / 2)
    roll = torch.where(h > 0, torch.atan2(lateral, h), upright)
    pitch = torch.where(h > 0, torch.atan2(longitudinal, h), upright)
    return (roll, pitch) if batched else (float(roll), float(pitch))


def tipped_over(roll, pitch, roll_limit: float, pitch_limit: float, stable=None) -> torch.Tensor:
    """True where ``|roll|`` or ``|pitch|`` passes its limit, or static support is lost."""
    out = (roll.abs() > roll_limit) | (pitch.abs() > pitch_limit)
    if stable is not None:
        out = out | ~stable
    return out
