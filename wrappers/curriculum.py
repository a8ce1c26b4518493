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
each sub-env's next start ahead of its reset, in batches (:mod:`offroad_env.core.next_starts`), and a
prepared start holds only while the sub-env's map range is the one it was prepared on; a level
chosen at the reset itself would void almost every prepared start and make each reset a solver
call of its own (a v1 training run fell from 38 k to 4-9 k env-steps/s that way).

**Levels where the vehicle cannot start are left out.** A reset draws its spawn again until it
is a stable rest and raises where none turns up (a real DEM window steeper than ``atan(mu)`` on
average has almost none). So at construction the curriculum measures, for every map, the share
of drawn spawns that rest (:func:`offroad_env.sim.rest_probe.rest_shares`, fixed streams, a second
or two for a suite's 140 maps on the physical model), and caps each family below its first
level whose worlds rest less than ``min_rest_share`` of their spawns (the cap, ``top_levels``,
is said in a warning). Promotion stops at the cap and a solved cap draws its random level
under it.

Initial levels are drawn uniformly in ``[0, init_max_level]`` from each sub-env's own stream
(salted, so spawns stay the unwrapped env's); both chains start there. ``levels`` are the levels
of the running episodes, ``mean_level`` their mean over the sub-envs.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import torch

import terrain as terrain_pkg
from offroad_env import MIN_REST_SHARE
from offroad_env.task.task import EndReason

__all__ = ["TerrainCurriculum", "next_levels", "top_levels"]

_SALT = 0x7E22A1C


def next_levels(levels: torch.Tensor, reason: torch.Tensor, covered: torch.Tensor,
                num_levels: int, u: torch.Tensor, top: torch.Tensor | None = None
                ) -> torch.Tensor:
    """``(N,)`` levels after episodes that ended with ``reason`` (``EndReason`` codes; 0: no
    end, the level stays), having covered the share ``covered`` of their start distance;
    ``u`` ``(N,)`` uniforms pick the random level of those that solved the top one. ``top``
    ``(N,)`` int64: each row's highest level (default ``num_levels - 1`` for all)."""
    if top is None:
        top = torch.full_like(levels, num_levels - 1)
    up = reason == int(EndReason.GOAL_REACHED)
    fail = ((reason == int(EndReason.TIP_OVER)) | (reason == int(EndReason.HOLE))
            | (reason == int(EndReason.OFF_MAP)) | (reason == int(EndReason.STUCK)))
    slow = (reason == int(EndReason.TIME_LIMIT)) & (covered < 0.5)
    new = levels + up.to(levels.dtype) - (fail | slow).to(levels.dtype)
    rand = torch.minimum((u * (top + 1)).to(levels.dtype), top)
    new = torch.where(up & (levels >= top), rand, new)
    return torch.minimum(new.clamp_min(0), top)


def top_levels(shares: torch.Tensor, cfg, min_share: float) -> torch.Tensor:
    """``(F,)`` int64: each family's highest level below its first level whose worlds' spawns
    rest less than ``min_share`` of the time on average (``shares`` ``(M,)``: per map, as
    :func:`~offroad_env.sim.rest_probe.rest_shares`; ``cfg`` the :class:`terrain.LevelsConfig`);
    -1 where level 0 already does."""
    F, L = len(cfg.families), cfg.num_levels
    f, lv, w = (torch.arange(k, device=shares.device) for k in (F, L, cfg.worlds))
    per = shares[cfg.map_index(f[:, None, None], lv[None, :, None], w)].mean(2)  # (F, L)
    ok = per >= min_share
    below = torch.cumprod(ok.to(torch.int64), 1)  # 1 up to the first level that fails
    return below.sum(1) - 1


class TerrainCurriculum(gym.vector.VectorWrapper):
    """Terrain levels for an offroad vector env whose terrain is a :class:`terrain.LevelsConfig`
    (``OffroadTraverse-v1``). Works in every autoreset mode (the env's ``end_reasons`` seam gives
    the ending episodes' reasons to the reset hook).

    Attributes: ``levels`` ``(N,)`` int64, the level each sub-env's running episode plays;
    ``queued_levels`` ``(N,)`` int64, the level its next episode will play (its map range now);
    ``families`` ``(N,)`` int64 (index into ``levels_config.families``); ``top_levels``
    ``(F,)`` int64, each family's highest level played (module docstring); ``rest_shares``
    ``(M,)`` float64, the measured share per map (None when ``min_rest_share`` is None);
    ``mean_level``.

    ``min_rest_share``: the least share of resting spawns a level's worlds need to be played
    (default :data:`~offroad_env.sim.rest_probe.MIN_REST_SHARE`, 0.25: then a reset's 65 draws all
    fail for fewer than one reset in 10^8); None plays every level unmeasured.
    """

    def __init__(self, env, init_max_level: int = 0,
                 min_rest_share: float | None = MIN_REST_SHARE):
        super().__init__(env)
        base = env.unwrapped
        cfg = base.config.terrain
        if not isinstance(cfg, terrain_pkg.LevelsConfig):
            raise ValueError("a terrain curriculum needs an env whose terrain is a "
                             f"terrain.LevelsConfig (OffroadTraverse-v1), got "
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
        self.rest_shares, self.top_levels = None, torch.full(
            (len(cfg.families),), L - 1, dtype=torch.int64, device=dev)
        if min_rest_share is not None:
            if (isinstance(min_rest_share, bool) or not isinstance(min_rest_share, (int, float))
                    or not 0.0 <= min_rest_share <= 1.0):
                raise ValueError(f"min_rest_share must be in [0, 1] or None, got "
                                 f"{min_rest_share!r}")
            self.rest_shares = base.rest_shares()
            self.top_levels = top_levels(self.rest_shares, cfg, min_rest_share).to(dev)
            self._say_caps(min_rest_share)
        self._top = self.top_levels[self.families]
        self.levels = torch.zeros(n, dtype=torch.int64, device=dev)
        self.queued_levels = torch.zeros(n, dtype=torch.int64, device=dev)
        self._chosen = None  # (mask, levels) chosen at the last reset, applied after it
        self._start = torch.ones(n, dtype=torch.float64, device=dev)
        self._initialised = False
        self._apply()
        base.add_reset_hook(self._before_reset)

    def _say_caps(self, min_share: float) -> None:
        cfg, shares = self.levels_config, self.rest_shares
        names = cfg.families
        said = []
        for f, top in enumerate(self.top_levels.tolist()):
            if top == cfg.num_levels - 1:
                continue
            lo = cfg.map_index(f, top + 1, 0)
            share = float(shares[lo:lo + cfg.worlds].mean())
            if top < 0:
                raise ValueError(f"family {names[f]!r}: level 0's maps give a stable rest to "
                                 f"{share:.0%} of drawn spawns (under min_rest_share "
                                 f"{min_share}); no level of it can be played")
            said.append(f"{names[f]!r} up to level {top} (level {top + 1}: {share:.0%})")
        if said:
            warnings.warn("terrain curriculum: levels where drawn spawns rarely rest are left "
                          f"out (under {min_share:.0%} of spawns rest): " + ", ".join(said),
                          stacklevel=3)

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
            init = torch.minimum(init, self._top)
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
                                 u[:, 1], self._top)
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
