"""Batched look-ahead: step H actions from a snapshot of M rows without touching the live
environments (the simulator as a model for planners such as MPPI).

:class:`Lookahead` keeps a second simulator of M rows on the same config, sharing the live
env's height maps (the same tensors, not a copy). A call restores the snapshot into it and steps
the ``(H, M, A)`` actions: no autoreset; a row that ended stays ended (its reward is 0 after the
step it ended on, its end reason, ``terminated`` and ``truncated`` are kept, its observation is
frozen at the final one, and its state is put back to the one it ended in after each later step:
it is not simulated past its end). The second simulator is compiled like the live step where
the env is.

Rows at the positions they hold in the live env (M = N) step bit for bit as the live step does,
eagerly: the same kernels on the same shapes. A row cloned to other positions (``Snapshot.repeat``)
may round differently in the last bit at a vector loop's tail, and a compiled graph may fuse
differently; the tests bound both.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import torch

from offroad_env.core.devices import batch_threaded
from offroad_env.core.frames import to_world
from offroad_env.task.task import episode_ends
from offroad_env.sim.simulator import Simulator
from offroad_env.snapshot import Snapshot, check_fits, restore_sim, sim_tensors_view
from offroad_env.state_view import StateView, view_of

__all__ = ["Lookahead", "Rollout"]


class Rollout(NamedTuple):
    """What a look-ahead returns, ``(H, M, ...)``: ``obs`` ``(H, M, D)``, ``reward``,
    ``terminated``, ``truncated`` (bool), ``end_reason`` (int64
    :class:`~offroad_env.task.task.EndReason` codes, 0 while running), ``position`` ``(H, M,
    2)`` the rear axle's world ``(x, y)`` [m] and ``base_position`` ``(H, M, 2)`` base_link's
    (float64; frozen once a row ends)."""

    obs: torch.Tensor
    reward: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    end_reason: torch.Tensor
    position: torch.Tensor
    base_position: torch.Tensor | None = None


class Lookahead:
    """Look-ahead over M rows of the simulator ``sim`` (a live env's ``env.unwrapped.sim``),
    judged with the time limit ``max_episode_steps`` (None: none)."""

    def __init__(self, sim: Simulator, rows: int, max_episode_steps: int | None = None):
        self.live = sim
        self.rows = int(rows)
        self.max_episode_steps = max_episode_steps
        cfg = replace(sim.cfg, heightmap=sim.world_maps)
        self.sim = Simulator(cfg, self.rows, device=sim.device, dtype=sim.dtype,
                             compile=sim.compiled)
        # the live env's maps, shared
        self.sim.world_maps, self.sim.maps = sim.world_maps, sim.maps
        if getattr(sim, "_maps_digest", None) is not None:
            self.sim._maps_digest = sim._maps_digest
        self.sim.reset(torch.ones(self.rows, dtype=torch.bool, device=sim.device))

    def state_view(self) -> StateView:
        """The look-ahead rows' current state (a
        :class:`~offroad_env.state_view.StateView`, read-only)."""
        return view_of(self.sim, self.sim.state.contact)

    @batch_threaded(lambda self: (self.rows, self.sim.device, self.sim.compiled))
    def __call__(self, snapshot: Snapshot, actions, horizon: int | None = None) -> Rollout:
        """Step ``actions`` from ``snapshot`` (M rows, taken from the live env:
        ``env.get_state()``, selected or repeated); returns the :class:`Rollout`.

        ``actions``: an ``(H, M, A)`` tensor (open loop), or a policy ``act(obs (M, D)) ->
        (M, A)`` called on each step's observations (closed loop, from the snapshot's own:
        :meth:`Simulator.observe` after the restore) for at most ``horizon`` steps, stopping
        early once every row has ended (the rollout is then shorter than ``horizon``). A
        privileged policy (one with ``reads_state = True``, such as the map planner's) is called
        ``act(obs, view)`` with the look-ahead rows'
        :class:`~offroad_env.state_view.StateView` (their pose and goal). A CPU look-ahead of
        few rows runs on one thread (:class:`~offroad_env.core.devices.batch_threads`)."""
        sim = self.sim
        if callable(actions):
            if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1:
                raise ValueError(f"a closed-loop look-ahead needs horizon an int >= 1, got "
                                 f"{horizon!r}")
            policy, H = actions, horizon
        else:
            if horizon is not None:
                raise ValueError("horizon is for a policy; an action tensor's is its first "
                                 "dimension")
            actions = torch.as_tensor(actions, device=sim.device)
            if actions.dim() != 3 or actions.shape[1:] != (self.rows, sim.action_dim):
                raise ValueError(f"look-ahead actions must be (H, {self.rows}, "
                                 f"{sim.action_dim}), got {tuple(actions.shape)}")
            _check_floats(actions, "look-ahead actions", "(step, row)")
            policy, H = None, actions.shape[0]
        expected = {k: v for k, v in sim_tensors_view(sim).items()}
        snap = Snapshot({k: v for k, v in snapshot.tensors.items()
                         if not k.startswith("env/")}, snapshot.meta)
        check_fits(sim, snap, expected)
        restore_sim(sim, snap)
        done = snapshot.tensors.get("env/done")
        done = (torch.zeros(self.rows, dtype=torch.bool, device=sim.device) if done is None
                else done.to(sim.device).clone())
        obs_l, rew_l, term_l, trunc_l, why_l, pos_l, base_l = [], [], [], [], [], [], []
        term = torch.zeros_like(done)
        trunc = torch.zeros_like(done)
        why = torch.zeros(self.rows, dtype=torch.int64, device=sim.device)
        last = sim.observe() if policy is not None else None
        reads = bool(getattr(policy, "reads_state", False))
        for h in range(H):
            if policy is None:
                a = actions[h]
            else:
                a = torch.as_tensor(policy(last, self.state_view()) if reads else policy(last),
                                    device=sim.device)
                if a.shape != (self.rows, sim.action_dim) or not a.dtype.is_floating_point:
                    raise ValueError(f"the look-ahead's policy must return ({self.rows}, "
                                     f"{sim.action_dim}) floats, got {a.dtype} "
                                     f"{tuple(a.shape)} at step {h}")
                _check_floats(a.unsqueeze(0), f"the look-ahead policy's actions at step {h}",
                              "(0, row)")
            frozen = bool(done.any())
            before = sim.state.copy() if frozen else None  # shallow: steps replace tensors
            obs, reward, ended, info = sim.step(a.to(sim.dtype))
            if frozen:  # an ended row stays as it ended: it is not simulated on (a tipped
                sim.state.restore(done, before)  # body stepped on rolls over into NaN)
            t, tr, reason = episode_ends(sim.state.steps, ended, info["end_reason"],
                                         self.max_episode_steps, sim.task.time_out_codes)
            xy = to_world(sim.origin, torch.stack((sim.state.x, sim.state.y), 1))
            bxy = to_world(sim.origin, sim.state.contact.base_position)[:, :2]
            if h:
                obs = torch.where(done.unsqueeze(1), last, obs)
                xy = torch.where(done.unsqueeze(1), pos_l[-1], xy)
                bxy = torch.where(done.unsqueeze(1), base_l[-1], bxy)
            reward = torch.where(done, torch.zeros_like(reward), reward)
            term = torch.where(done, term, t)
            trunc = torch.where(done, trunc, tr)
            why = torch.where(done, why, reason)
            done = done | t | tr
            last = obs
            obs_l.append(obs)
            rew_l.append(reward)
            term_l.append(term)
            trunc_l.append(trunc)
            why_l.append(why)
            pos_l.append(xy)
            base_l.append(bxy)
            if policy is not None and bool(done.all()):
                break
        return Rollout(torch.stack(obs_l), torch.stack(rew_l), torch.stack(term_l),
                       torch.stack(trunc_l), torch.stack(why_l), torch.stack(pos_l),
                       torch.stack(base_l))


def _check_floats(a: torch.Tensor, what: str, where: str) -> None:
    if not a.dtype.is_floating_point:
        raise ValueError(f"{what} must be floats, got {a.dtype}")
    if not bool(torch.isfinite(a).all()):
        bad = torch.nonzero(~torch.isfinite(a).all(-1))[:5].tolist()
        raise ValueError(f"{what} hold NaN or inf at {where} {bad}")
