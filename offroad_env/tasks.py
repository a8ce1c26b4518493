"""Reward terms, termination predicates and end reasons: small named functions over ``(N,)``
tensors.

Each reward term returns ``(N,)``; :data:`REWARD_TERMS` names them (one entry per field of
:class:`RewardWeights`, a new term goes in both), :func:`weighted_reward` combines them by
explicit weights (no hidden scaling by the time step), and the environment reports every term in
``info``. Terminations return ``(N,)`` bool and are kept apart from truncation (the time limit);
:class:`EndReason` names why an episode ended.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import torch

from .physics.vehicle import Vehicle

__all__ = ["RewardWeights", "StepQuantities", "REWARD_TERMS", "reward_terms", "weighted_reward",
           "progress_to_goal", "goal_reached", "velocity_tracking", "tilt_l2", "angular_rate_l2",
           "action_rate_l2", "slip_l1", "energy", "tip_over", "static_tip_limits",
           "tipped_over", "EndReason", "end_reason", "REASONS", "STABILITY_REF",
           "stability_shortfall", "TIP_RULES"]

#: how tip-over is judged: the static roll/pitch limits (and lost support), or those and the
#: force-angle margin held negative for ``TaskConfig.tip_hold_time``
TIP_RULES = ("limits", "force_angle")


class EndReason(enum.IntEnum):
    """Why an episode ended, as reported in ``info["end_reason"]`` (the vector env: these codes
    as an int64 tensor; the single env: the :attr:`label`)."""

    NONE = 0
    TIP_OVER = 1
    OFF_MAP = 2
    HOLE = 3
    GOAL_REACHED = 4
    TIME_LIMIT = 5

    @property
    def label(self) -> str:
        """The name as reported by the single env and in logs, e.g. ``"tip_over"``."""
        return self.name.lower()


#: ``{code: label}`` of every :class:`EndReason`
REASONS = {int(r): r.label for r in EndReason}


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
        stability: ``max(0, STABILITY_REF - margin)`` [rad], how far the force-angle stability
            margin (:mod:`offroad_env.stability`) is below :data:`STABILITY_REF` (20 deg).
        time: the step's duration ``dt`` [s]; a negative weight is a cost per second, which makes
            standing still or circling short of the goal cost something.
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
    stability: float = 0.0
    time: float = 0.0

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


#: the stability reward term counts the margin below this angle [rad] (20 deg)
STABILITY_REF = math.radians(20.0)


def stability_shortfall(margin: torch.Tensor) -> torch.Tensor:
    return torch.clamp(STABILITY_REF - margin, min=0.0)


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


def tipped_over(roll, pitch, roll_limit, pitch_limit, stable=None) -> torch.Tensor:
    """True where ``|roll|`` or ``|pitch|`` passes its limit, or static support is lost."""
    out = (roll.abs() > roll_limit) | (pitch.abs() > pitch_limit)
    if stable is not None:
        out = out | ~stable
    return out


# ----------------------------------------------------------------------------- the step's terms
class StepQuantities(NamedTuple):
    """What the reward terms read after a step, for N environments.

    Attributes:
        distance, prev_distance: ``(N,)`` base_link-to-goal distance after and before the step [m].
        reached: ``(N,)`` bool, the goal is reached (always False outside the nav task).
        nav: the task is navigation (progress counts only there).
        body_velocity: ``(N, 3)`` forward, left speed [m/s], yaw rate [rad/s].
        command: ``(N, 2)`` commanded speed [m/s] and yaw rate [rad/s].
        roll, pitch: ``(N,)`` [rad].
        gyro_s: ``(N, 3)`` IMU angular rate, sensor frame [rad/s].
        action, prev_action: ``(N, A)`` clipped actions of this and the previous step.
        kappa: ``(N, K)`` wheel slip ratios (zeros for kinematic models).
        torque, wheel_omega: ``(N, K)`` motor torques [N m] and wheel spins [rad/s], or None
            (kinematic models: no energy).
        tipped: ``(N,)`` bool, the vehicle tipped over.
        margin: ``(N,)`` force-angle stability margin [rad] (zeros where not computed).
        dt: the control step [s].
    """

    distance: torch.Tensor
    prev_distance: torch.Tensor
    reached: torch.Tensor
    nav: bool
    body_velocity: torch.Tensor
    command: torch.Tensor
    roll: torch.Tensor
    pitch: torch.Tensor
    gyro_s: torch.Tensor
    action: torch.Tensor
    prev_action: torch.Tensor
    kappa: torch.Tensor
    torque: torch.Tensor | None
    wheel_omega: torch.Tensor | None
    tipped: torch.Tensor
    margin: torch.Tensor
    dt: float


def _zeros(q: StepQuantities) -> torch.Tensor:
    return torch.zeros_like(q.distance)


#: ``{name: term(q: StepQuantities) -> (N,)}``, in the order of :class:`RewardWeights`
REWARD_TERMS = {
    "progress": lambda q: progress_to_goal(q.prev_distance, q.distance) if q.nav else _zeros(q),
    "goal_reached": lambda q: goal_reached(q.reached, q.distance.dtype),
    "tracking": lambda q: velocity_tracking(q.body_velocity[:, 0], q.body_velocity[:, 2],
                                            q.command[:, 0], q.command[:, 1]),
    "tilt": lambda q: tilt_l2(q.roll, q.pitch),
    "angular_rate": lambda q: angular_rate_l2(q.gyro_s),
    "action_rate": lambda q: action_rate_l2(q.action, q.prev_action),
    "slip": lambda q: slip_l1(q.kappa),
    "energy": lambda q: _zeros(q) if q.torque is None else energy(q.torque, q.wheel_omega),
    "tip_over": lambda q: tip_over(q.tipped, q.distance.dtype),
    "stability": lambda q: stability_shortfall(q.margin),
    "time": lambda q: torch.full_like(q.distance, q.dt),
}


def reward_terms(q: StepQuantities) -> dict[str, torch.Tensor]:
    """Every reward term ``(N,)`` of a step, by name."""
    return {name: term(q) for name, term in REWARD_TERMS.items()}


def weighted_reward(terms: dict[str, torch.Tensor], weights: RewardWeights) -> torch.Tensor:
    """``sum_k weight_k * term_k`` ``(N,)`` (terms of weight 0 are skipped, not multiplied)."""
    reward = torch.zeros_like(next(iter(terms.values())))
    for name, weight in weights.items():
        if weight:
            reward = reward + weight * terms[name]
    return reward


def end_reason(goal: torch.Tensor, hole: torch.Tensor, off_map: torch.Tensor,
               tipped: torch.Tensor) -> torch.Tensor:
    """``(N,)`` int64 :class:`EndReason` codes of the ``(N,)`` bool end conditions. Where
    several hold, the cause wins over its consequences: a wheel over a hole over a wheel off the
    map over tip-over (a hole or the map's edge tilts the body) over the goal."""
    reason = torch.zeros(goal.shape, dtype=torch.int64, device=goal.device)
    for code, cond in ((EndReason.GOAL_REACHED, goal), (EndReason.TIP_OVER, tipped),
                       (EndReason.OFF_MAP, off_map), (EndReason.HOLE, hole)):
        reason = torch.where(cond, torch.full_like(reason, int(code)), reason)
    return reason
