"""Sensor and actuator latency for the vector env: observation delay and action delay.

IMU white noise and a bias random walk are part of the simulator (``ImuConfig``: they enter the
specific force and angular rate where the IMU is computed), and their levels can be drawn per
episode by :class:`~wrappers.randomization.DomainRandomization`. Action repeat is
``SimConfig.action_repeat``: a wrapper over a vector env cannot stop stepping the sub-envs that
finish inside a repeat, the simulator can (it freezes them).

Both wrappers keep per-sub-env queues as torch tensors and restart a sub-env's queue when its
episode restarts, in every autoreset mode:

* ``NEXT_STEP``: the step after a sub-env's episode ended is its reset step;
* ``SAME_STEP``: the step that ended it also returned the new episode's first observation (the
  delayed final observation goes into ``info["final_obs"]``);
* ``DISABLED``: ``reset(options={"reset_mask": mask})`` restarts the masked sub-envs.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode

from offroad_env.seams import autoreset_mode, reset_mask

__all__ = ["ObservationDelay", "ActionDelay"]


def _check_k(k):
    if int(k) != k or k < 0:
        raise ValueError(f"delay must be an int >= 0 steps, got {k!r}")
    return int(k)


class ObservationDelay(gym.vector.VectorWrapper):
    """Each observation is the one from ``delay`` steps earlier in the same episode (the first
    observation of an episode stands in for the steps before it). ``delay=0`` is the identity.
    """

    def __init__(self, env: gym.vector.VectorEnv, delay: int = 1):
        super().__init__(env)
        self.delay = _check_k(delay)
        self._buf: torch.Tensor | None = None  # (delay + 1, N, D), oldest first
        self._pending = None

    def _restart(self, rows: torch.Tensor, obs: torch.Tensor):
        fill = obs.unsqueeze(0).expand_as(self._buf)
        self._buf = torch.where(rows.view(1, -1, 1), fill, self._buf)

    def _push(self, obs: torch.Tensor) -> torch.Tensor:
        self._buf = torch.cat((self._buf[1:], obs.unsqueeze(0)), 0)
        return self._buf[0]

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        rows = reset_mask(options, self.num_envs, obs.device)
        if self._buf is None:
            self._buf = obs.unsqueeze(0).repeat(self.delay + 1, 1, 1)
        self._restart(rows, obs)
        self._pending = torch.zeros_like(rows)
        return self._buf[-1 - self.delay].clone(), info

    def step(self, actions):
        obs, rew, term, trunc, info = self.env.step(actions)
        mode = autoreset_mode(self.env)
        done = term | trunc
        if mode == AutoresetMode.NEXT_STEP:
            restart = self._pending
            out = self._push(obs)
            self._restart(restart, obs)
            out = torch.where(restart.unsqueeze(1), obs, out)
            self._pending = done
        elif mode == AutoresetMode.SAME_STEP and "final_obs" in info:
            fo = torch.where(done.unsqueeze(1), info["final_obs"], obs)
            out = self._push(fo)
            info = dict(info, final_obs=out.clone())
            self._restart(done, obs)
            out = torch.where(done.unsqueeze(1), obs, out)
        else:
            out = self._push(obs)
        return out.clone(), rew, term, trunc, info


class ActionDelay(gym.vector.VectorWrapper):
    """The env executes the action given ``delay`` steps earlier in the same episode; zero
    actions (stand still) fill the first ``delay`` steps of every episode."""

    def __init__(self, env: gym.vector.VectorEnv, delay: int = 1):
        super().__init__(env)
        self.delay = _check_k(delay)
        self._queue: torch.Tensor | None = None  # (delay, N, A), oldest first
        self._pending = None

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        rows = reset_mask(options, self.num_envs, obs.device)
        shape = (self.delay, self.num_envs) + self.single_action_space.shape
        if self._queue is None:
            self._queue = torch.zeros(shape, dtype=obs.dtype, device=obs.device)
        self._zero(rows)
        self._pending = torch.zeros_like(rows)
        return obs, info

    def _zero(self, rows):
        self._queue = torch.where(rows.view(1, -1, 1), torch.zeros_like(self._queue),
                                  self._queue)

    def step(self, actions):
        if self.delay == 0:
            return self.env.step(actions)
        a = torch.as_tensor(actions, dtype=self._queue.dtype, device=self._queue.device)
        if not torch.isfinite(a).all():  # fail now, not ``delay`` steps later
            self.env.unwrapped.check_action(a)
        execute = self._queue[0]
        self._queue = torch.cat((self._queue[1:], a.unsqueeze(0)), 0)
        obs, rew, term, trunc, info = self.env.step(execute)
        done = term | trunc
        if autoreset_mode(self.env) == AutoresetMode.NEXT_STEP:
            self._zero(self._pending)  # that step was the reset step: the new episode starts
            self._pending = done
        elif autoreset_mode(self.env) == AutoresetMode.SAME_STEP:
            self._zero(done)
        return obs, rew, term, trunc, info
