"""A privileged teacher for PPO (``--teacher path``): the map planner's ``path`` baseline
labels the turn of a fixed set of envs at every rollout step, and the update adds a regression
of the actor's mean turn on those labels to PPO's loss, with a weight that falls linearly to 0
(kickstarting: Schmitt et al. 2018; the teacher may see everything, the student sees only its
inputs).

Why the turn only: ``path`` drives at a fixed speed rule (full speed within 45 degrees of its
carrot, 0.3 otherwise), the straight-line controller's; what it knows that the straight line
does not is *where* to go round (its cost-to-go on the true map). The speed stays PPO's to learn.

The teacher steers at the goal itself wherever a straight run there costs no more than the grid's
path (``PathPolicy(goal_in_sight=True)``): on open ground its label is the straight line's, not
the 22.5-degree zig-zag of a short look-ahead on an 8-connected path.

Labels (:meth:`PathTeacher.labels`) are in the actor's raw action space: the turn ``w`` of
``path``'s twist for the ``"twist"`` map; ``w - w0``, the correction to the straight-line
controller's turn ``w0``, for ``"residual"`` (:data:`train.common.agent.ACTION_MAPS`). The loss
(:func:`teacher_loss`) is ``mean((mu_w - label)^2)`` over the labelled samples, ``mu_w`` the
actor's mean turn.

The student learns only what its inputs show: the suites' height scan reaches 2 m ahead (2.4 x
1.6 m at 0.2 m, centred 0.8 m ahead), the teacher's carrot lies 2 m along its route and its detours begin
wherever its cost-to-go says; ``--actor-inputs wide_scan`` shows 5 m ahead.

``--teacher rollout`` (:class:`RolloutTeacher`) labels the speed and the turn with the
privileged rollout planner over a short horizon instead (:data:`ROLLOUT_TEACHER`): what it
knows that the route does not is *how* to drive the next metres (slow down, swing 25 degrees
out, back off and charge), found by simulating each candidate on the true model. Why a short
horizon: on v2's rough levels 5-9 a 1-s look-ahead finishes 71 of 100 tasks (tip-over 2), a
2.5-s one 88, the 10-s reference 92, the student 49 (tip-over 23); the student's scan reaches
2 m. Its look-aheads (``teacher_rows`` x 9 candidates x 50 steps every 20 steps, one batch)
cost: at 128 rows of the ``--suite`` run's 4096, an iteration took 5.6 s with the labels
against 2.4 s after them, and the look-ahead simulators of each batch size are built once
(about 200 s). Three seeds scored 1214, 1196 and 1184 of v2's 1400 tasks (median 1196; the
default's ``path`` teacher 1202-1209, median 1204), no better on rough ground (BENCHMARKS.md):
level with the ``path`` teacher, while its labels take 12-15 of the run's 28 minutes: not a
preset's.

Cost: each map's traversability, read every :data:`TEACHER_SAMPLE` m, once; the rows'
cost-to-go fields (one SciPy Dijkstra per new goal) and their pure pursuit; the fields are dropped when more than ``max_fields`` are kept (a run draws
new goals all the time).
"""

from __future__ import annotations

import torch

from train.common.agent import RESIDUAL_GAIN, Agent
from train.planners.baselines import steer_at_goal
from train.planners.path import PathPolicy, parse_options

__all__ = ["TEACHERS", "TEACHER_SAMPLE", "ROLLOUT_TEACHER", "PathTeacher", "RolloutTeacher",
           "rollout_options", "teacher_loss", "teacher_weight", "make_teacher"]

#: the values of ``PPOConfig.teacher``
TEACHERS = ("none", "path", "rollout")
#: the rollout teacher's planner unless its options say: a 2.5-s look-ahead of the default
#: library, re-chosen every 20 steps (on v2's rough levels 5-9 it finishes 88 of 100 tasks, the
#: stored reference's 200-step horizon 92, the straight line 49)
ROLLOUT_TEACHER = "R=20,H=50,library=default"
#: the spacing [m] the teacher's traversability reads the maps at unless its options say
#: (``PathConfig.sample``): v2's resolution; on the 0.025-m ``--suite`` training grid the first
#: labels of 256 envs took 390 s at every sample, 9.1 s at 0.1 m
TEACHER_SAMPLE = 0.1


