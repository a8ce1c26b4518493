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

Cost: each map's traversability, read every :data:`TEACHER_SAMPLE` m, once; the rows'
cost-to-go fields (one SciPy Dijkstra per new goal) and their pure pursuit; the fields are dropped when more than ``max_fields`` are kept (a run draws
new goals all the time).
"""

from __future__ import annotations

import torch

from train.common.agent import RESIDUAL_GAIN, Agent
from train.planners.baselines import steer_at_goal
from train.planners.path import PathPolicy, parse_options

__all__ = ["TEACHERS", "TEACHER_SAMPLE", "PathTeacher", "teacher_loss", "teacher_weight", "make_teacher"]

#: the values of ``PPOConfig.teacher``
TEACHERS = ("none", "path")
#: the spacing [m] the teacher's traversability reads the maps at unless its options say
#: (``PathConfig.sample``): v2's resolution; on the 0.025-m ``--suite`` training grid the first
#: labels of 256 envs took 390 s at every sample, 9.1 s at 0.1 m
TEACHER_SAMPLE = 0.1


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
        if int(rows) != rows or rows < 1:
            raise ValueError(f"teacher_rows must be an int >= 1, got {rows!r}")
        rows = min(int(rows), n)
        self.base, self.agent, self.max_fields = base, agent, int(max_fields)
        self.rows = torch.linspace(0, n - 1, rows).round().long().unique()
        self.policy = PathPolicy(base, lambda v, w: torch.stack((v, w), -1),
                                 goal_in_sight=True,
                                 **{"sample": TEACHER_SAMPLE, **parse_options(options)})

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


def teacher_loss(agent: Agent, z: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``mean((mu_w - labels)^2)``: the actor's mean turn (column 1 of its twist) of
    normalised observations ``z`` ``(B, D)`` against the teacher's ``labels`` ``(B,)``."""
    return (agent.mean(z, normalized=True)[:, 1] - labels).square().mean()


def teacher_weight(coef: float, steps: int, global_step: int) -> float:
    """The loss weight after ``global_step`` env steps: ``coef`` falling linearly to 0 at
    ``steps``."""
    return coef * max(0.0, 1.0 - global_step / steps)


def make_teacher(cfg, env, agent: Agent) -> PathTeacher | None:
    """The teacher ``cfg.teacher`` names (None for ``"none"``)."""
    if cfg.teacher == "none":
        return None
    return PathTeacher(env, agent, cfg.teacher_rows, cfg.teacher_options)
