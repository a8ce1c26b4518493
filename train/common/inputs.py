"""Inputs a trained agent reads besides the env's observation: a wider height scan or a
traversability scan for the actor (``--actor-inputs wide_scan``, ``cost_scan``: on-board
sensors) and privileged columns for an asymmetric critic (``--critic-inputs privileged``:
training only).

Each *source* reads the env's state (``env.unwrapped.state_view()``) and map
(``env.unwrapped.terrain``) and returns ``(N, dim)`` float32 columns; ``layout`` names their parts
as ``[[part, start, stop], ...]``. :class:`WithInputs` appends sources' columns to a vector env's
observations; :func:`policy_of` gives a checkpoint's agent its actor's columns on any env with
its observation (the bench, evaluate, the validation).

**The wide scan** (:class:`WideScan`, 117 columns): terrain heights on a 13 x 9 yaw-aligned grid,
6 x 4 m at 0.5 m, centred 2 m ahead of base_link, relative to its height [m], clipped to +-2
(holes -2): 2.5 x the length and width of the suites' 2.4 x 1.6 m scan at 0.2 m, coarser. What a
robot's elevation map from a lidar or stereo camera holds; the suites' observation stays as it
is, and a policy trained with it computes it from the env it runs in.

**The cost scan** (:class:`CostScan`, 176 columns): ``log10`` of the traversability cost per
metre on a 16 x 11 yaw-aligned grid, 6 x 4 m at 0.4 m, centred 2 m ahead: 0 on flat open
ground, 2 more past a slope or ledge limit (its cost x100), 3 more within the body's reach of a
wall (x1000), clipped at :data:`COST_WALL` (4), which a wall, a hole or ground off the map
reads. The costs are the map planner's
(:func:`train.planners.path.traversability`: slope, steps, walls and soil for the vehicle,
from the local relief; 0.1-m cells on the suites' maps), each cell the worst within 0.2 m
around it, so that a 0.4-m grid misses no ledge. What a robot's local traversability map holds (an elevation map
from a lidar or stereo camera, classified as geometry-based navigation stacks do; the soil
from a terrain classifier): local, 6 m at most, never the cost-to-go of a route, never the
goal's side of an obstacle past its reach.

**The privileged columns** (:class:`CriticInputs`). The critic is used only during training, so
it may read what no robot carries (asymmetric actor-critic: Pinto et al. 2018; the privileged
critics of legged locomotion, Rudin et al. 2022); the actor never sees them, so a policy acts on
the observation (and its own sensors) alone. In this order:

==============  =======  ==========================================================
part            columns  meaning (unit)
==============  =======  ==========================================================
family          F        one-hot terrain family of the env's map (level stacks only:
                         ``terrain.LevelsConfig``, as ``OffroadTraverse-v1``'s)
level           1        its level over the top level, in [0, 1] (level stacks only)
corridor        10       terrain height at 1/10 ... 10/10 of the straight line
                         from base_link to the goal, relative to base_link [m],
                         clipped to +-2 (holes -2): what lies between the vehicle
                         and its goal, past the scan
wheel soil      2K       each wheel's rut depth [m], then its slip ratio (0 where
                         the model keeps none)
time            1        the episode's elapsed steps over its step limit (0 without
                         a limit)
==============  =======  ==========================================================

They are cheap (5.7 ms a step at 4096 envs on 2 cores against a 117-point scan's 39 ms): they
tell the critic how hard the episode's terrain is, which the curriculum's mix of levels
otherwise leaves as noise in its returns.
"""

from __future__ import annotations

import math
import weakref

import gymnasium as gym
import torch

from offroad_env import HeightScanConfig
from offroad_env.core.sensors import height_scan, scan_points
from offroad_env.physics.rotations import place_points
from terrain import LevelsConfig
from train.planners.path import PathConfig, env_traversability, planning_stride

__all__ = ["WideScan", "CostScan", "CriticInputs", "WithInputs", "policy_of", "AgentPolicy", "ACTOR_INPUTS",
           "CRITIC_INPUTS", "WIDE_SCAN", "COST_SCAN", "COST_WALL", "CORRIDOR_POINTS", "actor_sources", "critic_sources"]

#: the values of ``PPOConfig.actor_inputs`` and ``PPOConfig.critic_inputs``
ACTOR_INPUTS = ("none", "wide_scan", "cost_scan")
CRITIC_INPUTS = ("none", "privileged")
#: the wide scan's grid
WIDE_SCAN = HeightScanConfig(size=(6.0, 4.0), resolution=0.5, forward_offset=2.0, clip=2.0)
#: the cost scan's grid (its ``clip`` unused)
COST_SCAN = HeightScanConfig(size=(6.0, 4.0), resolution=0.4, forward_offset=2.0)
#: the spacing [m] the cost scan's traversability reads the maps at (the teacher's; on the
#: 0.025-m training grid every sample costs 40 times more)
COST_SAMPLE = 0.1
#: the cost scan's value of a wall, a hole or ground off the map (``log10`` of an infinite cost)
COST_WALL = 4.0
#: points on the straight line to the goal
CORRIDOR_POINTS = 10
#: the corridor's heights are clipped to +-this [m] (holes read -this)
CORRIDOR_CLIP = 2.0


