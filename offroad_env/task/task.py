"""The task: what the vehicle is asked to do and how a step is judged.

:class:`Task` is built from the config and owns the goal logic, the tip rules (the static roll
and pitch limits, lost support, the force-angle margin held negative) with their hold counter,
the reward terms (:mod:`offroad_env.task.rewards`) and the end reason. One call per step,
:meth:`Task.step`, turns the model's step into ``(reward terms, reward, end reasons)``.

Terminations are ``(N,)`` bool and kept apart from truncation (the time limit, and being
stuck: no progress toward the goal for ``TaskConfig.stuck_time``); :class:`EndReason` names why
an episode ended.
"""

from __future__ import annotations

import enum

import torch

from offroad_env.physics.models import Field
from offroad_env.physics.stability import (body_acceleration, contact_margin, edge_table,
                                filter_acceleration, static_tip_limits)
from offroad_env.task.terms import FIRST_USER_CODE, check_kept, check_term_output, kept_before
from offroad_env.task.rewards import (REWARD_TERMS, STABILITY_REF, RewardWeights, StepContext, builtin_rewards,
                      reward_terms, weighted_reward)

__all__ = ["Task", "TIP_RULES", "EndReason", "REASONS", "UserEnd", "end_labels", "end_code",
           "contain_divergence", "end_reason", "tipped_over",
           "static_tip_limits", "RewardWeights", "REWARD_TERMS", "reward_terms",
           "weighted_reward", "STABILITY_REF", "StepContext", "TASK_FIELDS", "episode_ends"]

#: how tip-over is judged: the static roll/pitch limits (and lost support), or those and the
#: force-angle margin held negative for ``TaskConfig.tip_hold_time``
TIP_RULES = ("limits", "force_angle")


class EndReason(enum.IntEnum):
    """Why an episode ended, as reported in ``info["end_reason"]`` (the vector env: these codes
    as an int64 tensor; the single env: the member, an ``int``; ``label`` is its name)."""

    NONE = 0
    TIP_OVER = 1
    OFF_MAP = 2
    HOLE = 3
    GOAL_REACHED = 4
    TIME_LIMIT = 5
    #: no progress toward the goal for ``TaskConfig.stuck_time`` (a truncation: the state is not
    #: terminal, the vehicle might still free itself)
    STUCK = 6
    #: the step's numbers stopped being finite (an observation, the reward or a reward term
    #: of the row is NaN or infinite: an integration blew up). A truncation: the episode is
    #: cut, its last observation and reward zeroed, its count reported, the row reset as any
    #: other (a guard, not a physics outcome; :func:`contain_divergence`)
    DIVERGED = 7

    @property
    def label(self) -> str:
        """The name as reported in logs, tables and SB3 infos, e.g. ``"tip_over"``."""
        return self.name.lower()


#: ``{code: label}`` of every :class:`EndReason`
REASONS = {int(r): r.label for r in EndReason}


class UserEnd(int):
    """The end-reason code of a user termination term (:mod:`offroad_env.task.terms`), an ``int``
    with its ``label`` (the term's name), as the single env reports it."""

    def __new__(cls, code: int, label: str):
        obj = super().__new__(cls, code)
        obj.label = label
        return obj

    def __repr__(self):
        return f"UserEnd({int(self)}, {self.label!r})"


def end_labels(cfg) -> dict[int, str]:
    """``{code: label}`` of a config's end reasons: the built-in :class:`EndReason` codes, then
    its termination terms' (``SimConfig.terminations``) from ``FIRST_USER_CODE`` on, in order."""
    out = dict(REASONS)
    for i, name in enumerate(getattr(cfg, "terminations", {})):
        out[FIRST_USER_CODE + i] = name
    return out


def end_code(code: int, labels: dict[int, str]):
    """The code as the single env reports it: an :class:`EndReason` member, or a
    :class:`UserEnd` of a user termination."""
    code = int(code)
    return EndReason(code) if code in REASONS else UserEnd(code, labels[code])