def rollout_options(options: str = "") -> str:
    """The rollout teacher's planner options: :data:`ROLLOUT_TEACHER` with ``options`` after it
    (a later key wins: ``"H=30"`` gives ``"R=20,H=50,library=default,H=30"``)."""
    return ",".join(x for x in (ROLLOUT_TEACHER, options) if x)


def spread_rows(n: int, rows: int) -> torch.Tensor:
    """``rows`` env indices spread evenly over ``n`` (all n where ``rows`` >= n); ValueError
    naming ``rows`` unless it is an int >= 1."""
    if int(rows) != rows or rows < 1:
        raise ValueError(f"teacher_rows must be an int >= 1, got {rows!r}")
    return torch.linspace(0, n - 1, min(int(rows), n)).round().long().unique()


class PathTeacher:
    """``path``'s turn for ``rows`` envs of the vector env ``env`` (spread evenly over its N
    rows; all N where ``rows`` >= N), in ``agent``'s raw action space (module docstring).
    ``options``: the ``path`` baseline's (``"lookahead=1.0,cell=0.2"``)."""

    def __init__(self, env, agent: Agent, rows: int, options: str = "",
                 max_fields: int = 2048):
        if agent.action_map not in ("twist", "residual"):
            raise ValueError(f"the path teacher labels a turn: it needs the 'twist' or "
                             f"'residual' action map, got {agent.action_map!r} (or train "
                             f"without it: --teacher none)")
        base = env.unwrapped
        n = int(base.num_envs)
        self.base, self.agent, self.max_fields = base, agent, int(max_fields)
        self.rows = spread_rows(n, rows)
        self.policy = PathPolicy(base, lambda v, w: torch.stack((v, w), -1),
                                 goal_in_sight=True,
                                 **{"sample": TEACHER_SAMPLE, **parse_options(options)})

    #: each label's shape: the turn alone
    label_shape: tuple[int, ...] = ()

    @property
    def num_rows(self) -> int:
        return int(self.rows.numel())

    @torch.no_grad()
    def labels(self, obs: torch.Tensor) -> torch.Tensor:
        """``(M,)`` the teacher's turn for the rows, of the env's current state (call it with
        the observation ``obs`` ``(N, D)`` the actor answers, before stepping)."""
        if self.policy.num_fields > self.max_fields:
            self.policy.drop_fields()
        rows = self.rows.to(obs.device)
        view = self.base.state_view().select(rows)
        o = obs[rows]
        w = self.policy(o, view)[:, 1]
        if self.agent.action_map == "residual":
            g = self.agent.goal_col
            _, w0, _ = steer_at_goal(o[:, g:g + 2], RESIDUAL_GAIN)
            w = w - w0
        return w.to(torch.float32)


