"""A terrain curriculum in the manner of Isaac Lab's terrain levels.

Every sub-environment has a family (sub-env ``i`` drives family ``i mod F`` of the env's
:class:`terrain.LevelsConfig`) and a level. Each reset draws the sub-env's map among the worlds of
its level (through the env's ``set_map_range`` seam: the maps are one stacked set, nothing is
generated per reset). When an episode ends, the level it played moves by its outcome:

* the goal reached: up one level; on the top level, to a random level (Isaac Lab's rule, so the
  solved envs keep revisiting the whole range);
* a tip-over, a hole, leaving the map or being stuck (``TaskConfig.stuck_time``): down one
  level;
* the time limit: down one level when less than half the start distance to the goal was
  covered, otherwise it stays.

**The new level is played one episode later** (the episode after the next): the reset that ends
an episode starts the next one on the level already chosen for it, and the new level becomes the
sub-env's map range right after that reset. So each sub-env runs two interleaved curricula (its
odd and its even episodes), each moved by its own outcomes. Why: the physical model prepares
each sub-env's next start ahead of its reset, in batches (:mod:`offroad_env.next_starts`), and a
prepared start holds only while the sub-env's map range is the one it was prepared on; a level
chosen at the reset itself would void almost every prepared start and make each reset a solver
call of its own (a v1 training run fell from 38 k to 4-9 k env-steps/s that way).

Initial levels are drawn uniformly in ``[0, init_max_level]`` from each sub-env's own stream
(salted, so spawns stay the unwrapped env's); both chains start there. ``levels`` are the levels
of the running episodes, ``mean_level`` their mean over the sub-envs.
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

    Attributes: ``levels`` ``(N,)`` int64, the level each sub-env's running episode plays;
    ``queued_levels`` ``(N,)`` int64, the level its next episode will play (its map range now);
    ``families`` ``(N,)`` int64 (index into ``levels_config.families``); ``mean_level``.
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
        self.queued_levels = torch.zeros(n, dtype=torch.int64, device=dev)
        self._chosen = None  # (mask, levels) chosen at the last reset, applied after it
        self._start = torch.ones(n, dtype=torch.float64, device=dev)
        self._initialised = False
        self._apply()
        base.add_reset_hook(self._before_reset)

    @property
    def mean_level(self) -> float:
        return float(self.levels.double().mean())

    def _apply(self):
        cfg = self.levels_config
        lo = cfg.map_index(self.families, self.queued_levels, 0)
        self._base.set_map_range(lo, torch.full_like(lo, cfg.worlds))

    def _distance(self) -> torch.Tensor:
        v = self._base.state_view()
        return torch.linalg.vector_norm(v.goal_w - v.base_position_w[:, :2], dim=1)

    def _before_reset(self, mask):
        base = self._base
        u = base.draw_uniform(2, _SALT)[:, :2].double()
        if not self._initialised:  # the first reset: both chains start at the initial levels
            init = torch.minimum((u[:, 0] * (self.init_max_level + 1)).to(torch.int64),
                                 torch.full_like(self.levels, self.init_max_level))
            self.levels = torch.where(mask, init, self.levels)
            self.queued_levels = self.levels.clone()
            self._initialised = bool(mask.all())
            self._apply()
            return
        reason = torch.where(mask, base.end_reasons, torch.zeros_like(base.end_reasons))
        chosen = self.levels
        if bool((reason > 0).any()):
            covered = 1.0 - self._distance() / self._start.clamp_min(1e-9)
            chosen = next_levels(self.levels, reason, covered, self.levels_config.num_levels,
                                 u[:, 1])
        # the new episode plays the level chosen for it before; the outcome's level comes next
        self.levels = torch.where(mask, self.queued_levels, self.levels)
        if self._chosen is not None:  # a second reset in one call: both keep their choice
            mask, chosen = mask | self._chosen[0], torch.where(mask, chosen, self._chosen[1])
        self._chosen = (mask, chosen)

    def _after_call(self):
        """Make the levels chosen at the resets of the call just made the map ranges of the
        reset sub-envs' next episodes (after the resets, so their prepared starts held)."""
        if self._chosen is not None:
            mask, chosen = self._chosen
            self._chosen = None
            self.queued_levels = torch.where(mask, chosen, self.queued_levels)
            self._apply()
        steps = self._base.state_view().steps
        self._start = torch.where(steps == 0, self._distance(), self._start)

    def reset(self, *, seed=None, options=None):
        out = self.env.reset(seed=seed, options=options)
        self._after_call()
        return out

    def step(self, actions):
        out = self.env.step(actions)
        self._after_call()
        return out