def contain_divergence(obs: torch.Tensor, reward: torch.Tensor, reason: torch.Tensor,
                       terms: dict[str, torch.Tensor]):
    """``(obs, reward, reason, terms)`` with every row whose observation ``(N, D)``, reward
    ``(N,)`` or reward terms are not all finite ended as :attr:`EndReason.DIVERGED` and its
    observation, reward and terms zeroed, so that nothing non-finite reaches a learner; other
    rows unchanged. Compiled or off the CPU, no host sync (the step stays one graph)."""
    names = list(terms)
    stacked = torch.stack([terms[k] for k in names], 1)  # (N, T): a few operators, not 2 T
    bad = ~(torch.isfinite(obs).all(1) & torch.isfinite(reward)
            & torch.isfinite(stacked).all(1))
    if obs.device.type == "cpu" and not torch.compiler.is_compiling() and not bool(bad.any()):
        return obs, reward, reason, terms  # eager on the CPU a check is free: nothing to mend
    zero = torch.zeros((), dtype=obs.dtype, device=obs.device)
    reason = torch.where(bad, torch.full_like(reason, int(EndReason.DIVERGED)), reason)
    stacked = torch.where(bad.unsqueeze(1), zero.to(stacked.dtype), stacked)
    return (torch.where(bad.unsqueeze(1), zero, obs), torch.where(bad, zero.to(reward.dtype),
                                                                  reward), reason,
            dict(zip(names, stacked.unbind(1))))


def tipped_over(roll, pitch, roll_limit, pitch_limit, lost=None) -> torch.Tensor:
    """True where ``|roll|`` or ``|pitch|`` passes its limit, or (``lost``, ``(N,)`` bool)
    static support is lost."""
    out = (roll.abs() > roll_limit) | (pitch.abs() > pitch_limit)
    if lost is not None:
        out = out | lost
    return out


def end_reason(goal: torch.Tensor, hole: torch.Tensor, off_map: torch.Tensor,
               tipped: torch.Tensor, stuck: torch.Tensor | None = None) -> torch.Tensor:
    """``(N,)`` int64 :class:`EndReason` codes of the ``(N,)`` bool end conditions. Where
    several hold, the cause wins over its consequences: a wheel over a hole over a wheel off the
    map over tip-over (a hole or the map's edge tilts the body) over the goal over being stuck
    (None: never)."""
    reason = torch.zeros(goal.shape, dtype=torch.int64, device=goal.device)
    if stuck is not None:
        reason = torch.where(stuck, torch.full_like(reason, int(EndReason.STUCK)), reason)
    for code, cond in ((EndReason.GOAL_REACHED, goal), (EndReason.TIP_OVER, tipped),
                       (EndReason.OFF_MAP, off_map), (EndReason.HOLE, hole)):
        reason = torch.where(cond, torch.full_like(reason, int(code)), reason)
    return reason


#: the friction demand is stored up to this share of the cone (airborne: no normal force, an
#: infinite demand)
TRACTION_CAP = 10.0

#: the task's own state fields: ``prev_distance`` (base_link to goal after the last step [m]),
#: ``accel_b`` ``(N, 3)`` (the low-passed body acceleration the force-angle measure reads
#: [m/s^2]), ``margin`` (the force-angle margin after the last step [rad]; 0 where not
#: computed), ``unstable_steps`` (consecutive steps of negative margin), ``best_distance``
#: (the least distance to the goal that counted as progress [m]) and ``stall_steps`` (steps
#: since then; with ``TaskConfig.stuck_time``)
TASK_FIELDS = {"prev_distance": Field(), "accel_b": Field((3,)), "margin": Field(),
               "traction": Field(), "unstable_steps": Field(kind="int64"),
               "best_distance": Field(), "stall_steps": Field(kind="int64")}