class WideScan:
    """The actor's wide height scan (module docstring) of a vector env's current state."""

    def __init__(self, env):
        self.base = env.unwrapped
        nx, ny = WIDE_SCAN.shape
        self.layout = [["wide_scan", 0, nx * ny]]
        self.dim = nx * ny

    @torch.no_grad()
    def __call__(self) -> torch.Tensor:
        v = self.base.state_view()
        return height_scan(self.base.terrain, v.map_index, v.base_position_w, v.yaw,
                           WIDE_SCAN).to(torch.float32)


class CostScan:
    """The actor's traversability scan (module docstring) of a vector env's current state:
    ``log10`` of the map planner's cost per metre (:func:`train.planners.path.traversability`,
    on its planning grid, each cell the worst within half the scan's spacing around it) at the
    16 x 11 points of :data:`COST_SCAN`, nearest cell; walls, holes and ground off the map read
    :data:`COST_WALL`. Each map's costs are computed the first time a row stands on it."""

    def __init__(self, env):
        self.base = env.unwrapped
        nx, ny = COST_SCAN.shape
        self.layout = [["cost_scan", 0, nx * ny]]
        self.dim = nx * ny
        self.cfg = PathConfig(sample=COST_SAMPLE)
        self._start()
        self.points = scan_points(COST_SCAN, dtype=torch.float64)

    def _start(self) -> None:
        self.maps = self.base.terrain
        stride = planning_stride(self.maps, self.cfg)
        rx, ry = self.maps.resolution
        self.step = (stride * rx, stride * ry)
        self.x0, _, self.y0, _ = self.maps.bounds
        self.slot = torch.full((self.maps.num_maps,), -1, dtype=torch.int64)
        self.data = None

    def _costs(self, maps: torch.Tensor) -> None:
        new = [int(m) for m in torch.unique(maps) if self.slot[m] < 0]
        if not new:
            return
        c = env_traversability(self.base, self.cfg, new)
        c = torch.log10(c).clamp(0.0, COST_WALL).nan_to_num(COST_WALL)  # inf -> COST_WALL
        k = int(math.ceil(0.5 * COST_SCAN.resolution / min(self.step) - 1e-9))
        if k > 0:  # each cell the worst within half the scan's spacing: no ledge between points
            c = torch.nn.functional.max_pool2d(c[:, None], 2 * k + 1, stride=1, padding=k)[:, 0]
        base = 0 if self.data is None else self.data.shape[0]
        self.data = c if self.data is None else torch.cat((self.data, c))
        self.slot[new] = torch.arange(base, base + len(new))

    @torch.no_grad()
    def __call__(self) -> torch.Tensor:
        if self.base.terrain is not self.maps:  # set_terrain: start afresh
            self._start()
        v = self.base.state_view()
        mi = v.map_index.long().cpu()
        self._costs(mi)
        bp = v.base_position_w.to(torch.float64).cpu()
        yaw = v.yaw.to(torch.float64).cpu()
        px, py = place_points(bp[:, 0:1], bp[:, 1:2], torch.cos(yaw)[:, None],
                              torch.sin(yaw)[:, None], *self.points)
        ny, nx = self.data.shape[-2:]
        c = ((px - self.x0) / self.step[0]).round().long()
        r = ((py - self.y0) / self.step[1]).round().long()
        off = (c < 0) | (c >= nx) | (r < 0) | (r >= ny)
        out = self.data[self.slot[mi][:, None], r.clamp(0, ny - 1), c.clamp(0, nx - 1)]
        out = torch.where(off, torch.full_like(out, COST_WALL), out)
        return out.to(device=v.base_position_w.device, dtype=torch.float32)


