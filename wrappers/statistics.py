"""Torch-native equivalents of Gymnasium's vector ``RecordEpisodeStatistics`` and
``NormalizeObservation``, for the native torch vector env (Gymnasium's own are numpy-only: they
fail on torch outputs, "Concatenation operation is not implemented for NumPy arrays" and
"mean() got an unexpected keyword argument 'axis'").

Same options, attributes and ``info`` layout as Gymnasium's, with tensors on the env's device in
place of arrays; the statistics follow the env's autoreset mode as Gymnasium's do.
``tests/test_wrappers.py`` checks both against Gymnasium's numpy results on the same data.
"""

from __future__ import annotations

import time
from collections import deque

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode

from offroad_env.seams import autoreset_mode, reset_mask

__all__ = ["TorchRecordEpisodeStatistics", "TorchNormalizeObservation"]


class TorchRecordEpisodeStatistics(gym.vector.VectorWrapper):
    """Episode returns, lengths and times: on a step where sub-envs finish, ``info["episode"] =
    {"r": (N,), "l": (N,), "t": (N,)}`` (zeros elsewhere) and ``info["_episode"]`` the
    ``(N,)`` bool mask; the last ``buffer_length`` episodes in ``return_queue``,
    ``length_queue`` and ``time_queue``; ``episode_count``."""

    def __init__(self, env, buffer_length: int = 100, stats_key: str = "episode"):
        super().__init__(env)
        self._stats_key = stats_key
        self._mode = autoreset_mode(env)
        dev = env.unwrapped.device
        n = self.num_envs
        self.episode_count = 0
        self.episode_start_times = torch.zeros(n, dtype=torch.float64, device=dev)
        self.episode_returns = torch.zeros(n, dtype=torch.float64, device=dev)
        self.episode_lengths = torch.zeros(n, dtype=torch.int64, device=dev)
        self.prev_dones = torch.zeros(n, dtype=torch.bool, device=dev)
        self.time_queue: deque = deque(maxlen=buffer_length)
        self.return_queue: deque = deque(maxlen=buffer_length)
        self.length_queue: deque = deque(maxlen=buffer_length)

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        mask = reset_mask(options, self.prev_dones.shape[0], self.prev_dones.device)
        now = time.perf_counter()
        self.episode_start_times = torch.where(mask, now, self.episode_start_times)
        self.episode_returns = torch.where(mask, 0.0, self.episode_returns)
        self.episode_lengths = torch.where(mask, 0, self.episode_lengths)
        self.prev_dones = self.prev_dones & ~mask
        return obs, info

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        r = rewards.to(torch.float64)
        now = time.perf_counter()
        if self._mode == AutoresetMode.SAME_STEP:
            self.episode_returns = self.episode_returns + r
            self.episode_lengths = self.episode_lengths + 1
        else:  # the step after an end resets the sub-env and does not count
            p = self.prev_dones
            self.episode_returns = torch.where(p, 0.0, self.episode_returns + r)
            self.episode_lengths = torch.where(p, 0, self.episode_lengths + 1)
            self.episode_start_times = torch.where(p, now, self.episode_start_times)
        dones = terminations | truncations
        self.prev_dones = dones
        if bool(dones.any()):
            key = self._stats_key
            if key in infos or f"_{key}" in infos:
                raise ValueError(f"info already holds {key!r}: {list(infos)}")
            t = torch.round((now - self.episode_start_times) * 1e6) / 1e6
            zero = torch.zeros_like(self.episode_returns)
            infos[key] = {"r": torch.where(dones, self.episode_returns, zero),
                          "l": torch.where(dones, self.episode_lengths,
                                           torch.zeros_like(self.episode_lengths)),
                          "t": torch.where(dones, t, zero)}
            infos[f"_{key}"] = dones.clone()
            idx = torch.nonzero(dones).flatten()
            self.episode_count += int(idx.numel())
            self.time_queue.extend(t[idx].tolist())
            self.return_queue.extend(self.episode_returns[idx].tolist())
            self.length_queue.extend(self.episode_lengths[idx].tolist())
            if self._mode == AutoresetMode.SAME_STEP:  # already reset: restart now
                self.episode_returns = torch.where(dones, 0.0, self.episode_returns)
                self.episode_lengths = torch.where(dones, 0, self.episode_lengths)
                self.episode_start_times = torch.where(dones, now, self.episode_start_times)
        return obs, rewards, terminations, truncations, infos


class TorchNormalizeObservation(gym.vector.VectorObservationWrapper):
    """Observations normalized by a running mean and variance over every sub-env's
    observations (updated at every step and reset while ``update_running_mean``): ``(obs -
    mean) / sqrt(var + epsilon)``, float32; the statistics in ``obs_rms`` (``mean``, ``var``,
    ``count``, float64, Gymnasium's ``RunningMeanStd`` rule: count starts at 1e-4). Next-step
    autoreset only, and no partial resets, as Gymnasium's."""

    class _RunningMeanStd:
        def __init__(self, shape, device):
            self.mean = torch.zeros(shape, dtype=torch.float64, device=device)
            self.var = torch.ones(shape, dtype=torch.float64, device=device)
            self.count = 1e-4

        def update(self, x):
            x = x.to(torch.float64)
            bm, bv, bc = x.mean(0), x.var(0, unbiased=False), x.shape[0]
            delta = bm - self.mean
            tot = self.count + bc
            self.mean = self.mean + delta * bc / tot
            m2 = self.var * self.count + bv * bc + delta.square() * self.count * bc / tot
            self.var = m2 / tot
            self.count = tot

    def __init__(self, env, epsilon: float = 1e-8):
        super().__init__(env)
        if not epsilon > 0:
            raise ValueError(f"epsilon should be strictly positive, got {epsilon}")
        if autoreset_mode(env) != AutoresetMode.NEXT_STEP:
            raise ValueError("TorchNormalizeObservation needs NEXT_STEP autoreset (as "
                             f"Gymnasium's), got {autoreset_mode(env)}")
        shape = self.single_observation_space.shape
        self.single_observation_space = gym.spaces.Box(-float("inf"), float("inf"), shape,
                                                       dtype="float32")
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              self.num_envs)
        self.obs_rms = self._RunningMeanStd(shape, env.unwrapped.device)
        self.epsilon = epsilon
        self.update_running_mean = True

    def reset(self, *, seed=None, options=None):
        if options is not None and options.get("reset_mask") is not None:
            if not bool(torch.as_tensor(options["reset_mask"]).all()):
                raise ValueError("TorchNormalizeObservation does not support partial resets")
        return super().reset(seed=seed, options=options)

    def observations(self, observations):
        if self.update_running_mean:
            self.obs_rms.update(observations)
        return ((observations.to(torch.float64) - self.obs_rms.mean)
                / torch.sqrt(self.obs_rms.var + self.epsilon)).to(torch.float32)
