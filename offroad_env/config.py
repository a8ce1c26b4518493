"""Named configurations of the registered environments."""

from __future__ import annotations

import dataclasses

from .sim import SimConfig, TaskConfig
from .tasks import RewardWeights

__all__ = ["make_config", "TASKS"]

TASKS = ("nav", "velocity")


def make_config(task: str = "nav", config: SimConfig | None = None, **overrides) -> SimConfig:
    """The :class:`SimConfig` of a task, with fields overridden by keyword.

    ``task="nav"``: reach a goal (observations include the goal in the body frame; reward:
    progress, goal bonus, tilt, rates, tip-over). ``task="velocity"``: track a commanded forward
    speed and yaw rate (the command replaces the goal in the observations; reward: tracking).
    ``config``: start from this config instead of the task's default.
    """
    if config is not None:
        base = config
    elif task == "nav":
        base = SimConfig()
    elif task == "velocity":
        base = SimConfig(
            task=TaskConfig(kind="velocity", weights=RewardWeights(
                progress=0.0, goal_reached=0.0, tracking=1.0)),
            obs_terms=("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu", "command",
                       "prev_action"))
    else:
        raise ValueError(f"unknown task {task!r}; known: {TASKS}")
    names = {f.name for f in dataclasses.fields(SimConfig)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}; known: {sorted(names)}")
    return dataclasses.replace(base, **overrides) if overrides else base
