"""The reward terms: small named functions, each reading what it needs from the step
(:class:`StepContext`: the state, the model's step, the action and the task's goal and tip-over
judgement), registered by name in :data:`REWARD_TERMS`, each with a weight of the same name in
:class:`RewardWeights` (a test checks that the two agree, in order). :func:`builtin_rewards`
declares them as :class:`~offroad_env.task.terms.RewardTerm` values, the form your own terms take
(``SimConfig.rewards``; no edit here needed). The reward is
``sum_k weight_k * term_k`` (:func:`weighted_reward`: explicit weights, no hidden scaling by the
time step); the environment reports every term as ``info["reward/<name>"]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Callable, NamedTuple

import torch

__all__ = ["RewardWeights", "StepContext", "REWARD_TERMS", "reward_term", "reward_terms",
           "builtin_rewards",
           "weighted_reward", "STABILITY_REF", "progress_to_goal", "velocity_tracking",
           "tilt_l2", "angular_rate_l2", "action_rate_l2", "slip_l1", "energy",
           "stability_shortfall"]


@dataclass(frozen=True, kw_only=True)
class RewardWeights:
    """Weights of the reward terms (the reward is ``sum_k weight_k * term_k``).

    Each weight's term, what it measures and its unit:

    Attributes:
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
            margin (:mod:`offroad_env.physics.stability`) is below :data:`STABILITY_REF`
            (20 deg).
        time: the step's duration ``dt`` [s]; a negative weight is a cost per second, which makes
            standing still or circling short of the goal cost something.
        traction: ``max(0, demand - 1)``, how far the motion asks past the friction cone (the
            demand: the share of the cone the net force of gravity and the driving's
            acceleration needs across the ground, ``offroad_env.task.task``; a kinematic model
            goes where it is told, so there this is the grip it would have lacked).
        energy_margin: ``max(0, -margin)`` [m], how far the physical model's energy stability
            margin (``offroad_env.physics.stability.energy_margin``: the rise left to tip over
            the nearest edge less the rolling energy toward it, over m g) is below 0: the body
            tips or rolls with the energy to; 0 for kinematic models.
        stuck: 1 on the step the episode ends as stuck (``TaskConfig.stuck_time`` without
            progress toward the goal; nav only). The end is a truncation, so a learner
            bootstraps through it as if the drive went on; a negative weight is what tells it
            that stalling short of the goal loses the episode (the suite counts it a failure).
        fall: 1 on the step the episode ends in a hole or off the map (a fatal end).
            By default it costs what a tip-over costs (-10); the ids' ``-v0`` versions kept it
            at 0, so falling cost nothing there.
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
    traction: float = 0.0
    energy_margin: float = 0.0
    stuck: float = 0.0
    fall: float = -10.0

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"reward weight {f.name} must be a finite number, got {v!r}")

    def items(self):
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


class StepContext(NamedTuple):
    """What a reward term may read after a step of N environments.

    Attributes:
        state: the :class:`~offroad_env.core.state.SimState` after the step, before its
            ``prev_action`` and ``prev_distance`` move on (they hold the last step's).
        motion: the model's :class:`~offroad_env.physics.models.ModelStep` (``contact``: pose
            and wheels; ``drive``: slip, torques, wheel spins; ``vel_b``: body velocity).
        action: ``(N, A)`` this step's clipped action.
        distance: ``(N,)`` base_link-to-goal distance after the step [m].
        reached: ``(N,)`` bool, the goal is reached (always False outside the nav task).
        tipped: ``(N,)`` bool, the episode ends as a tip-over this step (not where a hole or the
            map's edge, which tilt the body, end it).
        stuck: ``(N,)`` bool, the episode ends as stuck this step (a truncation; no other end
            holds).
        fell: ``(N,)`` bool, the episode ends in a hole or off the map this step.
        nav: the task is navigation (progress counts only there).
        dt: the step [s].
    """

    state: object
    motion: object
    action: torch.Tensor
    distance: torch.Tensor
    reached: torch.Tensor
    tipped: torch.Tensor
    stuck: torch.Tensor
    fell: torch.Tensor
    nav: bool
    dt: float


#: ``{name: term(ctx: StepContext) -> (N,)}``, in the order of :class:`RewardWeights`
REWARD_TERMS: dict[str, Callable[[StepContext], torch.Tensor]] = {}


