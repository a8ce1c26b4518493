"""``OffroadVectorEnv``: a native torch :class:`gymnasium.vector.VectorEnv` over one batched
:class:`~offroad_env.sim.simulator.Simulator`.

Spec sheet
----------
* Observations ``(N, D)`` float32 tensors on the env's device, the terms of
  ``config.obs_terms`` in order (``env.obs_layout`` gives their slices). The table of terms with
  their frames, units and bounds is :mod:`offroad_env.task.observations`; the nav task's default is
  ``z_rel, roll_pitch, yaw_sincos, body_velocity, imu, goal, prev_action`` (18 values), the
  velocity task has ``command`` instead of ``goal``, and ``config.height_scan`` adds
  ``height_scan``.
* Actions ``(N, 2)`` in [-1, 1] (clipped): unicycle ``(v, omega)`` scaled by ``max_speed`` and
  ``max_yaw_rate``; Ackermann ``(v, steering rate)``; skid-steer ``(left, right)`` wheel speed
  targets scaled by ``max_speed / wheel_radius``. NaN/inf raise ValueError naming the envs (or,
  with ``nan_action="zero"``, are zeroed and flagged in ``info["bad_action"]``).
* Reward: weighted sum of the terms in :class:`~offroad_env.task.task.RewardWeights`, each reported
  as ``info["reward/<term>"]``.
* ``terminated``: tip-over (the force-angle margin negative for ``tip_hold_time``, roll or pitch
  past the static-stability limits, or lost support with rigid contact; ``TaskConfig.tip_rule``),
  off the map, a wheel over a hole, goal reached (one end reason per end, and the tip-over
  reward term only where the end is a tip-over). ``truncated``: the time limit
  (``max_episode_steps``), or no progress toward the goal for ``TaskConfig.stuck_time`` (off by
  default; end reason ``stuck``). ``info["end_reason"]`` codes: :class:`~offroad_env.task.task.EndReason`.
* Autoreset: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` (``info["final_obs"]``,
  ``info["final_info"]``) or ``DISABLED`` (reset finished envs with ``options={"reset_mask":
  mask}``).
* Seeding: ``reset(seed=s)`` gives sub-env i the stream of seed ``s + i``, the same as
  ``OffroadEnv.reset(seed=s + i)``.
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from offroad_env.sim.config import SimConfig
from offroad_env.seams import SimulatorEnvBase, reset_mask
from offroad_env.task.task import episode_ends

__all__ = ["OffroadVectorEnv"]


def _masked(info: dict, mask: torch.Tensor) -> dict:
    """``info`` with Gymnasium's ``_key`` masks; each mask is its own copy (a caller that writes
    into one changes neither the env's state nor another entry)."""
    out = {}
    for k, v in info.items():
        out[k] = v
        out[f"_{k}"] = mask.clone()
    return out


