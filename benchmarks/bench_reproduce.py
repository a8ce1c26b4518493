"""How many OffroadBench task outcomes change with the kernels alone: the noise floor of a
suite's figures across machines.

Runs ``train.bench`` on a suite once per kernel setting (each in its own process, since torch
and MKL read the variables when they load) and compares the per-task end reasons:

    python benchmarks/bench_reproduce.py --suite offroad-bench-v1 \\
        --policy random heuristic careful physics --out runs/reproduce

Settings (``--settings``, default all three): ``pinned`` (``ATEN_CPU_CAPABILITY=avx2``,
``MKL_CBWR=COMPATIBLE``, what the tests use), ``scalar`` (``ATEN_CPU_CAPABILITY=default``: the
non-vectorised ATen kernels, MKL pinned) and ``native`` (neither set: whatever this processor
picks). A different processor changes the same kernels, so the count of tasks whose end reason
differs between two settings is what to expect between two machines. Prints one line per
policy and pair of settings (tasks changed, success counts) and writes ``reproduce.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

SETTINGS = {
    "pinned": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE"},
    "scalar": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
    "native": {},
}


def run(setting: str, suite: str, policies: list[str], out: Path, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    env.update(SETTINGS[setting])
    folder = out / setting
    if not (folder / "bench.json").exists():
        subprocess.run([sys.executable, "-m", "train.bench", "--suite", suite, "--policy",
                        *policies, "--out", str(folder), "--force", "--no-progress",
                        "--threads", str(threads)], env=env, check=True)
    return json.loads((folder / "bench.json").read_text())


RATES = ("success_rate", "tip_over_rate", "stuck_rate")


def compare(a: dict, b: dict) -> dict:
    """Per policy: tasks whose end reason differs, each run's success count, and the largest
    change of a family's success, tip-over and stuck rates [percentage points]."""
    out = {}
    for name in a:
        ra, rb = a[name]["per_task"]["end_reason"], b[name]["per_task"]["end_reason"]
        changed = [i for i, (x, y) in enumerate(zip(ra, rb)) if x != y]
        fa, fb = a[name]["by_family"], b[name]["by_family"]
        family_points = {r: round(100 * max(abs(fa[f]["all"][r] - fb[f]["all"][r]) for f in fa),
                                  2) for r in RATES}
        out[name] = {"tasks": len(ra), "changed": len(changed),
                     "success": [ra.count("goal_reached"), rb.count("goal_reached")],
                     "overall_success_points": round(100 * abs(
                         a[name]["overall"]["success_rate"] - b[name]["overall"]["success_rate"]),
                         2),
                     "family_points_max": family_points, "moves": _moves(ra, rb, changed)}
    return out


def _moves(ra, rb, changed) -> dict:
    moves: dict[str, int] = {}
    for i in changed:
        key = f"{ra[i]}->{rb[i]}"
        moves[key] = moves.get(key, 0) + 1
    return dict(sorted(moves.items(), key=lambda kv: -kv[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="offroad-bench-v1")
    ap.add_argument("--policy", nargs="+", default=["random", "heuristic", "careful",
                                                    "physics"])
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if len(args.settings) < 2:
        ap.error("name at least two settings to compare")
    args.out.mkdir(parents=True, exist_ok=True)
    results = {s: run(s, args.suite, args.policy, args.out, args.threads)
               for s in args.settings}
    base = args.settings[0]
    report = {}
    for other in args.settings[1:]:
        report[f"{base} vs {other}"] = cmp = compare(results[base], results[other])
        for name, c in cmp.items():
            print(f"{base} vs {other} | {name}: {c['changed']} of {c['tasks']} task outcomes "
                  f"change; successes {c['success'][0]} vs {c['success'][1]}; a family's rate "
                  f"moves at most {c['family_points_max']} points; {c['moves']}")
    (args.out / "reproduce.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
