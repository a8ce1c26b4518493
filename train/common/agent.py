"""The PPO agent: a Gaussian actor and a critic, each a small MLP, with running observation
normalisation inside the module (so a checkpoint carries it), and the map from the actor's
actions to the env's (:data:`ACTION_MAPS`)."""

from __future__ import annotations

import math

import torch
from torch import nn

from train.planners.baselines import steer_at_goal

__all__ = ["Agent", "ACTION_MAPS", "RESIDUAL_GAIN", "goal_column"]

#: how the actor's actions become the env's: ``"direct"`` (the same, clipped to [-1, 1]) or
#: ``"twist"`` for a skid-steered vehicle, whose env action is the wheel speeds ``(left,
#: right)``: the actor outputs a speed and a turn ``(v, w)`` (each clipped to [-1, 1]) around
#: means bounded by ``tanh`` in (-1, 1), and the env gets ``(v - w, v + w)`` clipped, as the
#: baselines drive (``train.planners.baselines.drive``). Both guard against one failure, measured on
#: OffroadBench v1: a policy that learns "full speed" pushes its means past 1, where the clip
#: hides any difference between nearby means, and it stops learning what needs less than full
#: output. With wheel speeds as outputs it never learned to steer (16 M steps: straight ahead
#: or back); with an unbounded speed mean (about 3.5) it never learned to slow down, and
#: circled its goal (60 % of episodes ended stuck after 9.6 M steps). A bounded mean keeps
#: half the samples under full speed, so the signal stays. ``"residual"`` (skid steering, a
#: ``goal`` observation term): the actor outputs a correction ``(dv, dw)`` to the straight-line
#: controller's speed and turn (``train.planners.baselines.steer_at_goal``, read from the raw
#: observation's goal), with means bounded by ``2 tanh`` (any twist in reach), and the env gets
#: the wheel speeds of the sum, each part clipped to [-1, 1]. A fresh agent (means near 0)
#: drives the straight line, so learning starts from its 80 % on OffroadBench v2 instead of
#: from standing still (residual policy learning: Silver et al. 2018, Johannink et al. 2019).
ACTION_MAPS = ("direct", "twist", "residual")
#: the straight-line controller's turn gain under the ``"residual"`` map (the heuristic's)
RESIDUAL_GAIN = 2.0


def goal_column(layout) -> int:
    """The first column of the ``goal`` term in an observation layout ``[[term, start, stop],
    ...]``; ValueError if it has none (the ``"residual"`` map steers at the goal)."""
    for name, start, _ in layout:
        if name == "goal":
            return int(start)
    raise ValueError(f"the 'residual' action map needs the 'goal' observation term; the "
                     f"layout has {[t[0] for t in layout]}")


def _layer(n_in: int, n_out: int, gain: float = math.sqrt(2)) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def _mlp(n_in: int, hidden: tuple[int, ...], n_out: int, out_gain: float) -> nn.Sequential:
    layers, d = [], n_in
    for h in hidden:
        layers += [_layer(d, h), nn.Tanh()]
        d = h
    layers.append(_layer(d, n_out, out_gain))
    return nn.Sequential(*layers)


