"""Policy rollout over the simulator itself: a privileged planner that picks, every few steps,
the best of a library of controllers by simulating each to the end of the episode.

**Privileged**: like :mod:`train.planners.mppi` it plans on the true model and the true map (the env's
snapshot and closed-loop look-ahead, ``env.get_state()`` and ``env.lookahead(snap, policy,
horizon)``). It is the reference a learned policy is measured against, not a competitor.

This is the rollout algorithm with several base policies (Bertsekas, *Rollout, Policy
Iteration, and Distributed Reinforcement Learning*, 2020, ch. 2): every ``replan`` steps, for
each environment, each candidate of the library is simulated closed loop from the current state
until its episode ends (or ``horizon`` steps), all N x C candidates in one batched look-ahead;
the environment then plays the best candidate's first segment for ``replan`` steps and chooses
again. A candidate is a pair: a ``first`` policy for the first ``replan`` steps, then a ``then``
policy to the end (a plain base policy is the pair ``(b, b)``; ``(reverse, heuristic)`` backs
off and charges). A candidate's score:

* the goal reached: ``END_BONUS`` + the progress made, less ``0.01`` per step it took;
* a fatal end (tip-over, hole, off the map): the progress made less ``END_BONUS``;
* otherwise (stuck, the time limit, the horizon): the progress made toward the goal.

The progress: to the episode's end (``horizon=0``), the straight distance to the goal it
gained [m]; over a bounded ``horizon``, the map planner's cost-to-go it gained
(:mod:`train.planners.path`: the field to the goal, read at base_link, in metres weighted by
the ground's cost), so that what the horizon cuts off is scored by a plan of the whole way,
and a re-plan costs ``C x horizon`` steps whatever the episode's length. The ``map``
library adds the ``path`` baseline to the default one; a candidate that reads the privileged state
(``reads_state``, as ``path`` does) gets each look-ahead row's own pose and goal.

The candidate the environment is playing keeps its place while it is still predicted to reach
the goal (so a plan that succeeds is followed, as the rollout algorithm's cost-improvement
property assumes); otherwise the best score wins, ties to the lower index. Because the library
holds the shipped heuristics, the planner finishes every task one of them finishes, up to the
float rounding by which a look-ahead row at another batch position may differ from the live
row (:mod:`offroad_env.lookahead`); re-planning every ``replan`` steps corrects such drift.

    python -m train.bench --suite offroad-bench-v2 --chunk-tasks 100 \\
        --policy rollout:replan=20,library=default

Rows that no longer matter (a suite's finished tasks) are left out when ``planner.active`` is
set (``train.bench`` sets it), as for MPPI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from train.planners.options import parse_options as parse_named
from train.planners.scoring import end_flags, progress as gained

__all__ = ["LIBRARIES", "RolloutConfig", "RolloutPlanner", "parse_options", "END_BONUS"]

#: a candidate's bonus for the goal and penalty for a fatal end [m equivalent]
END_BONUS = 100.0
#: the score a goal-reaching candidate loses per step it takes [m equivalent]
STEP_COST = 0.01

_STRAIGHT = (("heuristic", "heuristic"), ("heuristic:speed=0.5", "heuristic:speed=0.5"),
             ("heuristic:bias=25", "heuristic:bias=25"),
             ("heuristic:bias=-25", "heuristic:bias=-25"),
             ("heuristic:bias=50", "heuristic:bias=50"),
             ("heuristic:bias=-50", "heuristic:bias=-50"), ("reverse", "heuristic"))
_SHIPPED = (("careful", "careful"), ("physics", "physics"))
_PATH = (("path", "path"),)
#: named candidate libraries: ``(first, then)`` baseline names (``"reverse"``: drive straight
#: back at 0.6 of full speed). ``straight``: the straight line, a slow one, detours 25 and 50
#: degrees to each side and a back-off-and-charge (needs only the ``goal`` observation term);
#: ``heuristics``: the three shipped heuristics alone; ``default``: ``straight`` with careful
#: and physics (they read the ``height_scan`` and ``stability`` terms: the traverse task's);
#: ``map``: ``default`` and the privileged map planner ``path``
LIBRARIES: dict[str, tuple[tuple[str, str], ...]] = {
    "default": _STRAIGHT[:1] + _SHIPPED + _STRAIGHT[1:],
    "map": _STRAIGHT[:1] + _SHIPPED + _STRAIGHT[1:] + _PATH,
    "heuristics": _STRAIGHT[:1] + _SHIPPED,
    "straight": _STRAIGHT,
}


@dataclass(frozen=True)
class RolloutConfig:
    """``replan``: steps between choices; ``horizon``: the look-ahead's most steps (0: to the
    episode's end, which the time limit bounds); ``library``: a :data:`LIBRARIES` name;
    ``keep``: over a bounded horizon, the plan being played is kept without a search while
    its look-ahead reaches the goal, or ends in nothing fatal nor stuck having gained at least
    ``keep`` of the cost-to-go that full speed straight at the goal on the cheapest ground
    would gain (to the episode's end, only while it reaches the goal)."""

    replan: int = 20
    horizon: int = 0
    library: str = "default"
    keep: float = 0.25

    def __post_init__(self):
        if not isinstance(self.replan, int) or isinstance(self.replan, bool) or self.replan < 1:
            raise ValueError(f"rollout replan must be an int >= 1, got {self.replan!r}")
        if not isinstance(self.horizon, int) or isinstance(self.horizon, bool) or \
                self.horizon < 0:
            raise ValueError(f"rollout horizon must be an int >= 0 (0: to the episode's end), "
                             f"got {self.horizon!r}")
        if self.library not in LIBRARIES:
            raise ValueError(f"rollout library must be one of {sorted(LIBRARIES)}, got "
                             f"{self.library!r}")
        if not isinstance(self.keep, (int, float)) or not 0.0 <= self.keep <= 1.0:
            raise ValueError(f"rollout keep must be a number in [0, 1], got {self.keep!r}")


def parse_options(text: str) -> dict:
    """``"replan=20,horizon=0,library=default"`` (or ``R=20,H=0``) as RolloutConfig keywords."""
    return parse_named(text, {"replan": int, "horizon": int, "library": str, "keep": float},
                       {"R": "replan", "H": "horizon"}, "rollout")


class RolloutPlanner:
    """The planner for a vector env (module docstring); call it with the current observations
    to get ``(N, A)`` actions. ``candidates``: ``[(first, then)]`` policies ``act(obs) ->
    actions`` (a library by name: ``train.planners.baselines.baseline(env, "rollout:library=...")``
    builds its policies; ``config.library`` is then only a label)."""

    privileged = True

    def __init__(self, env, config: RolloutConfig, candidates: list[tuple[Callable, Callable]]):
        if not hasattr(env.unwrapped, "lookahead"):
            raise ValueError("the rollout planner plans on an offroad_env vector env (it needs "
                             "get_state and lookahead)")
        self.env, self.face, self.cfg = env, env.unwrapped, config
        sim = self.face.sim
        self.n, self.a, self.device = sim.n, sim.action_dim, sim.device
        if not candidates:
            raise ValueError("the rollout planner needs at least one candidate")
        candidates = list(candidates)
        #: ``(C,)`` each candidate's continuation: the candidate ``(then, then)`` (added where
        #: the library lacks it), which a row keeps playing while its plan still reaches the goal
        cont = []
        for first, then in list(candidates):
            at = next((j for j, (f, t) in enumerate(candidates) if f is then and t is then), None)
            if at is None:
                candidates.append((then, then))
                at = len(candidates) - 1
            cont.append(at)
        cont += list(range(len(cont), len(candidates)))  # the added ones continue as themselves
        self.candidates = candidates
        #: whether a candidate reads the privileged state (the look-ahead passes its view)
        self.reads_state = any(getattr(f, "reads_state", False) for pair in candidates
                               for f in pair)
        #: the map planner whose cost-to-go scores a bounded horizon's end (built on first use)
        self.field = next((f for pair in candidates for f in pair
                           if hasattr(f, "cost_to_go_at")), None)
        self.cont = torch.tensor(cont, dtype=torch.int64, device=self.device)
        #: ``(N,)`` the candidate each environment plays (an index into ``candidates``)
        self.choice = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        #: ``(N,)`` whether that candidate's look-ahead reached the goal
        self.predicted = torch.zeros(self.n, dtype=torch.bool, device=self.device)
        #: ``(N,)`` bool: the rows to plan (None: all); the others get a zero action
        self.active: torch.Tensor | None = None
        #: how many rows are planned at most (None: N): look-aheads are padded to multiples of
        #: an eighth of it (a teacher planning 256 rows of a 4096-env training env sets 256)
        self.plan_rows: int | None = None
        #: a step count shared by all rows (a teacher sets and advances it): every row is
        #: planned when it is a multiple of ``replan``, in one look-ahead; None: each row at its
        #: own episode's steps
        self.clock: int | None = None
        limit = self.face.max_episode_steps
        self.horizon = config.horizon or limit
        if not self.horizon:
            raise ValueError("rollout horizon=0 plans to the episode's end, which needs a "
                             "time limit (max_episode_steps); give horizon > 0")

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        N = self.n
        steps = self.face.state_view().steps
        live = torch.ones(N, dtype=torch.bool, device=self.device) if self.active is None \
            else self.active.to(self.device)
        due = live & ((torch.remainder(steps, self.cfg.replan) == 0) if self.clock is None
                      else torch.full_like(live, self.clock % self.cfg.replan == 0))
        if bool(due.any()):
            self._plan(torch.nonzero(due).flatten(), steps)
        act = torch.zeros(N, self.a, dtype=obs.dtype, device=obs.device)
        view = self.face.state_view() if self.reads_state else None
        for c, (first, _) in enumerate(self.candidates):
            rows = torch.nonzero(live & (self.choice == c)).flatten()
            if rows.numel():  # the chosen candidate's first policy plays the segment
                act[rows] = (first(obs[rows], view.select(rows))
                             if getattr(first, "reads_state", False) else first(obs[rows])).to(act)
        return act

    def _plan(self, rows: torch.Tensor, steps: torch.Tensor) -> None:
        """Choose a candidate for each of ``rows``: a row whose plan was predicted to reach the
        goal checks that plan alone (its continuation, one look-ahead row); the others, and
        those whose plan no longer reaches the goal, look ahead with every candidate."""
        C = len(self.candidates)
        cur = self.cont[self.choice[rows]]  # the plan being played, after its first segment
        sure = self.predicted[rows] & (steps[rows] > 0)
        if bool(sure.any()):
            r, c = rows[sure], cur[sure]
            _, goal = self._look(r, c, pad=1)
            self.choice[r] = c  # kept where it still reaches the goal; searched again if not
            rows = torch.cat((rows[~sure], r[~goal]))
        m = int(rows.numel())
        if m == 0:
            return
        cands = torch.arange(C, device=self.device).repeat_interleave(m)
        score, goal = self._look(rows.repeat(C), cands, pad=C)
        score, goal = score.view(C, m), goal.view(C, m)
        best = score.argmax(0)  # ties: the lower index
        self.choice[rows] = best
        self.predicted[rows] = goal.gather(0, best.view(1, -1)).squeeze(0)

    def _look(self, rows: torch.Tensor, cands: torch.Tensor, pad: int):
        """Scores and goal flags ``(M,)`` of candidates ``cands`` each run closed loop from the
        live row in ``rows`` (``(M,)``, M a multiple of ``pad``): one look-ahead, padded to a
        multiple of ``pad * ceil(N / 8)``, N the :attr:`plan_rows` (at most 8 sizes per
        ``pad``, each a second simulator of its own) with copies of the first pair."""
        N, R, M = self.plan_rows or self.n, self.cfg.replan, int(rows.numel())
        q = pad * -(-N // 8)
        size = -(-M // q) * q
        rows_p = torch.cat((rows, rows[:1].expand(size - M)))
        cands_p = torch.cat((cands, cands[:1].expand(size - M)))
        groups = [(c, torch.nonzero(cands_p == c).flatten()) for c in
                  torch.unique(cands_p).tolist()]
        count = [0]

        def policy(o, view=None):
            k = count[0]
            count[0] += 1
            out = torch.empty(size, self.a, dtype=o.dtype, device=o.device)
            for c, idx in groups:
                first, then = self.candidates[c]
                act = first if k < R else then
                out[idx] = (act(o[idx], view.select(idx)) if getattr(act, "reads_state", False)
                            else act(o[idx])).to(o)
            return out
        policy.reads_state = self.reads_state

        snap = self.face.get_state().select(rows_p)
        ro = self.face.lookahead(snap, policy, horizon=self.horizon)
        #: the last look-ahead and the (live row, candidate) of each of its rows, for plots
        self.last_rollout, self.last_pairs = ro, (rows_p, cands_p)
        score, goal = self._score(ro, rows_p)
        return score[:M], goal[:M]

    def _score(self, ro, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(M,)`` scores of a look-ahead's rows (module docstring) and whether each is good
        to keep (it reached the goal; over a bounded horizon also: ``RolloutConfig.keep``);
        ``rows``: the live rows they started from."""
        v = self.face.state_view()
        goal, fatal, stopped = end_flags(ro.end_reason[-1])
        if self.cfg.horizon and self.field is None:
            # a bounded horizon: what is left is scored by the map planner's cost-to-go
            from train.planners.path import PathPolicy
            self.field = PathPolicy(self.env, None)
        progress = gained(v, ro, rows, self.field if self.cfg.horizon else None)
        ended = ro.terminated | ro.truncated  # (H, M)
        took = torch.where(ended.any(0), ended.to(torch.int64).argmax(0) + 1, ended.shape[0])
        score = (progress + torch.where(goal, END_BONUS - STEP_COST * took, 0.0)
                 - torch.where(fatal, END_BONUS, 0.0))
        good = goal
        if self.cfg.horizon and self.cfg.keep > 0:
            c = self.face.config
            full = c.max_speed * c.dt * c.action_repeat * ended.shape[0]
            good = goal | (~fatal & ~stopped & (progress >= self.cfg.keep * full))
        return score, good