class RolloutTeacher:
    """The rollout planner's speed and turn (:mod:`train.planners.rollout`, options
    :data:`ROLLOUT_TEACHER` updated by ``options``) for ``rows`` envs of ``env``, spread as
    :class:`PathTeacher`'s, in ``agent``'s raw action space: DAgger (Ross et al. 2011) from a
    short-horizon privileged planner, at the states the student drives to.

    The planner plays, for each row, the candidate it chose at the row's last re-plan (every
    ``replan`` steps of the row's episode, from where the student had driven it); the label is
    that candidate's action at the current state, as the ``(v, w)`` twist of its wheel speeds
    (``v = (l + r) / 2``, ``w = (r - l) / 2``), less the straight-line controller's ``(v0, w0)``
    under the ``"residual"`` map, clipped to 0.95 of the actor's mean bound (a label past the
    bound would pull the ``tanh`` into saturation); zero where the actor's zero output gives the
    same wheel speeds (a clipped wheel has many twists: the straight line turning at full speed
    would otherwise read as a correction of about -0.25 in speed and turn)."""

    label_shape: tuple[int, ...] = (2,)

    def __init__(self, env, agent: Agent, rows: int, options: str = "",
                 max_fields: int = 2048):
        from train.planners.baselines import baseline, skid_steered
        if agent.action_map not in ("twist", "residual"):
            raise ValueError(f"the rollout teacher labels a twist: it needs the 'twist' or "
                             f"'residual' action map, got {agent.action_map!r}")
        base = env.unwrapped
        if not skid_steered(base.config):
            raise ValueError("the rollout teacher labels skid-steered wheel speeds; this env's "
                             "actions are not (train without it: --teacher none)")
        n = int(base.num_envs)
        self.base, self.agent, self.max_fields = base, agent, int(max_fields)
        self.rows = spread_rows(n, rows)
        self.planner = baseline(f"rollout:{rollout_options(options)}", base, 0)
        self.planner.active = torch.zeros(n, dtype=torch.bool, device=base.device)
        self.planner.active[self.rows.to(base.device)] = True
        self.planner.plan_rows = self.num_rows
        self.planner.clock = 0  # all rows re-planned together: one look-ahead every replan steps
        # the cost-to-go scoring a bounded horizon's end, on the maps read at TEACHER_SAMPLE
        self.planner.field = PathPolicy(base, None, sample=TEACHER_SAMPLE)

    @property
    def num_rows(self) -> int:
        return int(self.rows.numel())

    @torch.no_grad()
    def labels(self, obs: torch.Tensor) -> torch.Tensor:
        """``(M, 2)`` the planner's ``(dv, dw)`` (or ``(v, w)``) for the rows, of the env's
        current state (call it with the observation ``obs`` ``(N, D)`` the actor answers,
        before stepping)."""
        if self.planner.field.num_fields > self.max_fields:
            self.planner.field.drop_fields()
        rows = self.rows.to(obs.device)
        wheels = self.planner(obs)[rows]
        self.planner.clock += 1
        v, w = (wheels[:, 0] + wheels[:, 1]) / 2, (wheels[:, 1] - wheels[:, 0]) / 2
        bound = 0.95
        o = obs[rows]
        if self.agent.action_map == "residual":
            g = self.agent.goal_col
            v0, w0, _ = steer_at_goal(o[:, g:g + 2], RESIDUAL_GAIN)
            v, w, bound = v - v0, w - w0, 1.9
        lab = torch.stack((v, w), -1).clamp(-bound, bound)
        # clipped wheel speeds have many twists: where the actor's zero output already drives
        # the planner's wheels (the straight line at full speed in a turn), the label is zero
        same = (self.agent.to_env(torch.zeros_like(lab), o) - wheels).abs().amax(-1) < 1e-6
        return torch.where(same.unsqueeze(-1), 0.0, lab).to(torch.float32)


def teacher_loss(agent: Agent, z: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The mean squared error of the actor's mean of normalised observations ``z`` ``(B, D)``
    against the teacher's ``labels``: ``(B,)`` turns (column 1 of its twist), or ``(B, 2)``
    speeds and turns."""
    mean = agent.mean(z, normalized=True)
    if labels.dim() == 1:
        return (mean[:, 1] - labels).square().mean()
    return (mean - labels).square().sum(-1).mean()


def teacher_weight(coef: float, steps: int, global_step: int) -> float:
    """The loss weight after ``global_step`` env steps: ``coef`` falling linearly to 0 at
    ``steps``."""
    return coef * max(0.0, 1.0 - global_step / steps)


def make_teacher(cfg, env, agent: Agent) -> PathTeacher | RolloutTeacher | None:
    """The teacher ``cfg.teacher`` names (None for ``"none"``)."""
    if cfg.teacher == "none":
        return None
    if cfg.teacher == "rollout":
        return RolloutTeacher(env, agent, cfg.teacher_rows, cfg.teacher_options)
    return PathTeacher(env, agent, cfg.teacher_rows, cfg.teacher_options)