class Task:
    """The task of a :class:`~offroad_env.sim.config.SimConfig` (``cfg.task``) for a vehicle model.

    Attributes: ``nav`` (a navigation task: goals, progress); ``needs_margin`` (the step
    computes the force-angle margin: for the tip rule, an observation or a reward term);
    ``tip_hold_steps`` (consecutive steps of negative margin that tip, >= 1);
    ``roll_limit``/``pitch_limit`` (static tip limits [rad]: floats, or ``(N,)`` with
    per-environment mass properties, :meth:`set_vehicle`); ``fields`` (its state fields).
    """

    fields = TASK_FIELDS

    def __init__(self, cfg, vehicle, model, device):
        t = cfg.task
        self.cfg, self.config, self.model = cfg, t, model
        self.nav = t.kind == "nav"
        self.needs_margin = (t.tip_rule == "force_angle" or "stability" in cfg.terms
                             or "traction" in cfg.terms or t.weights.stability != 0
                             or t.weights.traction != 0)
        #: the step's placement must carry per-wheel loads for the margin (a rigid rest's
        #: support polygon is its loaded wheels; four-wheel ground following needs none)
        self.needs_loads = self.needs_margin and model.support_from_loads
        self.tip_hold_steps = max(1, int(round(t.tip_hold_time / cfg.dt)))
        #: steps without progress that end an episode as stuck (None: never)
        self.stuck_steps = (None if t.stuck_time is None
                            else max(1, int(round(t.stuck_time / cfg.dt))))
        self._edges = edge_table(vehicle, device)
        self.set_vehicle(vehicle)
        #: the config's own reward and termination terms (:mod:`offroad_env.task.terms`), the end
        #: codes of its terminations and which of them truncate
        self.rewards = {**builtin_rewards(t.weights), **cfg.rewards}  # built-ins first
        self.user_rewards, self.user_ends = cfg.rewards, cfg.terminations
        self.end_labels = end_labels(cfg)
        self.time_out_codes = (int(EndReason.STUCK), int(EndReason.DIVERGED)) + tuple(
            FIRST_USER_CODE + i for i, t in enumerate(cfg.terminations.values()) if t.time_out)

    def set_vehicle(self, vehicle) -> None:
        """Judge ``vehicle`` from now on (a preset, or per-environment mass properties)."""
        self.vehicle = vehicle
        self.roll_limit, self.pitch_limit = static_tip_limits(vehicle)

    def friction(self, params, idx: torch.Tensor | None = None):
        """The ground's friction coefficient the tip rule limits forces by: the
        per-environment ``friction`` parameter (``(M,)`` rows ``idx``), else the config's
        ground (the model's ``ground_mu``)."""
        if params is None:
            return self.model.ground_mu
        return params["friction"] if idx is None else params["friction"][idx]

    def margin(self, contact, accel_b: torch.Tensor | None, maps, map_index: torch.Tensor,
               params=None, idx: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """``((M,) force-angle margin [rad], (M,) friction demand)`` of a placement of the rows
        ``idx`` (None: all N) under the body-frame acceleration ``accel_b`` ``(M, 3)`` (None:
        at rest): contact points along the terrain normals of ``maps`` under the wheels
        (``map_index`` ``(M,)``), forces limited by the ground's friction
        (:func:`~offroad_env.physics.stability.contact_margin`)."""
        return contact_margin(contact, self.vehicle, self.model.support_from_loads, accel_b,
                              self.cfg.gravity, self._edges, idx, maps, map_index,
                              self.friction(params, idx))

    def unrestful(self, contact, idx: torch.Tensor | None, slides: bool = True) -> torch.Tensor:
        """``(M,)`` bool: placed rows (``idx``, or all) are no stable rest for a spawn: past
        the static tip limits, or not at rest by the model's own judgement (``slides`` False:
        only where it tips or does not settle, not where friction alone cannot hold it)."""
        def rows(v):
            return v if idx is None or not isinstance(v, torch.Tensor) else v[idx]
        bad = tipped_over(contact.roll, contact.pitch, rows(self.roll_limit),
                          rows(self.pitch_limit))
        restless = (self.model.unrestful(contact) if slides
                    else self.model.unstable(contact))
        return bad if restless is None else bad | restless

    def start(self, state, contact, maps, params, idx: torch.Tensor | None
              ) -> dict[str, torch.Tensor]:
        """The task's fields of episodes starting at ``contact`` (rows ``idx`` of ``state``,
        None: all) on ``maps``, to put into the state."""
        goal = state.goal_w if idx is None else state.goal_w[idx]
        rows = {}
        if self.needs_margin:
            mi = state.map_index if idx is None else state.map_index[idx]
            rows["margin"], demand = self.margin(contact, None, maps, mi, params, idx)
            rows["traction"] = demand.clamp(max=TRACTION_CAP)
        rows["prev_distance"] = torch.linalg.vector_norm(goal - contact.base_position[:, :2],
                                                         dim=1)
        rows["best_distance"] = rows["prev_distance"]
        rows["stall_steps"] = torch.zeros_like(rows["prev_distance"], dtype=torch.int64)
        return rows

    def step(self, state, motion, action: torch.Tensor, maps, params=None
             ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
        """Judge a step: ``(terms {name: (N,)}, reward (N,), end reason (N,) int64)``.

        ``state``: after the model's step and the sensors (its ``vel_b`` and ``prev_action``
        still the last step's); ``motion``: the model's
        :class:`~offroad_env.physics.models.ModelStep`; ``action``: ``(N, A)`` clipped;
        ``maps``: the height maps (the terrain normals under the wheels); ``params``:
        per-environment parameters or None (the ground's friction). Writes the task's fields
        of ``state``. The ``tip_over`` term is 1 only where the episode ends as a tip-over (a
        hole or the map's edge that tilts the body is that end, with its own reason)."""
        cfg, st, gc = self.cfg, state, motion.contact
        dist = torch.linalg.vector_norm(st.goal_w - gc.base_position[:, :2], dim=1)
        reached = ((dist < self.config.goal_radius) if self.nav
                   else torch.zeros_like(dist, dtype=torch.bool))
        judged = self.model.judges_tip_over  # a physical event the model decides
        tipped = (self.model.lost_support(gc) if judged else
                  tipped_over(gc.roll, gc.pitch, self.roll_limit, self.pitch_limit,
                              self.model.lost_support(gc)))
        if self.needs_margin:
            acc = (motion.accel_b if motion.accel_b is not None
                   else body_acceleration(motion.vel_b, st.vel_b, cfg.dt))
            st.accel_b = filter_acceleration(st.accel_b, acc, cfg.dt)
            st.margin, demand = self.margin(gc, st.accel_b, maps, st.map_index, params)
            st.traction = demand.clamp(max=TRACTION_CAP)
            st.unstable_steps = torch.where(st.margin < 0, st.unstable_steps + 1,
                                            torch.zeros_like(st.unstable_steps))
            if self.config.tip_rule == "force_angle" and not judged:
                tipped = tipped | (st.unstable_steps >= self.tip_hold_steps)
        stuck = None
        if self.stuck_steps is not None:  # progress: the goal came stuck_progress closer
            if self.config.stuck_speed is None:
                moved = dist < st.best_distance - self.config.stuck_progress
            else:  # or by speed (Verti-Bench's rule)
                moved = torch.hypot(motion.vel_b[:, 0], motion.vel_b[:, 1]) >= (
                    self.config.stuck_speed)
            st.best_distance = torch.where(moved, dist, st.best_distance)
            st.stall_steps = torch.where(moved, torch.zeros_like(st.stall_steps),
                                         st.stall_steps + 1)
            stuck = st.stall_steps >= self.stuck_steps
        reason = end_reason(reached, gc.hole, gc.off_map, tipped, stuck)
        ctx = StepContext(state=st, motion=motion, action=action, distance=dist,
                          reached=reached, tipped=reason == int(EndReason.TIP_OVER),
                          stuck=reason == int(EndReason.STUCK),
                          fell=(reason == int(EndReason.HOLE)) | (reason == int(EndReason.OFF_MAP)),
                          nav=self.nav, dt=cfg.dt)
        terms = {}
        for name, t in self.rewards.items():
            if name not in self.user_rewards:
                terms[name] = t.fn(ctx, **t.params)
                continue
            before = kept_before(t, st)
            terms[name] = t.fn(ctx, **t.params)
            check_term_output("reward", name, terms[name], dist.shape[0], dist.device,
                              dtype=dist.dtype)
            check_kept("reward", name, st, before)
        reward = torch.zeros_like(terms["progress"])
        for name, t in self.rewards.items():  # sum_k weight_k term_k, in declaration order
            if t.weight:
                reward = reward + t.weight * terms[name]
        if self.user_ends:
            reason = self._user_ends(ctx, reason)
        st.prev_distance = dist
        return terms, reward, reason

    def _user_ends(self, ctx, reason):
        """The config's terminations: their codes where no built-in end holds, the first
        declared winning."""
        n, dev = reason.shape[0], reason.device
        for i, (name, t) in enumerate(self.user_ends.items()):
            before = kept_before(t, ctx.state)
            hit = t.fn(ctx, **t.params)
            check_term_output("termination", name, hit, n, dev, boolean=True)
            check_kept("termination", name, ctx.state, before)
            reason = torch.where(hit & (reason == 0),
                                 torch.full_like(reason, FIRST_USER_CODE + i), reason)
        return reason


def episode_ends(steps: torch.Tensor, ended: torch.Tensor, reason: torch.Tensor,
                 max_episode_steps: int | None, time_outs: tuple[int, ...] = (
                     int(EndReason.STUCK),)) -> tuple[torch.Tensor, ...]:
    """``(terminated, truncated, reason)`` after a step whose simulator ended the rows
    ``ended`` with ``reason``: a stuck episode (:attr:`EndReason.STUCK`) is truncated, not
    terminated, as is one that a user termination with ``time_out`` ended (``time_outs``: the
    truncating codes, ``Task.time_out_codes``); so is one that reached ``max_episode_steps``
    (never with None), whose reason is :attr:`EndReason.TIME_LIMIT` where nothing else ended
    it."""
    stuck = reason == time_outs[0]
    for code in time_outs[1:]:
        stuck = stuck | (reason == code)
    terminated = ended & ~stuck
    if max_episode_steps is None:
        return terminated, ended & stuck, reason
    timed_out = steps >= max_episode_steps
    reason = torch.where(timed_out & ~ended,
                         torch.full_like(reason, int(EndReason.TIME_LIMIT)), reason)
    return terminated, timed_out | (ended & stuck), reason
