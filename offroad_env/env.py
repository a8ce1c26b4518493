"""``OffroadEnv``: the single :class:`gymnasium.Env`, an N = 1 view of the batched simulator.

Same physics, observations, rewards and terminations as
:class:`~offroad_env.vector_env.OffroadVectorEnv` (see its spec sheet), with numpy float32
observations, a Python float reward and Python bool flags. ``reset(seed=s)`` equals sub-env i of
a vector env reset with seed ``s - i``. The time limit comes from ``gymnasium.make`` (the
registered ``max_episode_steps``, applied by its ``TimeLimit`` wrapper) or from
``max_episode_steps`` here; only in the second case does ``info["end_reason"]`` say
``EndReason.TIME_LIMIT`` (the wrapper's limit is invisible to the env).

Every info value is a number, as in the vector env: ``info["end_reason"]`` is an
:class:`~offroad_env.EndReason` (an ``int``; ``.label`` gives its name), so Gymnasium's
``AsyncVectorEnv`` stacks it into an int64 array and TorchRL's specs hold it.
"""

from __future__ import annotations

import numpy as np
import torch
import gymnasium as gym
from gymnasium import spaces

from offroad_env.sim.config import SimConfig
from offroad_env.seams import SimulatorEnvBase
from offroad_env.task.task import episode_ends
from offroad_env.task.task import end_code

__all__ = ["OffroadEnv"]


class OffroadEnv(SimulatorEnvBase, gym.Env):
    """One off-road vehicle. Args as :class:`OffroadVectorEnv` without ``num_envs``; the public
    seams (:class:`~offroad_env.seams.SimulatorSeams`) work on N = 1 tensors."""

    def __init__(self, task: str = "nav", config: SimConfig | None = None,
                 render_mode: str | None = None, max_episode_steps: int | None = None,
                 compile: bool = False, **overrides):
        self._build(task, config, 1, max_episode_steps, render_mode, "cpu", torch.float32,
                    compile, overrides)
        lo, hi = self.sim.obs_bounds()
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (self.sim.action_dim,), np.float32)
        self._all = torch.ones(1, dtype=torch.bool)
        self._reward_keys = [f"reward/{name}" for name in self.reward_terms]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """``options["start_pose"]``: optional world ``(x, y, yaw)`` replacing the random spawn;
        ``options["goal"]``: optional world ``(x, y)`` goal replacing the drawn one."""
        self._seed(seed, self._all, lambda s: gym.Env.reset(self, seed=s))
        obs = self.sim.reset(self._all, *self._start_options(options))
        if self._renderer is not None:
            self._renderer.clear()
            self._renderer.record(0)
        return obs[0].numpy().copy(), {}

    def step(self, action):
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        raw = np.asarray(action)
        if raw.dtype.kind in "fiu" and raw.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, got {raw.shape}")
        obs, reward, ended, info = self.sim.step(raw.reshape(1, -1))
        keys = self._reward_keys
        terminated, truncated, reason = episode_ends(self.sim.state.steps, ended,
                                                     info["end_reason"], self.max_episode_steps,
                                                     self.sim.task.time_out_codes)
        # two host transfers for all the scalars ((1,) tensors each; cat promotes the flags)
        head = torch.cat((terminated, truncated, reason, info["bad_action"])).tolist()
        vals = torch.cat([reward] + [info[k] for k in keys]).tolist()
        term, truncated = bool(head[0]), bool(head[1])
        out = dict(zip(keys, vals[1:]))
        out["end_reason"] = end_code(head[2], self.sim.task.end_labels)
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
