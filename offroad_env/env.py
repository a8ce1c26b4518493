"""``OffroadEnv``: the single :class:`gymnasium.Env`, an N = 1 view of the batched simulator.

Same physics, observations, rewards and terminations as
:class:`~offroad_env.vector_env.OffroadVectorEnv` (see its spec sheet), with numpy float32
observations, a Python float reward and Python bool flags. ``reset(seed=s)`` equals sub-env i of
a vector env reset with seed ``s - i``. The time limit comes from ``gymnasium.make`` (the
registered ``max_episode_steps``, applied by its ``TimeLimit`` wrapper) or from
``max_episode_steps`` here; only in the second case does ``info["end_reason"]`` say
``"time_limit"`` (the wrapper's limit is invisible to the env).
"""

from __future__ import annotations

import numpy as np
import torch
import gymnasium as gym
from gymnasium import spaces

from . import rng as rngmod
from .bookkeeping import SimulatorSeams, time_limit
from .config import SimConfig, make_config
from .render import Renderer
from .sim import Simulator
from .tasks import EndReason

__all__ = ["OffroadEnv"]


class OffroadEnv(SimulatorSeams, gym.Env):
    """One off-road vehicle. Args as :class:`OffroadVectorEnv` without ``num_envs``; the public
    seams (:class:`~offroad_env.bookkeeping.SimulatorSeams`) work on N = 1 tensors."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, task: str = "nav", config: SimConfig | None = None,
                 render_mode: str | None = None, max_episode_steps: int | None = None,
                 compile: bool = False, **overrides):
        cfg = make_config(task, config, **overrides)
        if max_episode_steps is not None and (int(max_episode_steps) != max_episode_steps
                                              or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be an int >= 1 or None, got "
                             f"{max_episode_steps!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.sim = Simulator(cfg, 1, device="cpu", dtype=torch.float32, compile=compile)
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        lo, hi = self.sim.obs_bounds()
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (self.sim.action_dim,), np.float32)
        self._seeded = False
        self._renderer = Renderer(self.sim) if render_mode else None
        self._all = torch.ones(1, dtype=torch.bool)
        self._no_bad = torch.zeros(1, dtype=torch.bool)
        self._reward_keys = [f"reward/{name}" for name in self.reward_terms]

    @property
    def config(self) -> SimConfig:
        return self.sim.cfg

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """``options["start_pose"]``: optional world ``(x, y, yaw)`` replacing the random spawn;
        ``options["goal"]``: optional world ``(x, y)`` goal replacing the drawn one."""
        super().reset(seed=seed)
        if seed is not None:
            self.sim.set_keys(rngmod.keys_from_seeds([int(seed)]), self._all)
            self._seeded = True
        elif not self._seeded:
            self.sim.set_keys(rngmod.random_keys(self.np_random, 1), self._all)
            self._seeded = True
        start = (options or {}).get("start_pose")
        if start is not None:
            start = torch.as_tensor(np.asarray(start, dtype=np.float64).reshape(1, -1))
        goal = (options or {}).get("goal")
        if goal is not None:
            goal = torch.as_tensor(np.asarray(goal, dtype=np.float64).reshape(1, -1))
        obs = self.sim.reset(self._all, start, goal)
        if self._renderer is not None:
            self._renderer.clear()
            self._renderer.record(0)
        return obs[0].numpy().copy(), {}

    def step(self, action):
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        raw = np.asarray(action)
        if raw.dtype.kind not in "fiu":
            raise ValueError(f"action {action!r} is not an array of real numbers (dtype "
                             f"{raw.dtype}); expected {self.action_space.shape} floats in [-1, 1]")
        with np.errstate(over="ignore"):
            a = raw.astype(np.float32)
        if a.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, got {a.shape}")
        if np.isfinite(a).all():  # the common case, checked in numpy (no tensor round trip)
            at = torch.from_numpy(np.clip(a, -1.0, 1.0).reshape(1, -1))
            obs, reward, terminated, info = self.sim.step_checked(at, self._no_bad)
        else:  # the simulator raises, or zeroes and flags it (nan_action="zero")
            obs, reward, terminated, info = self.sim.step(
                torch.from_numpy(np.ascontiguousarray(raw).reshape(1, -1)))
        keys = self._reward_keys
        truncated, reason = time_limit(self.sim.state.steps, terminated, info["end_reason"],
                                       self.max_episode_steps)
        # two host transfers for all the scalars ((1,) tensors each; cat promotes the flags)
        head = torch.cat((terminated, truncated, reason, info["bad_action"])).tolist()
        vals = torch.cat([reward] + [info[k] for k in keys]).tolist()
        term, truncated = bool(head[0]), bool(head[1])
        out = dict(zip(keys, vals[1:]))
        out["end_reason"] = EndReason(head[2]).label
        out["bad_action"] = bool(head[3])
        if self._renderer is not None:
            self._renderer.record(0)
        return obs.numpy()[0].copy(), vals[0], term, truncated, out

    def render(self):
        if self.render_mode is None:
            return None
        return self._renderer.frame(0)

    def close(self):
        pass
