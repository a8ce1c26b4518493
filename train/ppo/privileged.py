"""Privileged inputs for an asymmetric critic (``--critic-inputs privileged``).

The critic is used only during training, so it may read what no robot carries (asymmetric
actor-critic: Pinto et al. 2018; the privileged critics of legged locomotion, Rudin et al.
2022). A better value estimate gives the actor less noisy advantages; the actor itself still acts
from the observation alone (:class:`train.common.agent.Agent` with ``critic_dim``), so a trained
policy runs on any env with the observation it was trained on.

:class:`CriticInputs` reads each env's true state (``env.unwrapped.state_view()``), its map
(``env.unwrapped.terrain``) and, on a level stack (``terrain.LevelsConfig``, as
``OffroadTraverse-v1``'s and the suites'), which family and level the map is; it returns
``(N, dim)`` float32 columns, in this order:

==============  =======  ==========================================================
part            columns  meaning (unit)
==============  =======  ==========================================================
family          F        one-hot terrain family of the env's map (level stacks only)
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

The columns are cheap on purpose (no scan: a 117-point wide scan cost a third of an eager
step at 4096 envs); they tell the critic how hard the episode's terrain is, which the
curriculum's mix of levels otherwise leaves as noise in its returns.

:class:`WithCriticInputs` appends them to a vector env's observations (and to
``info["final_obs"]``: there the columns of a finished episode's last state are those of the
state one step before it, since the env resets before the step returns).
"""

from __future__ import annotations

import gymnasium as gym
import torch

from terrain import LevelsConfig

__all__ = ["CriticInputs", "WithCriticInputs", "CRITIC_INPUTS", "CORRIDOR_POINTS"]

#: the values of ``PPOConfig.critic_inputs``
CRITIC_INPUTS = ("none", "privileged")
#: points on the straight line to the goal
CORRIDOR_POINTS = 10
#: the corridor's heights are clipped to +-this [m] (holes read -this)
CORRIDOR_CLIP = 2.0


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


class WithCriticInputs(gym.vector.VectorWrapper):
    """A vector env whose observations carry :class:`CriticInputs`' columns after the env's
    own: ``(N, obs_dim + inputs.dim)`` (the observation space is left as the env's: these
    columns are for the trainer's critic, not a policy's input)."""

    def __init__(self, env):
        super().__init__(env)
        self.inputs = CriticInputs(env)
        self._last = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._last = self.inputs()
        return torch.cat((obs, self._last), dim=1), info

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        now = self.inputs()
        if "final_obs" in info:
            done = (terminated | truncated).unsqueeze(1)
            info = dict(info)
            info["final_obs"] = torch.cat((info["final_obs"], torch.where(done, self._last, now)),
                                          dim=1)
        self._last = now
        return torch.cat((obs, now), dim=1), reward, terminated, truncated, info
