"""Named configurations of the registered environments."""

from __future__ import annotations

import dataclasses

import terrain

from .sim import HeightScanConfig, SimConfig, TaskConfig
from .tasks import RewardWeights

__all__ = ["make_config", "TASKS", "rough_terrain"]

TASKS = ("nav", "velocity", "nav_rough")


def rough_terrain(size=(40.0, 40.0), resolution=(0.1, 0.1)) -> terrain.TerrainConfig:
    """The rough navigation terrain: hills (Perlin fBm, +-1.5 m), rocks up to 0.5 m high and
    40 holes of 0.4-1.2 m radius (a wheel over a hole ends the episode)."""
    grid = dict(size=size, resolution=resolution)
    base = terrain.SumConfig(**grid, parts=(
        terrain.PerlinConfig(**grid, octaves=5, frequency=0.08, amplitude=1.5),
        terrain.RocksConfig(**grid, count=250, radius_range=(0.2, 0.7),
                            height_range=(0.1, 0.5))))
    return terrain.HolesConfig(**grid, base=base, count=40, radius_range=(0.4, 1.2),
                               keep_center=0.0)


def make_config(task: str | TaskConfig = "nav", config: SimConfig | None = None,
                **overrides) -> SimConfig:
    """The :class:`SimConfig` of a task, with fields overridden by keyword.

    ``task="nav"``: reach a goal (observations include the goal in the body frame; reward:
    progress, goal bonus, tilt, rates, tip-over). ``task="velocity"``: track a commanded forward
    speed and yaw rate (the command replaces the goal in the observations; reward: tracking).
    ``task="nav_rough"``: nav on :func:`rough_terrain` with a height scan in the observations.
    ``config``: start from this config instead of the task's default. A :class:`TaskConfig`
    as ``task`` overrides the config's ``task`` field (its ``kind`` picks the defaults).
    """
    if isinstance(task, TaskConfig):  # a TaskConfig given as the ``task`` field override
        overrides["task"] = task
        task = task.kind
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
    elif task == "nav_rough":
        base = SimConfig(terrain=rough_terrain(), height_scan=HeightScanConfig(
            size=(2.4, 1.6), resolution=0.2, forward_offset=0.8))
    else:
        raise ValueError(f"unknown task {task!r}; known: {TASKS}")
    names = {f.name for f in dataclasses.fields(SimConfig)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}; known: {sorted(names)}")
    return dataclasses.replace(base, **overrides) if overrides else base
