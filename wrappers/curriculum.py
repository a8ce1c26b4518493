"""A terrain curriculum in the manner of Isaac Lab's terrain levels.

Every sub-environment has a family (sub-env ``i`` drives family ``i mod F`` of the env's
:class:`terrain.LevelsConfig`) and a level. Each reset draws the sub-env's map among the worlds of
its level (through the env's ``set_map_range`` seam: the maps are one stacked set, nothing is
generated per reset). When an episode ends its level moves by its outcome:

* the goal reached: up one level; on the top level, to a random level (Isaac Lab's rule, so the
  solved envs keep revisiting the whole range);
* a tip-over, a hole, leaving the map or being stuck (``TaskConfig.stuck_time``): down one
  level;
* the time limit: down one level when less than half the start distance to the goal was
  covered, otherwise it stays.

Initial levels are drawn uniformly in ``[0, init_max_level]`` from each sub-env's own stream
(salted, so spawns stay the unwrapped env's). ``mean_level`` is the mean over the sub-envs.
"""

from __future__ import annotations

import gymnasium as gym
import torch

import terrain as terrain_pkg
from offroad_env.tasks import EndReason

__all__ = ["TerrainCurriculum", "next_levels"]

_SALT = 0x7E22A1C


def next_levels(levels: torch.Tensor, reason: torch.Tensor, covered: torch.Tensor,
                num_levels: int, u: torch.Tensor) -> torch.Tensor:
    """``(N,)`` levels after episodes that ended with ``reason`` (``EndReason`` codes; 0: no
    end, the level stays), having covered the share ``covered`` of their start distance;
    ``u`` ``(N,)`` uniforms pick the random level of those that solved the top one."""
    up = reason == int(EndReason.GOAL_REACHED)
    fail = ((reason == int(EndReason.TIP_OVER)) | (reason == int(EndReason.HOLE))
            | (reason == int(EndReason.OFF_MAP)) | (reason == int(EndReason.STUCK)))
    slow = (reason == int(EndReason.TIME_LIMIT)) & (covered < 0.5)
    new = levels + up.to(levels.dtype) - (fail | slow).to(levels.dtype)
    rand = torch.minimum((u * num_levels).to(levels.dtype), torch.full_like(levels,
                                                                            num_levels - 1))
    new = torch.where(up & (levels == num_levels - 1), rand, new)
    return new.clamp(0, num_levels - 1)


class TerrainCurriculum(gym.vector.VectorWrapper):
    """Terrain levels for an offroad vector env whose terrain is a :class:`terrain.LevelsConfig`
    (``OffroadTraverse-v0``). Works in every autoreset mode (the env's ``end_reasons`` seam gives
    the ending episodes' reasons to the reset hook).

    Attributes: ``levels`` ``(N,)`` int64; ``families`` ``(N,)`` int64 (index into
    ``levels_config.families``); ``mean_level``.
    """

    def __init__(self, env, init_max_level: int = 0):
        super().__init__(env)
        base = env.unwrapped
        cfg = base.config.terrain
        if not isinstance(cfg, terrain_pkg.LevelsConfig):
            raise ValueError("a terrain curriculum needs an env whose terrain is a "
                             f"terrain.LevelsConfig (OffroadTraverse-v0), got "
                             f"{type(cfg).__name__}")
        self.levels_config = cfg
        L = cfg.num_levels
        if int(init_max_level) != init_max_level or not 0 <= init_max_level < L:
            raise ValueError(f"init_max_level must be an int in [0, {L}), got "
                             f"{init_max_level!r}")
        self.init_max_level = int(init_max_level)
        self._base = base
        n = base.num_envs
        dev = base.device
        self.families = torch.arange(n, device=dev) % len(cfg.families)
        self.levels = torch.zeros(n, dtype=torch.int64, device=dev)
        self._start = torch.ones(n, dtype=torch.float64, device=dev)
        self._initialised = False
        self._apply()
        base.add_reset_hook(self._before_reset)

    @property
    def mean_level(self) -> float:
        return float(self.levels.double().mean())

    def _apply(self):
        cfg = self.levels_config
        lo = cfg.map_index(self.families, self.levels, 0)
        self._base.set_map_range(lo, torch.full_like(lo, cfg.worlds))

    def _distance(self) -> torch.Tensor:
        v = self._base.state_view()
        return torch.linalg.vector_norm(v.goal_w - v.base_position_w[:, :2], dim=1)

    def _before_reset(self, mask):
        base = self._base
        u = base.draw_uniform(2, _SALT)[:, :2].double()
        if not self._initialised:  # the first reset: the initial levels
            init = torch.minimum((u[:, 0] * (self.init_max_level + 1)).to(torch.int64),
                                 torch.full_like(self.levels, self.init_max_level))
            self.levels = torch.where(mask, init, self.levels)
            self._initialised = bool(mask.all())
        else:
            reason = torch.where(mask, base.end_reasons, torch.zeros_like(base.end_reasons))
            if bool((reason > 0).any()):
                covered = 1.0 - self._distance() / self._start.clamp_min(1e-9)
                self.levels = next_levels(self.levels, reason, covered,
                                          self.levels_config.num_levels, u[:, 1])
        self._apply()

    def _record_starts(self):
        steps = self._base.state_view().steps
        self._start = torch.where(steps == 0, self._distance(), self._start)

    def reset(self, *, seed=None, options=None):
        out = self.env.reset(seed=seed, options=options)
        self._record_starts()
        return out

    def step(self, actions):
        out = self.env.step(actions)
        self._record_starts()
        return out