class CriticInputs:
    """The privileged columns of a vector env's current state (module docstring): call it
    after each reset and step. ``layout`` names their parts as ``[[part, start, stop], ...]``
    (columns counted from 0); ``dim`` is their number."""

    def __init__(self, env):
        self.base = env.unwrapped
        self.num_wheels = int(self.base.vehicle.num_wheels)
        terrain_cfg = self.base.config.terrain
        self.levels = terrain_cfg if isinstance(terrain_cfg, LevelsConfig) else None
        parts = []
        if self.levels is not None:
            parts += [("family", len(self.levels.families)), ("level", 1)]
        parts += [("corridor", CORRIDOR_POINTS), ("wheel_soil", 2 * self.num_wheels),
                  ("time", 1)]
        self.layout, start = [], 0
        for name, n in parts:
            self.layout.append([name, start, start + n])
            start += n
        self.dim = start

    @torch.no_grad()
    def __call__(self) -> torch.Tensor:
        """``(N, dim)`` float32 columns of the current state."""
        v = self.base.state_view()
        maps = self.base.terrain
        base = v.base_position_w
        n, dev = base.shape[0], base.device
        parts = []
        if self.levels is not None:
            L, W = self.levels.num_levels, self.levels.worlds
            family = torch.div(v.map_index, L * W, rounding_mode="floor")
            level = torch.div(v.map_index, W, rounding_mode="floor") % L
            parts += [torch.nn.functional.one_hot(family, len(self.levels.families)),
                      (level.to(torch.float32) / max(L - 1, 1)).unsqueeze(1)]
        frac = torch.arange(1, CORRIDOR_POINTS + 1, dtype=base.dtype, device=dev) / \
            CORRIDOR_POINTS
        goal = v.goal_w.to(base.dtype)
        cx = base[:, :1] + frac * (goal[:, :1] - base[:, :1])
        cy = base[:, 1:2] + frac * (goal[:, 1:2] - base[:, 1:2])
        corridor = maps.height(cx, cy, v.map_index.unsqueeze(1)) - base[:, 2:3]
        parts.append(torch.nan_to_num(corridor, nan=-CORRIDOR_CLIP).clamp(-CORRIDOR_CLIP,
                                                                           CORRIDOR_CLIP))
        zeros = torch.zeros(n, self.num_wheels, device=dev)
        parts.append(zeros if v.wheel_sinkage is None else v.wheel_sinkage)
        parts.append(zeros if v.wheel_slip is None else v.wheel_slip)
        limit = self.base.max_episode_steps
        parts.append((v.steps.to(torch.float32) / limit if limit else
                      torch.zeros(n, device=dev)).unsqueeze(1))
        return torch.cat([p.to(torch.float32) for p in parts], dim=1)


def actor_sources(name: str, env) -> list:
    """The sources of ``--actor-inputs NAME`` on ``env`` (ValueError for an unknown name)."""
    if name not in ACTOR_INPUTS:
        raise ValueError(f"actor_inputs must be one of {ACTOR_INPUTS}, got {name!r}")
    return [make(env) for make in {"wide_scan": [WideScan], "cost_scan": [CostScan]}.get(name, [])]


def critic_sources(name: str, env) -> list:
    """The sources of ``--critic-inputs NAME`` on ``env`` (ValueError for an unknown name)."""
    if name not in CRITIC_INPUTS:
        raise ValueError(f"critic_inputs must be one of {CRITIC_INPUTS}, got {name!r}")
    return [CriticInputs(env)] if name == "privileged" else []


def _columns(sources) -> torch.Tensor | None:
    return torch.cat([s() for s in sources], dim=1) if sources else None


class WithInputs(gym.vector.VectorWrapper):
    """A vector env whose observations carry its ``sources``' columns after the env's own:
    ``(N, obs_dim + sum of dims)`` (the observation space is left as the env's). In
    ``info["final_obs"]`` a finished episode's columns are those of the state one step before
    its end (the env resets before the step returns)."""

    def __init__(self, env, sources: list):
        super().__init__(env)
        self.sources = list(sources)
        self.dim = sum(s.dim for s in self.sources)
        self._last = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._last = _columns(self.sources)
        return torch.cat((obs, self._last), dim=1), info

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        now = _columns(self.sources)
        if "final_obs" in info:
            done = (terminated | truncated).unsqueeze(1)
            info = dict(info)
            info["final_obs"] = torch.cat((info["final_obs"], torch.where(done, self._last, now)),
                                          dim=1)
        self._last = now
        return torch.cat((obs, now), dim=1), reward, terminated, truncated, info


#: each env's actor sources by name (:func:`policy_of`), dropped with the env
_KEPT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def policy_of(agent, env, deterministic: bool = True,
              generator: torch.Generator | None = None):
    """``obs -> actions`` of ``agent`` (:class:`train.common.agent.Agent`) on the vector env
    ``env``, with the actor's own inputs (``agent.actor_inputs``) computed from ``env``'s state
    at each call: call it with the env's current observation. The mean action, or (not
    ``deterministic``) a sample, from ``generator`` when given. The sources are kept with the
    env (a validation binds a new policy to the same env every time: the cost scan's map
    costs are computed once)."""
    kept = _KEPT.setdefault(env.unwrapped, {})
    if agent.actor_inputs not in kept:
        kept[agent.actor_inputs] = actor_sources(agent.actor_inputs, env)
    sources = kept[agent.actor_inputs]
    if not sources:
        return lambda obs: agent.act(obs, deterministic=deterministic, generator=generator)
    return lambda obs: agent.act(torch.cat((obs, _columns(sources)), dim=1),
                                 deterministic=deterministic, generator=generator)


class AgentPolicy:
    """An agent's mean-action policy for an env made later: ``bind(env)`` gives
    :func:`policy_of` on it (:func:`train.common.episodes.evaluate` binds it)."""

    def __init__(self, agent):
        self.agent = agent

    def bind(self, env):
        return policy_of(self.agent, env)
