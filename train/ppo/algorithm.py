"""The PPO algorithm, one iteration in two halves (CleanRL's loop, batched on torch tensors):
:func:`rollout` fills a :class:`RolloutBuffer` with T steps of N envs, and :func:`update` runs
GAE (:func:`compute_gae`) and the clipped-surrogate minibatch steps on it. :mod:`train.ppo`
owns the configuration, the run (logging, checkpoints, ranks) and the command line.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from offroad_env.core.devices import compile as compile_fn

from train.common.agent import Agent
from train.common.distributed import Dist
from train.ppo.teacher import teacher_loss

__all__ = ["RolloutBuffer", "RunningEpisodes", "Passes", "rollout", "update", "compute_gae",
           "bootstrap_truncated", "policy_heads", "ppo_loss"]

#: the order of the statistics :func:`ppo_loss` returns (and :func:`update` averages)
STATS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac")


def bootstrap_truncated(reward, terminated, truncated, final_value, gamma: float):
    """``reward + gamma * V(final obs)`` where an episode was cut by the time limit (truncated
    and not terminated): the return would have continued. Terminated episodes get nothing.
    All ``(N,)``."""
    boot = truncated & ~terminated
    return reward + gamma * torch.where(boot, final_value, torch.zeros_like(final_value))


def compute_gae(rewards, values, dones, next_value, gamma: float, lam: float) -> torch.Tensor:
    """Generalised advantage estimates ``(T, N)``.

    ``rewards, values, dones`` are ``(T, N)``; ``dones[t]`` = 1 when the episode ended at step
    t (the next observation belongs to a new episode, so nothing flows back across it);
    ``next_value`` ``(N,)`` is the value of the observation after the last step.
    ``A_t = delta_t + gamma lam (1 - done_t) A_{t+1}``,
    ``delta_t = r_t + gamma (1 - done_t) V_{t+1} - V_t``.
    """
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(T)):
        nv = next_value if t == T - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nv * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv


def policy_heads(agent: Agent, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The actor's mean ``(B, act_dim)`` and the critic's value ``(B,)`` of normalised
    observations ``z`` ``(B, obs_dim)``: the rollout's forward pass."""
    return agent.mean(z, normalized=True), agent.value(z, normalized=True)


def ppo_loss(agent: Agent, z, act, logp_old, adv, ret, val_old, clip_coef: float,
             clip_vloss: bool, vf_coef: float, ent_coef: float):
    """PPO's clipped-surrogate loss of one minibatch: normalised observations ``z`` ``(B,
    obs_dim)``, raw actions ``act`` ``(B, act_dim)``, and the rollout's log-probabilities,
    advantages (normalised here, per minibatch), returns and values, each ``(B,)``.

    Returns ``(loss, stats)``: the scalar to minimise, and the detached ``(5,)`` statistics
    named by :data:`STATS` (the approximate KL is ``E[(r - 1) - log r]``)."""
    d = agent.distribution(z, normalized=True)
    new_logp = d.log_prob(act).sum(-1)
    log_ratio = new_logp - logp_old
    ratio = log_ratio.exp()
    a = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    v = agent.value(z, normalized=True)
    if clip_vloss:
        v_clip = val_old + (v - val_old).clamp(-clip_coef, clip_coef)
        v_loss = 0.5 * torch.max((v - ret).square(), (v_clip - ret).square()).mean()
    else:
        v_loss = 0.5 * (v - ret).square().mean()
    entropy = d.entropy().sum(-1).mean()
    loss = pg_loss + vf_coef * v_loss - ent_coef * entropy
    with torch.no_grad():
        kl = ((ratio - 1) - log_ratio).mean()
        clip_frac = ((ratio - 1).abs() > clip_coef).float().mean()
        stats = torch.stack([pg_loss, v_loss, entropy, kl, clip_frac]).detach()
    return loss, stats