class OffroadVectorEnv(SimulatorEnvBase, VectorEnv):
    """N off-road vehicles as one batched torch environment. See the module docstring; wrappers
    and training reach the simulator through the public seams of
    :class:`~offroad_env.seams.SimulatorSeams` (``env.unwrapped.state_view()``, ...).

    Args:
        num_envs: N.
        task: ``"nav"`` or ``"velocity"`` (see :func:`~offroad_env.sim.config.make_config`).
        config: a full :class:`SimConfig` (overrides ``task``'s defaults).
        max_episode_steps: truncate episodes after this many steps (None: never).
        autoreset_mode: an :class:`AutoresetMode` or its value.
        device, dtype: where the tensors live.
        render_mode: ``"rgb_array"`` or None.
        render_view: (keyword) ``"auto"`` (default), ``"map"`` (the whole map) or ``"follow"``
            (a square of ``render_window`` metres centred on sub-env 0's vehicle, default 40;
            ``auto`` follows when the vehicle would be under 8 pixels long on the whole map,
            as on a DEM). Frames label the vehicle's world position.
        compile: ``torch.compile`` the step (a cold compile takes tens of seconds).
        **overrides: :class:`SimConfig` fields.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20,
                "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, task: str = "nav", config: SimConfig | None = None,
                 max_episode_steps: int | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 device="cpu", dtype=torch.float32, render_mode: str | None = None,
                 compile: bool = False, **overrides):
        self._build(task, config, num_envs, max_episode_steps, render_mode, device, dtype,
                    compile, overrides)
        self.num_envs = self.sim.n
        self.device = self.sim.device
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        lo, hi = self.sim.obs_bounds()
        self.single_observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.sim.action_dim,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._done = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        self._end_reasons = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        self.closed = False

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset all sub-environments, or those of ``options["reset_mask"]``.

        ``options["start_pose"]``: optional ``(N, 3)`` world rear-axle ``(x, y, yaw)``
        replacing the random spawn of the reset sub-environments; ``options["goal"]``: optional
        ``(N, 2)`` world goals replacing the drawn ones.

        ``seed``: an int (sub-env i gets ``seed + i``), a list of N ints or Nones, or None
        (continue each sub-env's stream; the first reset draws keys from ``np_random``).
        """
        mask = reset_mask(options, self.num_envs, self.device, check=True)
        self._seed(seed, mask, lambda s: VectorEnv.reset(self, seed=s))
        obs = self.sim.reset(mask, *self._start_options(options))
        self._done = self._done & ~mask
        if self._renderer is not None and bool(mask[0]):
            self._renderer.clear()
            self._renderer.record(0)
        return obs, {}

    # ------------------------------------------------------------------ step
    def _any(self, mask: torch.Tensor) -> bool:
        """Whether a masked reset is needed. On CPU a check is free; on an accelerator we skip
        the host sync and always run the masked reset."""
        return True if self.device.type != "cpu" else bool(mask.any())

    def step(self, actions):
        if self.closed:
            raise RuntimeError("step() on a closed environment")
        mode = self.autoreset_mode
        if mode == AutoresetMode.DISABLED and bool(self._done.any()):
            idx = torch.nonzero(self._done).flatten().tolist()
            raise RuntimeError(f"sub-environment(s) {idx[:20]} finished and autoreset is "
                               "disabled: reset them with options={'reset_mask': mask}")
        pending = self._done if mode == AutoresetMode.NEXT_STEP else None
        obs, reward, ended, info = self.sim.step(actions)
        terminated, truncated, reason = episode_ends(self.sim.state.steps, ended,
                                                     info["end_reason"], self.max_episode_steps,
                                                     self.sim.task.time_out_codes)
        # rows that finished last step (next-step autoreset) keep that episode's reason for
        # the reset below
        self._end_reasons = reason if pending is None else torch.where(pending,
                                                                       self._end_reasons, reason)
        done = terminated | truncated
        ones = torch.ones_like(done)
        out_info = _masked({k: v for k, v in info.items() if k.startswith("reward/")}, ones)
        out_info.update(_masked({"end_reason": reason}, done))
        out_info.update(_masked({"bad_action": info["bad_action"]}, ones))
        if pending is not None:
            if self._any(pending):
                obs = self.sim.reset(pending, obs=obs)
                zero = torch.zeros_like(reward)
                reward = torch.where(pending, zero, reward)
                terminated = terminated & ~pending
                truncated = truncated & ~pending
                done = terminated | truncated
                out_info["_end_reason"] = done.clone()
                for k in list(out_info):
                    if k.startswith("_reward/") or k == "_bad_action":
                        out_info[k] = ~pending
            self._done = done
        elif mode == AutoresetMode.SAME_STEP:
            if self._any(done):
                final_obs = obs.clone()
                final_info = {k: v for k, v in out_info.items()}
                obs = self.sim.reset(done, obs=obs)
                out_info["final_obs"] = final_obs
                out_info["_final_obs"] = done.clone()
                out_info["final_info"] = final_info
                out_info["_final_info"] = done.clone()
        else:
            self._done = done
        if self._renderer is not None:
            self._renderer.record(0)
            if bool(done[0]) and mode == AutoresetMode.SAME_STEP:
                self._renderer.clear()
        return obs, reward, terminated, truncated, out_info

    @property
    def end_reasons(self) -> torch.Tensor:
        """``(N,)`` int64 :class:`~offroad_env.task.task.EndReason` codes of the last step, time
        limit included (0 where the episode went on, and before the first step), set before
        any autoreset of that step: a reset hook reads the ending episodes' reasons here."""
        return self._end_reasons

    # ------------------------------------------------------------------ render, close
    def render(self):
        """A tuple with the ``rgb_array`` frame of sub-env 0 (None without a render mode)."""
        if self.render_mode is None:
            return None
        return (self._renderer.frame(0),)

    def close_extras(self, **kwargs):
        self.closed = True