class Agent(nn.Module):
    """Gaussian actor and value critic over normalised observations.

    The running observation mean and variance are buffers of the module, so a checkpoint carries
    them. Shapes: observations ``(B, obs_dim)``, actions ``(B, act_dim)``.

    ``obs_dim`` is the actor's input: the env's observation, then the columns of the actor's
    own inputs (``actor_inputs``, :data:`train.common.inputs.ACTOR_INPUTS`, which
    :func:`train.common.inputs.policy_of` computes from the env). With ``critic_dim`` > 0 the
    critic is *asymmetric*: it also reads ``critic_dim`` privileged columns after those (``(B,
    obs_dim + critic_dim)``, :class:`train.common.inputs.CriticInputs`), which the actor never
    sees: every actor method takes either width and reads the first ``obs_dim`` columns. The
    running moments cover all the columns.
    """

    def __init__(self, obs_dim: int, act_dim: int, hidden=(128, 128), init_log_std=-0.5,
                 action_map: str = "direct", goal_col: int | None = None, critic_dim: int = 0,
                 actor_inputs: str = "none"):
        super().__init__()
        #: the actor's own inputs after the env's observation (their name)
        self.actor_inputs = actor_inputs
        if int(critic_dim) != critic_dim or critic_dim < 0:
            raise ValueError(f"critic_dim must be an int >= 0, got {critic_dim!r}")
        self.obs_dim, self.critic_dim = int(obs_dim), int(critic_dim)
        if action_map not in ACTION_MAPS or (action_map != "direct" and act_dim != 2):
            raise ValueError(f"action_map must be one of {ACTION_MAPS} ('twist' and 'residual' "
                             f"for 2 actions), got {action_map!r} with {act_dim} actions")
        if action_map == "residual" and (goal_col is None or not 0 <= goal_col <= obs_dim - 2):
            raise ValueError(f"the 'residual' action map needs goal_col, the goal's first "
                             f"observation column in [0, {obs_dim - 2}], got {goal_col!r}")
        self.action_map = action_map
        #: the raw observation's goal (x, y) columns start here (the "residual" map's input)
        self.goal_col = goal_col if action_map == "residual" else None
        self.critic = _mlp(obs_dim + critic_dim, tuple(hidden), 1, 1.0)
        self.actor_mean = _mlp(obs_dim, tuple(hidden), act_dim, 0.01)
        self.actor_log_std = nn.Parameter(torch.full((act_dim,), float(init_log_std)))
        self.register_buffer("obs_mean", torch.zeros(obs_dim + critic_dim))
        self.register_buffer("obs_var", torch.ones(obs_dim + critic_dim))
        self.register_buffer("obs_count", torch.tensor(1e-4))

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        """Normalised observations: ``(B, obs_dim)``, or ``(B, obs_dim + critic_dim)`` with the
        critic's columns (each width with its own columns' moments)."""
        d = obs.shape[-1]
        if d not in (self.obs_dim, self.obs_dim + self.critic_dim):
            raise ValueError(f"observations of {d} columns; this agent takes {self.obs_dim}"
                             + (f" or {self.obs_dim + self.critic_dim} (with the critic's)"
                                if self.critic_dim else ""))
        mean, var = self.obs_mean[:d], self.obs_var[:d]
        return ((obs - mean) / torch.sqrt(var + 1e-8)).clamp(-10.0, 10.0)

    @torch.no_grad()
    def update_obs_stats(self, obs: torch.Tensor) -> None:
        """Merge a batch ``(B, obs_dim)`` into the running mean/variance (parallel algorithm)."""
        obs = obs.reshape(-1, obs.shape[-1]).to(self.obs_mean.dtype)
        self.update_obs_moments(obs.mean(0), obs.var(0, unbiased=False), obs.shape[0])

    def update_obs_moments(self, mean: torch.Tensor, var: torch.Tensor, n: int) -> None:
        """Merge a batch given by its moments (``mean``, population ``var``, ``n`` rows): the
        distributed trainer merges every rank's batch this way."""
        mean = mean.to(self.obs_mean.dtype)
        var = var.to(self.obs_mean.dtype)
        total = self.obs_count + n
        delta = mean - self.obs_mean
        self.obs_mean += delta * n / total
        m2 = self.obs_var * self.obs_count + var * n + delta.square() * self.obs_count * n / total
        self.obs_var.copy_(m2 / total)
        self.obs_count.copy_(total)

    def value(self, obs: torch.Tensor, normalized: bool = False) -> torch.Tensor:
        """``(B,)`` values of observations ``(B, obs_dim + critic_dim)`` (passed through
        :meth:`normalize` already when ``normalized``)."""
        if obs.shape[-1] != self.obs_dim + self.critic_dim:
            raise ValueError(f"the critic reads {self.obs_dim + self.critic_dim} columns (the "
                             f"actor's {self.obs_dim} and {self.critic_dim} privileged), "
                             f"got {obs.shape[-1]}")
        return self.critic(obs if normalized else self.normalize(obs)).squeeze(-1)

    def mean(self, obs: torch.Tensor, normalized: bool = False) -> torch.Tensor:
        """The actor's mean ``(B, act_dim)`` of observations ``(B, obs_dim)`` (already
        normalised with ``normalized``)."""
        z = obs if normalized else self.normalize(obs)
        mean = self.actor_mean(z[..., :self.obs_dim])
        if self.action_map == "twist":
            mean = torch.tanh(mean)  # bounded (ACTION_MAPS)
        elif self.action_map == "residual":
            mean = 2.0 * torch.tanh(mean)
        return mean

    def distribution(self, obs: torch.Tensor, normalized: bool = False,
                     mean: torch.Tensor | None = None) -> torch.distributions.Normal:
        """The action distribution of observations ``(B, obs_dim)`` (already normalised with
        ``normalized``), or of the actor's ``mean`` already computed (:meth:`mean`)."""
        if mean is None:
            mean = self.mean(obs, normalized)
        return torch.distributions.Normal(mean, self.actor_log_std.exp().expand_as(mean))

    def to_env(self, a: torch.Tensor, obs: torch.Tensor | None = None) -> torch.Tensor:
        """The env's actions ``(B, act_dim)`` in [-1, 1] of the actor's ``a`` (its samples or
        means, :data:`ACTION_MAPS`); the ``"residual"`` map also needs the raw observations
        ``obs`` ``(B, obs_dim)`` the actions answer."""
        if self.action_map == "residual":
            if obs is None:
                raise ValueError("the 'residual' action map needs the observations: "
                                 "to_env(a, obs)")
            g = self.goal_col
            v0, w0, _ = steer_at_goal(obs[:, g:g + 2], RESIDUAL_GAIN)
            a = torch.stack(((v0 + a[:, 0]).clamp(-1.0, 1.0),
                             (w0 + a[:, 1]).clamp(-1.0, 1.0)), -1)
        else:
            a = a.clamp(-1.0, 1.0)
        if self.action_map != "direct":
            v, w = a.unbind(-1)
            a = torch.stack((v - w, v + w), -1).clamp(-1.0, 1.0)
        return a

    @torch.no_grad()
    def act(self, obs: torch.Tensor, deterministic: bool = False,
            generator: torch.Generator | None = None) -> torch.Tensor:
        """The env's actions in [-1, 1] for raw observations ``(B, obs_dim)``: the mean, or a
        sample (from ``generator`` when given, else torch's global one)."""
        d = self.distribution(obs)
        if deterministic:
            return self.to_env(d.mean, obs)
        if generator is None:
            return self.to_env(d.sample(), obs)
        noise = torch.randn(d.mean.shape, generator=generator, device=d.mean.device)
        return self.to_env(d.mean + d.stddev * noise, obs)