@dataclasses.dataclass(frozen=True)
class Passes:
    """The agent's two hot passes, eager or ``torch.compile``-d (``PPOConfig.compile_policy``):
    ``heads`` (:func:`policy_heads`, each rollout step) and ``loss`` (:func:`ppo_loss`, each
    minibatch; its backward pass is compiled with it). Compiled, they compute the same
    functions up to float rounding; eager, they are exactly the functions above."""

    heads: object = policy_heads
    loss: object = ppo_loss

    @classmethod
    def make(cls, compiled: bool) -> "Passes":
        if not compiled:
            return cls()
        return cls(compile_fn(policy_heads, dynamic=False),
                   compile_fn(ppo_loss, dynamic=False))


@dataclasses.dataclass
class RolloutBuffer:
    """One rollout of T steps of N envs: observations ``(T, N, D)``, raw (unclipped) actions
    ``(T, N, A)``, their log-probabilities, rewards (bootstrapped at truncations), values and
    done flags ``(T, N)``; with a teacher, its labels ``(T, M, *label_shape)`` of its M rows
    (:mod:`train.ppo.teacher`)."""

    obs: torch.Tensor
    act: torch.Tensor
    logp: torch.Tensor
    rew: torch.Tensor
    val: torch.Tensor
    done: torch.Tensor
    teach: torch.Tensor | None = None

    @classmethod
    def zeros(cls, T: int, N: int, obs_dim: int, act_dim: int, device,
              teacher_rows: int = 0, label_shape: tuple[int, ...] = ()) -> "RolloutBuffer":
        f32 = dict(dtype=torch.float32, device=device)
        return cls(torch.zeros(T, N, obs_dim, **f32), torch.zeros(T, N, act_dim, **f32),
                   *(torch.zeros(T, N, **f32) for _ in range(4)),
                   torch.zeros(T, teacher_rows, *label_shape, **f32) if teacher_rows else None)


@dataclasses.dataclass
class RunningEpisodes:
    """The episodes running in the N envs: return and length so far, and ``counted``: the
    episode started at a true reset (one whose start was spread by ``set_episode_steps`` is
    not a whole episode and stays out of the statistics)."""

    ret: torch.Tensor
    length: torch.Tensor
    counted: torch.Tensor

    @classmethod
    def zeros(cls, N: int, device) -> "RunningEpisodes":
        return cls(torch.zeros(N, dtype=torch.float32, device=device),
                   torch.zeros(N, dtype=torch.int64, device=device),
                   torch.ones(N, dtype=torch.bool, device=device))


def rollout(agent: Agent, env, obs: torch.Tensor, buf: RolloutBuffer, run: RunningEpisodes,
            cfg, term_names: list[str], passes: Passes = Passes(), teacher=None):
    """Fill ``buf`` with ``cfg.num_steps`` steps of ``agent`` in ``env`` from ``obs`` (the
    forward pass ``passes.heads``), and ``buf.teach`` with ``teacher``'s labels where given
    (:class:`train.ppo.teacher.PathTeacher`: its rows' labels of each step's state).

    Returns ``(next obs, ended, term_sums)``: ``ended`` one ``(done, counted, return, length,
    end_reason)`` tuple of ``(N,)`` tensors per step (kept as tensors: no host sync inside the
    rollout); ``term_sums`` the sums over the steps of each reward term's mean."""
    ended = []
    term_sums = torch.zeros(len(term_names), dtype=torch.float32, device=obs.device)
    for t in range(cfg.num_steps):
        with torch.no_grad():
            z = agent.normalize(obs)  # once for the actor and the critic
            mean, value = passes.heads(agent, z)
            d = agent.distribution(None, mean=mean)
            raw = d.sample()
            logp = d.log_prob(raw).sum(-1)
        if teacher is not None:
            buf.teach[t] = teacher.labels(obs)
        next_obs, reward, terminated, truncated, info = env.step(agent.to_env(raw, obs))
        run.ret += reward
        run.length += 1
        done = terminated | truncated
        term_sums += torch.stack([info[f"reward/{n}"].mean() for n in term_names])
        if "final_obs" in info:  # some episode ended (always present off the CPU)
            with torch.no_grad():
                v_final = agent.value(info["final_obs"])
            reward = bootstrap_truncated(reward, terminated, truncated, v_final, cfg.gamma)
        ended.append((done, done & run.counted, run.ret.clone(), run.length.clone(),
                      info["end_reason"].clone()))
        run.counted = run.counted | done
        run.ret = torch.where(done, torch.zeros_like(run.ret), run.ret)
        run.length = torch.where(done, torch.zeros_like(run.length), run.length)
        buf.obs[t], buf.act[t], buf.logp[t], buf.val[t] = obs, raw, logp, value
        buf.rew[t], buf.done[t] = reward, done.to(torch.float32)
        obs = next_obs
    return obs, ended, term_sums


