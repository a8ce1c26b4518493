"""How often a plan's outcome on the kinematic twin differs from the world's: MPPI planning on the
twin (``model=twin``) drives a suite's tasks on the physical model; at every plan, the plan it
chose (the action it takes and the plan's next ones, the horizon long) is rolled from that
state on both the twin and the physical model (the world's own look-ahead: what the world does
with those actions), and the two outcomes compared.

    python benchmarks/bench_surrogate.py [--suite benchmarks/suites/offroad-bench-v2-hard-s68.json]
        [--every 10] [--policy mppi:model=twin]

Per family: the plans compared; the share whose outcome class at the horizon's end differs
(goal reached / a fatal end: tip-over, hole, off the map / alive), and the share where the
twin promised progress the world did not make (it reached the goal, or its end lies over 0.5 m
further along the straight line to the goal than the world's); the median and 90th percentile
of the end positions' distance [m]. Tasks: every ``--every``-th of the suite (a draw of our
own by default, never a suite's tasks).
"""

from __future__ import annotations

import argparse
import platform
import statistics
from collections import defaultdict

import torch

from train.bench.run import run_suite
from train.common.suite import load_suite
from train.planners.baselines import baseline
from train.planners.scoring import end_flags


def _class(why: torch.Tensor) -> torch.Tensor:
    goal, fatal, _ = end_flags(why)
    return torch.where(goal, 1, torch.where(fatal, 2, 0))


class Probe:
    """MPPI on the twin, comparing each chosen plan on the twin and the world."""

    def __init__(self, env, policy: str, records: list):
        self.env, self.face = env, env.unwrapped
        self.mppi = baseline(policy, env, 0)
        if self.mppi.model is self.face:
            raise ValueError(f"{policy!r} plans on the env itself; give model=twin")
        self.records = records
        self.active = None

    def __call__(self, obs):
        m = self.mppi
        m.active = self.active
        planning = m._calls % m.cfg.replan == 0
        if not planning:
            return m(obs)
        live_snap, twin_snap = self.face.get_state(), m.model.snapshot()
        act = m(obs)
        rows = (torch.arange(m.n) if self.active is None
                else torch.nonzero(self.active).flatten())
        if rows.numel() == 0:
            return act
        plan = torch.cat((act.unsqueeze(1), m.plan[:, :-1]), 1)[rows]  # (M, H, A)
        acts = plan.permute(1, 0, 2).contiguous()
        world = self.face.lookahead(live_snap.select(rows), acts)
        twin = m.model.lookahead(twin_snap.select(rows), acts)
        view = self.face.state_view()
        goal = view.goal_w[rows].to(torch.float64)
        start = torch.stack((view.x, view.y), 1)[rows].to(torch.float64)
        along = (goal - start) / (goal - start).norm(dim=1, keepdim=True).clamp_min(1e-9)
        ahead_w = ((world.position[-1] - start) * along).sum(1)
        ahead_t = ((twin.position[-1] - start) * along).sum(1)
        cw, ct = _class(world.end_reason[-1]), _class(twin.end_reason[-1])
        err = (world.position[-1] - twin.position[-1]).norm(dim=1)
        optimistic = ((ct == 1) & (cw != 1)) | (ahead_t > ahead_w + 0.5)
        for i in range(rows.numel()):
            self.records.append((int(rows[i]), bool(cw[i] != ct[i]), bool(optimistic[i]),
                                 float(err[i])))
        return act


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--suite", default="benchmarks/suites/offroad-bench-v2-hard-s68.json")
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--policy", default="mppi:model=twin")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    spec = load_suite(a.suite)
    ids = list(range(0, spec.num_tasks, a.every))
    spec = spec.select(tasks=ids)
    print(f"# {platform.processor() or platform.machine()}, {a.policy} on {spec.name}, "
          f"{len(ids)} tasks (every {a.every}th)")
    print("| family | plans | outcome differs | twin optimistic | end distance median / p90 "
          "[m] |\n|---|---|---|---|---|")
    totals = defaultdict(list)
    for fam in spec.families:
        sub = spec.select(families=[fam])
        records: list = []
        run_suite(sub, lambda env: Probe(env, a.policy, records))
        totals["all"] += records
        _row(fam, records)
    _row("all", totals["all"])
    return 0


def _row(name, records):
    if not records:
        print(f"| {name} | 0 | - | - | - |")
        return
    n = len(records)
    diff = sum(r[1] for r in records) / n
    opt = sum(r[2] for r in records) / n
    errs = sorted(r[3] for r in records)
    p90 = errs[min(n - 1, int(0.9 * n))]
    print(f"| {name} | {n} | {100 * diff:.1f} % | {100 * opt:.1f} % | "
          f"{statistics.median(errs):.2f} / {p90:.2f} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
