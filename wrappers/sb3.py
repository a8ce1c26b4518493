"""A Stable-Baselines3 ``VecEnv`` over :class:`~offroad_env.OffroadVectorEnv`.

SB3 does not take a Gymnasium ``VectorEnv`` (SB3#1608), so this adapter speaks SB3's protocol:
numpy observations, rewards and dones; one info dict per sub-env; automatic resets with the
finished episode's last observation in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` set when the time limit (not a termination) ended it.
The native env runs in SAME_STEP autoreset mode underneath.

    from wrappers import SB3VecEnv
    venv = SB3VecEnv.make("offroad_env/OffroadNav-v1", num_envs=64)
    model = stable_baselines3.PPO("MlpPolicy", venv)
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - the sb3 extra is missing
    raise ImportError("wrappers.sb3 needs stable-baselines3: pip install "
                      "'offroad-env[sb3]'") from exc


__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """SB3 view of a native offroad vector env (which must use ``SAME_STEP`` autoreset).

    ``infos[i]`` holds ``end_reason`` (a name) on the step an episode ends, plus
    ``terminal_observation``, ``TimeLimit.truncated`` and ``episode`` (``{"r": return,
    "l": length, "t": seconds since the start}``, what SB3's ``Monitor`` adds, so ``ep_rew_mean``
    logs without ``VecMonitor``) as SB3 expects.

    A ``NEXT_STEP`` env is refused rather than converted: SB3's protocol needs a finished
    episode's last observation on the step it ends, which a next-step env only gives one step
    later (after stepping the finished env once more); build the env with :meth:`make` (or
    ``autoreset_mode=AutoresetMode.SAME_STEP``).
    """

    def __init__(self, env: gym.vector.VectorEnv):
        base = env.unwrapped
        if getattr(base, "autoreset_mode", None) != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VecEnv needs the vector env in SAME_STEP autoreset mode "
                             "(gym.make_vec(..., autoreset_mode=AutoresetMode.SAME_STEP)), got "
                             f"{getattr(base, 'autoreset_mode', None)!r}; or use SB3VecEnv.make")
        self.env = env
        self.render_mode = getattr(env, "render_mode", None)
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions = None
        self._ret = np.zeros(self.num_envs, dtype=np.float64)
        self._len = np.zeros(self.num_envs, dtype=np.int64)
        self._t0 = time.perf_counter()

    @classmethod
    def make(cls, env_id: str, num_envs: int, **kwargs) -> "SB3VecEnv":
        """``gymnasium.make_vec`` of a registered id in SAME_STEP mode, wrapped."""
        env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                           autoreset_mode=AutoresetMode.SAME_STEP, **kwargs)
        return cls(env)

    # ------------------------------------------------------------------ SB3 protocol
    def reset(self) -> np.ndarray:
        seeds = list(self._seeds) if any(s is not None for s in self._seeds) else None
        options = self._options[0] if self._options and self._options[0] else None
        obs, _ = self.env.reset(seed=seeds, options=options)
        self._reset_seeds()
        self._reset_options()
        self._ret[:] = 0.0
        self._len[:] = 0
        return obs.cpu().numpy().copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        a = torch.as_tensor(np.asarray(self._actions, dtype=np.float32),
                            device=self.env.unwrapped.device)
        if a.ndim == 1:
            a = a.reshape(self.num_envs, -1)
        obs, rew, term, trunc, info = self.env.step(a)
        done = (term | trunc).cpu().numpy()
        obs_np = obs.cpu().numpy().copy()
        rew_np = rew.cpu().numpy().astype(np.float32)
        self._ret += rew_np
        self._len += 1
        infos = [{} for _ in range(self.num_envs)]
        if done.any():
            final = info["final_obs"].cpu().numpy()
            time_limit = (trunc & ~term).cpu().numpy()
            reason = info["end_reason"].cpu().numpy()
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = final[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(time_limit[i])
                infos[i]["end_reason"] = self.env.unwrapped.end_labels[int(reason[i])]
                infos[i]["episode"] = {"r": float(self._ret[i]), "l": int(self._len[i]),
                                       "t": round(time.perf_counter() - self._t0, 6)}
            self._ret[done] = 0.0
            self._len[done] = 0
        return obs_np, rew_np, done, infos

    def close(self) -> None:
        self.env.close()

    def _indices(self, indices):
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices=None) -> list:
        """The attribute of the (one) native env, once per requested index."""
        value = getattr(self.env.unwrapped, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        if indices is not None and sorted(self._indices(indices)) != list(range(self.num_envs)):
            raise ValueError("the native env is one object: set_attr applies to all sub-envs")
        setattr(self.env.unwrapped, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        out = getattr(self.env.unwrapped, method_name)(*method_args, **method_kwargs)
        return [out for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list:
        env, wrapped = self.env, False
        while isinstance(env, gym.vector.VectorWrapper):
            wrapped = wrapped or isinstance(env, wrapper_class)
            env = env.env
        return [wrapped for _ in self._indices(indices)]

    def get_images(self):
        frame = self.env.render()
        return [None if frame is None else frame[0]] + [None] * (self.num_envs - 1)
