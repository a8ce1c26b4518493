"""OffroadBench's task set on the physical model (issue 26 groundwork): how the v0 families'
levels, and the soft-soil family, come out when the vehicle obeys physics, before v1's levels
are set.

    python benchmarks/probe_bench_physical.py [--policies heuristic careful] [--worlds 1]
        [--pairs 4] [--stuck 5]

Runs ``offroad-bench-v0``'s spec with ``dynamics="rigid_body"`` (the Husky with its presets'
motor and suspension), the families of v0 and ``soft_soil``, ``--worlds`` maps and ``--pairs``
start/goal pairs per level (v0: 2 and 10), and the stuck end after ``--stuck`` seconds without
progress. Prints, per family and policy, success / tip-over / stuck / time-limit / hole by level.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from train.bench import load_suite, run_suite  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", nargs="+", default=["heuristic", "careful"])
    ap.add_argument("--worlds", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--stuck", type=float, default=5.0)
    a = ap.parse_args()
    v0 = load_suite("offroad-bench-v0")
    spec = replace(v0, name="probe-physical", dynamics="rigid_body",
                   families=tuple(v0.families) + ("soft_soil",), worlds=a.worlds,
                   pairs=a.pairs, stuck_time_s=a.stuck)
    for policy in a.policies:
        t0 = time.perf_counter()
        res = run_suite(spec, policy)
        print(f"\n{policy}: {spec.num_tasks} tasks in {time.perf_counter() - t0:.0f} s; "
              f"overall success {res['overall']['success_rate']:.2f}")
        print("| family | " + " | ".join(f"L{lv}" for lv in range(spec.num_levels))
              + " | all |")
        print("|---|" + "---|" * (spec.num_levels + 1))
        for fam, cells in res["by_family"].items():
            row = []
            for key in [str(lv) for lv in range(spec.num_levels)] + ["all"]:
                c = cells[key]
                row.append("/".join(f"{100 * c[k + '_rate']:.0f}" for k in
                                    ("success", "tip_over", "stuck", "time_limit", "hole")))
            print(f"| {fam} | " + " | ".join(row) + " |", flush=True)
        print("(cells: success / tip-over / stuck / time-limit / hole, % of the level's tasks)")


if __name__ == "__main__":
    main()