def reward_term(name: str):
    """Decorator: register a term under ``name`` (once)."""
    def register(fn):
        if name in REWARD_TERMS:
            raise ValueError(f"reward term {name!r} is already registered")
        REWARD_TERMS[name] = fn
        return fn
    return register


# ----------------------------------------------------------------------------- the formulas
def progress_to_goal(prev_distance: torch.Tensor, distance: torch.Tensor) -> torch.Tensor:
    return prev_distance - distance


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


#: the stability reward term counts the margin below this angle [rad] (20 deg)
STABILITY_REF = math.radians(20.0)


def stability_shortfall(margin: torch.Tensor) -> torch.Tensor:
    return torch.clamp(STABILITY_REF - margin, min=0.0)


# ----------------------------------------------------------------------------- the terms
@reward_term("progress")
def _progress(c: StepContext) -> torch.Tensor:
    if not c.nav:
        return torch.zeros_like(c.distance)
    return progress_to_goal(c.state.prev_distance, c.distance)


@reward_term("goal_reached")
def _goal_reached(c: StepContext) -> torch.Tensor:
    return c.reached.to(c.distance.dtype)


@reward_term("tracking")
def _tracking(c: StepContext) -> torch.Tensor:
    v, cmd = c.motion.vel_b, c.state.command
    return velocity_tracking(v[:, 0], v[:, 2], cmd[:, 0], cmd[:, 1])


@reward_term("tilt")
def _tilt(c: StepContext) -> torch.Tensor:
    return tilt_l2(c.motion.contact.roll, c.motion.contact.pitch)


@reward_term("angular_rate")
def _angular_rate(c: StepContext) -> torch.Tensor:
    return angular_rate_l2(c.state.gyro_s)


@reward_term("action_rate")
def _action_rate(c: StepContext) -> torch.Tensor:
    return action_rate_l2(c.action, c.state.prev_action)


@reward_term("slip")
def _slip(c: StepContext) -> torch.Tensor:
    return slip_l1(c.motion.drive.kappa)


@reward_term("energy")
def _energy(c: StepContext) -> torch.Tensor:
    d = c.motion.drive
    return torch.zeros_like(c.distance) if d.torque is None else energy(d.torque, d.wheel_omega)


@reward_term("tip_over")
def _tip_over(c: StepContext) -> torch.Tensor:
    return c.tipped.to(c.distance.dtype)


@reward_term("stability")
def _stability(c: StepContext) -> torch.Tensor:
    return stability_shortfall(c.state.margin)


@reward_term("time")
def _time(c: StepContext) -> torch.Tensor:
    return torch.full_like(c.distance, c.dt)


@reward_term("traction")
def _traction(c: StepContext) -> torch.Tensor:
    return (c.state.traction - 1.0).clamp_min(0.0)


@reward_term("energy_margin")
def _energy_margin(c: StepContext) -> torch.Tensor:
    m = getattr(c.state, "energy_margin", None)
    return torch.zeros_like(c.distance) if m is None else (-m).clamp_min(0.0)


@reward_term("stuck")
def _stuck(c: StepContext) -> torch.Tensor:
    return c.stuck.to(c.distance.dtype)


@reward_term("fall")
def _fall(c: StepContext) -> torch.Tensor:
    return c.fell.to(c.distance.dtype)


def builtin_rewards(weights: RewardWeights) -> dict:
    """The built-in terms as :class:`~offroad_env.task.terms.RewardTerm` values, ``{name: term}``
    in :class:`RewardWeights` order, each with its weight there."""
    from offroad_env.task.terms import RewardTerm
    w = dict(weights.items())
    return {name: RewardTerm(fn, weight=w[name]) for name, fn in REWARD_TERMS.items()}


def reward_terms(ctx: StepContext) -> dict[str, torch.Tensor]:
    """Every reward term ``(N,)`` of a step, by name."""
    return {name: term(ctx) for name, term in REWARD_TERMS.items()}


def weighted_reward(terms: dict[str, torch.Tensor], weights: RewardWeights) -> torch.Tensor:
    """``sum_k weight_k * term_k`` ``(N,)`` (terms of weight 0 are skipped, not multiplied)."""
    reward = torch.zeros_like(next(iter(terms.values())))
    for name, weight in weights.items():
        if weight:
            reward = reward + weight * terms[name]
    return reward
