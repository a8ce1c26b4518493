"""Verti-Bench's 100 worlds x 10 start/goal pairs as an OffroadBench suite, ``verti-bench-v1``.

    python -m train.verti_bench convert path/to/verti_bench     # writes the dataset and suite
    python -m train.bench --suite verti-bench-v1 --policy heuristic

``convert`` reads Verti-Bench's own files (:func:`terrain.verti_bench.read_source`), writes their
essentials to ``terrain/datasets/verti_bench_v1.npz`` and the suite to
``train/suites/verti-bench-v1.json``: one map per world (:func:`terrain.verti_bench.world_map`
at :data:`SCALE`), its ten pairs as tasks (each start facing its goal), and Verti-Bench's rules
scaled (:func:`scaled_rules`). Every start goes through v2's braked check
(:func:`train.suite_starts.braked_check`); Verti-Bench's tasks are fixed, so a start that fails
it stays, marked ``"start_ok": false``, and the results give the success rate with and
without those tasks.

**Scale.** Verti-Bench drives a HMMWV (about 4.6 x 2.2 m, wheels 0.47 m in radius) at a 4 m/s
target speed; the Husky (0.99 x 0.67 m, wheels 0.165 m) is about a sixth of it, and its top
speed here is 1 m/s. Lengths scale by ``s = 1/6`` (a world spans 21.3 m, heights up to 2.67 m:
slopes keep their angles, rocks their size relative to the wheels). Time scales so that the
Husky's top speed plays the HMMWV's target: ``tau = s x 4 / 1 = 2/3``. So:

* goal radius 8 m -> ``8 s`` = 1.33 m (Verti-Bench measures it in 3-D, here in the plane);
* time limit 60 s -> ``60 tau`` = 40 s;
* stuck: Verti-Bench counts 5 ms steps that move less than 0.01 m, for 10 s: a speed under
  2 m/s (half its target) for 10 s. Scaled: under ``2 s / tau`` = 0.5 m/s for ``10 tau`` =
  6.67 s (``TaskConfig.stuck_speed``).

Verti-Bench has no tip-over end; this suite keeps the env's (a rolled Husky does not finish).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np

from terrain import verti_bench

from train.common.suite import SUITES_DIR, SuiteSpec, load_suite, maps_suite_json, suite_tasks
from train.suite_starts import braked_check

__all__ = ["SCALE", "scaled_rules", "suite_spec", "main"]

#: lengths here over Verti-Bench's (the Husky about a sixth of its HMMWV)
SCALE = 1 / 6
#: Verti-Bench's target speed [m/s] and the Husky's top speed here [m/s]
VB_SPEED, HUSKY_SPEED = 4.0, 1.0
#: its rules: goal radius [m], time limit [s], stuck distance per step [m], step [s], stuck time
VB_GOAL, VB_TIME, VB_STUCK_STEP, VB_STEP, VB_STUCK_TIME = 8.0, 60.0, 0.01, 5e-3, 10.0


def scaled_rules(scale: float = SCALE, speed: float = HUSKY_SPEED) -> dict:
    """Verti-Bench's goal radius, time limit and stuck rule at ``scale``, with ``speed`` [m/s]
    in the part of its 4 m/s target (module docstring)."""
    tau = scale * VB_SPEED / speed
    return {"goal_radius": VB_GOAL * scale, "time_limit_s": VB_TIME * tau,
            "stuck_time_s": VB_STUCK_TIME * tau,
            "stuck_speed": VB_STUCK_STEP / VB_STEP * scale / tau}


def suite_spec(dataset=None, scale: float = SCALE) -> SuiteSpec:
    """``verti-bench-v1`` before its braked check: every world of the dataset with its ten
    pairs, v2's vehicle, models and observation terms."""
    v2 = load_suite("offroad-bench-v2")
    d = verti_bench.load_dataset(dataset)
    maps, tasks = [], []
    for w in d["world"].tolist():
        info = verti_bench.world_info(w, dataset)
        name = f"world{w}"
        maps.append({"name": name, "dataset": "verti_bench", "key": w,
                     "tags": {"difficulty": info["difficulty"], "terrain": info["terrain"]}})
        for (sx, sy), (gx, gy) in verti_bench.world_pairs(w, scale, dataset).tolist():
            tasks.append({"map": name, "start": [sx, sy, math.atan2(gy - sy, gx - sx)],
                          "goal": [gx, gy]})
    r = scaled_rules(scale)
    return SuiteSpec(
        name="verti-bench-v1", version=1, vehicle=v2.vehicle, dynamics=v2.dynamics,
        ground=v2.ground, obs_terms=v2.obs_terms, maps=tuple(maps), tasks=tuple(tasks),
        dataset_options={"scale": scale}, time_limit_s=r["time_limit_s"],
        stuck_time_s=r["stuck_time_s"], stuck_speed=r["stuck_speed"],
        goal_radius=r["goal_radius"], seed=v2.seed, chunk_tasks=100, chunk_threads=1,
        description=(
            "Verti-Bench's 100 worlds x 10 start/goal pairs (RSS 2025, MIT licence; "
            "terrain/datasets) at 1/6 scale for the Husky on the physical model (v2's vehicle, "
            "models and observation terms): rigid ground of its patches' friction, its snow, "
            "mud and sand as soils, rocks and trees as prisms; goal radius "
            f"{r['goal_radius']:.3f} m, {r['time_limit_s']:.1f} s, stuck below "
            f"{r['stuck_speed']:.2f} m/s for {r['stuck_time_s']:.2f} s (train/verti_bench.py "
            "says how each is scaled)."))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.verti_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert", help="read a Verti-Bench checkout; write the dataset and "
                                       "the suite")
    c.add_argument("source", help="the checkout (the folder holding envs/)")
    c.add_argument("--dataset", default=str(verti_bench.DATASET))
    c.add_argument("--suite", default=str(SUITES_DIR / "verti-bench-v1.json"))
    c.add_argument("--no-check", action="store_true",
                   help="skip the braked check (every start_ok left out)")
    args = p.parse_args(argv)
    try:
        data = verti_bench.read_source(args.source)
        path = verti_bench.save_dataset(data, args.dataset)
        verti_bench.load_dataset.cache_clear()
        spec = suite_spec(path)
    except (ValueError, OSError) as exc:
        print(f"train.verti_bench: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, {len(data['world'])} worlds)")
    raw = asdict(spec)
    raw.pop("root")
    for k in ("families", "num_levels", "worlds", "pairs", "size", "resolution",
              "terrain_seed", "pair_seed", "goal_distance", "margin", "max_start_slope_deg",
              "family_options", "per_family", "subset", "reference", "materials"):
        raw.pop(k)  # the family grid's fields: a suite of maps does not use them
    raw["measured_with"] = package_version("offroad-env")
    if not args.no_check:
        tasks = suite_tasks(spec, None)
        check = braked_check(spec, tasks)
        ok = check["ok"]
        for t, good in zip(raw["tasks"], ok.tolist()):
            if not good:
                t["start_ok"] = False
        print(f"braked check: {int(ok.sum())} of {ok.size} starts rest")
    out = Path(args.suite)
    out.write_text(maps_suite_json(raw))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
