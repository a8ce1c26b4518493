"""How much of a suite's outcome is chance: one policy, the same tasks, ``--seeds`` runs that
differ only by a small Gaussian noise added to each action (std ``--noise`` on the [-1, 1]
action, a generator seeded per run), and per task how often it finishes.

A task that some runs finish and others do not is one whose outcome a few-percent nudge of the
controls decides. A planner that simulates its candidates on the true model (the privileged
reference) can pick, from a few such nudges, one that finishes; a policy that acts from its
sensors gets the task's finishing frequency on average. So per family the table gives:

* ``mean``: the mean success over the runs (what a like policy scores, in expectation);
* ``any``: the share of tasks at least one run finishes (what picking the best of the runs,
  with hindsight, would score);
* ``mixed``: the share of tasks some runs finish and some do not.

    python benchmarks/bench_chaos.py --suite offroad-bench-v2 --families rough steps soft_soil \\
        --policy heuristic --seeds 8 --noise 0.02

``--policy`` takes a baseline's name or a checkpoint (its mean action). ``--shard i/n`` runs
the seeds ``i, i + n, ...`` only and writes their outcomes to ``--out``; ``--merge`` reads
every shard's file from ``--out`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch


def noisy(make, noise: float, seed: int):
    """A policy builder: ``make``'s actions plus N(0, noise^2) each, clamped to [-1, 1]."""
    def build(env):
        act = make(env)
        gen = torch.Generator().manual_seed(1000 + seed)

        def step(obs):
            a = act(obs)
            return (a + noise * torch.randn(a.shape, generator=gen, dtype=a.dtype)).clamp(-1, 1)
        return step
    return build


def base_policy(name: str):
    """``name``'s policy builder ``env -> policy``: a baseline's, or a checkpoint's mean action
    (ValueError naming ``name`` if it is neither)."""
    from train.bench import policy_builder
    from train.planners.baselines import baseline
    make, _ = policy_builder(name, "cpu")
    return (lambda env: baseline(make, env, 0)) if isinstance(make, str) else make


def table(outcomes: dict[int, dict]) -> str:
    seeds = sorted(outcomes)
    fam = np.asarray(outcomes[seeds[0]]["family"])
    ok = np.array([[r == "goal_reached" for r in outcomes[s]["end_reason"]] for s in seeds])
    tip = np.array([[r == "tip_over" for r in outcomes[s]["end_reason"]] for s in seeds])
    lines = [f"{len(seeds)} runs (seeds {seeds[0]}-{seeds[-1]})",
             "| family | tasks | mean success % (min-max of runs) | any run % | mixed % | "
             "mean tip-over % |", "|---|---|---|---|---|---|"]
    for name in list(dict.fromkeys(fam.tolist())) + ["all"]:
        sel = np.ones_like(fam, dtype=bool) if name == "all" else fam == name
        per_run = ok[:, sel].mean(1) * 100
        lines.append(f"| {name} | {int(sel.sum())} | {per_run.mean():.1f} ({per_run.min():.1f}-"
                     f"{per_run.max():.1f}) | {ok[:, sel].any(0).mean() * 100:.1f} | "
                     f"{(ok[:, sel].any(0) & ~ok[:, sel].all(0)).mean() * 100:.1f} | "
                     f"{tip[:, sel].mean() * 100:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v2")
    p.add_argument("--families", nargs="+", default=None)
    p.add_argument("--levels", nargs="+", type=int, default=None)
    p.add_argument("--policy", default="heuristic")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--noise", type=float, default=0.02)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--shard", default="0/1")
    p.add_argument("--out", default="runs/chaos")
    p.add_argument("--merge", action="store_true")
    a = p.parse_args(argv)
    out = Path(a.out)
    if a.merge:
        outcomes = {}
        for f in sorted(out.glob("shard_*.json")):
            outcomes.update({int(k): v for k, v in json.loads(f.read_text()).items()})
        print(table(outcomes))
        return
    torch.set_num_threads(a.threads)
    from dataclasses import replace

    from train.bench.run import run_suite
    from train.common.suite import load_suite
    spec = load_suite(a.suite)
    if a.families or a.levels:
        spec = spec.select(families=a.families, levels=a.levels)
    spec = replace(spec, chunk_tasks=100)
    i, n = (int(x) for x in a.shard.split("/"))
    make = base_policy(a.policy)
    outcomes = {}
    for seed in range(i, a.seeds, n):
        res = run_suite(spec, noisy(make, a.noise, seed))
        fams = list(res["by_family"])
        counts = [res["by_family"][f]["all"]["episodes"] for f in fams]
        outcomes[seed] = {"end_reason": res["per_task"]["end_reason"],
                          "family": sum(([f] * c for f, c in zip(fams, counts)), [])}
        print(f"seed {seed}: {np.mean([r == 'goal_reached' for r in outcomes[seed]['end_reason']]):.3f}",
              flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"shard_{i}.json").write_text(json.dumps(outcomes))


if __name__ == "__main__":
    main()