def update(agent: Agent, optimizer, buf: RolloutBuffer, next_obs: torch.Tensor,
           cfg, ddp: Dist, passes: Passes = Passes(), teacher_rows: torch.Tensor | None = None,
           teacher_weight: float = 0.0) -> tuple[dict, int]:
    """The PPO update of one rollout: GAE, ``update_epochs`` passes of clipped-surrogate
    minibatch steps (``passes.loss``; gradients averaged over the ranks; early stop at
    ``target_kl``), then the observation moments of every rank's batch. With a teacher's
    labels (``buf.teach`` of the envs ``teacher_rows``) and ``teacher_weight`` > 0, each step's
    loss adds ``teacher_weight`` times :func:`train.ppo.teacher.teacher_loss` over all the
    labelled samples (``stats["teacher_loss"]``: its mean). Returns ``(summed stats,
    minibatch steps)``; the statistics stay on tensors until the update ends (one host read,
    not one per minibatch)."""
    obs_dim, act_dim = buf.obs.shape[-1], buf.act.shape[-1]
    with torch.no_grad():
        adv = compute_gae(buf.rew, buf.val, buf.done, agent.value(next_obs), cfg.gamma,
                          cfg.gae_lambda)
        ret = adv + buf.val
    b_obs, b_act = buf.obs.reshape(-1, obs_dim), buf.act.reshape(-1, act_dim)
    with torch.no_grad():  # the normalisation is fixed during the update: once, not per pass
        b_z = agent.normalize(b_obs)
    b_logp, b_adv, b_ret, b_val = (x.reshape(-1) for x in (buf.logp, adv, ret, buf.val))
    mb = cfg.batch_size // cfg.num_minibatches
    sums = torch.zeros(len(STATS), dtype=torch.float64, device=b_obs.device)
    teach = buf.teach is not None and teacher_weight > 0
    if teach:
        z_t = b_z.reshape(buf.obs.shape)[:, teacher_rows.to(b_z.device)].reshape(-1, obs_dim)
        y_t = buf.teach.flatten(0, 1)
        t_sum = torch.zeros((), dtype=torch.float64, device=b_obs.device)
    n_updates = 0
    for _ in range(cfg.update_epochs):
        perm = torch.randperm(cfg.batch_size, device=b_obs.device)
        for start in range(0, cfg.batch_size, mb):
            idx = perm[start:start + mb]
            loss, st = passes.loss(agent, b_z[idx], b_act[idx], b_logp[idx], b_adv[idx],
                                   b_ret[idx], b_val[idx], cfg.clip_coef, cfg.clip_vloss,
                                   cfg.vf_coef, cfg.ent_coef)
            if teach:
                t_loss = teacher_loss(agent, z_t, y_t)
                loss = loss + teacher_weight * t_loss
                t_sum += t_loss.detach().double()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            ddp.average_gradients(agent.parameters())  # identical steps on every rank
            nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            optimizer.step()
            sums += st.double()
            n_updates += 1
        if cfg.target_kl is not None and ddp.mean(float(sums[3]) / n_updates) > cfg.target_kl:
            break
    # the normalisation changes only between iterations (rollout and update saw the same);
    # every rank merges the moments of all ranks' batches
    agent.update_obs_moments(*ddp.batch_moments(b_obs))
    stats = dict(zip(STATS, sums.tolist()))
    if teach:
        stats["teacher_loss"] = float(t_sum)
    return stats, n_updates
