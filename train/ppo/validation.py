"""Validation during a training run: every ``validate_every`` iterations the agent's mean
actions drive ``validate_episodes`` episodes on held-out worlds of the training distribution
(maps from another terrain seed, the same spawn seed every time, so every validation sees the
same episodes), and the run keeps the checkpoint that scores best as ``best.pt``.

The training window's success is no guide to which checkpoint is best: it is over sampled
actions, and under a curriculum over the curriculum's levels, not the task's mix.
"""

from __future__ import annotations

import gymnasium as gym
import torch

from offroad_env.task.task import EndReason

from train.common.inputs import policy_of
from train.common.episodes import EVAL_SEED, HELD_OUT_TERRAIN_SEED, run_episodes

__all__ = ["Validation", "HELD_OUT_TERRAIN_SEED", "VALIDATION_SEED"]

#: the spawn and goal seed of the validation episodes (``train.evaluate``'s default)
VALIDATION_SEED = EVAL_SEED


class Validation:
    """A vector env of ``episodes`` sub-envs on held-out worlds of the run's env (``env_id``,
    its ``make_vec`` keywords ``env_kwargs``, time limit ``limit`` in steps), kept for the whole
    run, and the best score so far. The env is eager: compiling it for another N would cost a
    compile of its own. A run resumed in its own folder goes on from the best its checkpoint
    recorded (``best.pt`` is replaced only by a better score); resumed into another folder, it
    keeps a best of its own there."""

    def __init__(self, env_id: str, env_kwargs: dict, episodes: int, limit: int | None,
                 device="cpu"):
        kw = {k: v for k, v in env_kwargs.items() if k != "compile"}
        kw["terrain_seed"] = HELD_OUT_TERRAIN_SEED
        if limit is not None:
            kw["max_episode_steps"] = limit
        self._make = lambda: gym.make_vec(env_id, num_envs=episodes,
                                          vectorization_mode="vector_entry_point",
                                          device=device, **kw)
        self._env = None
        self.episodes = episodes
        self.best: tuple[float, float] | None = None

    @property
    def env(self):
        """The validation's vector env, built at first use: its held-out worlds (a level stack
        of their own, tens of seconds to generate on a cold cache) do not delay the run's first
        training step."""
        if self._env is None:
            self._env = self._make()
        return self._env

    def __call__(self, agent) -> dict:
        """The agent's mean-action score on the held-out episodes: ``val_success_rate`` and
        ``val_return_mean`` (over each sub-env's first episode)."""
        was_training = agent.training
        agent.eval()
        try:
            out, _ = run_episodes(self.env, policy_of(agent, self.env), VALIDATION_SEED)
        finally:
            agent.train(was_training)
        success = (out.reason == int(EndReason.GOAL_REACHED)).double().mean()
        return {"val_success_rate": float(success), "val_return_mean": float(out.ret.mean())}

    def improved(self, score: dict) -> bool:
        """Whether ``score`` beats every earlier one (success first, then return); it becomes
        the best if so."""
        key = (score["val_success_rate"], score["val_return_mean"])
        if self.best is not None and key <= self.best:
            return False
        self.best = key
        return True

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
