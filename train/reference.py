"""OffroadBench's reference: the privileged planner's outcomes beside every other policy's.

    python -m train.reference runs/bench/offroad-bench-v2/bench.json runs/ref/bench.json \\
        --reference mppi:K=16,H=10 --out runs/ref            # report.md and report.json
    python -m train.reference ... --store                     # and the per-task reference
                                                              # into the suite's JSON

The inputs are ``train.bench`` result files of one suite (any number of policies each); the
report pairs the policies task by task:

- per family: each policy's success rate, and the planner's paired difference to it with an
  exact McNemar test (two-sided binomial on the discordant tasks): a family where the planner
  is significantly (5 %) below another policy is flagged;
- coverage: of the tasks that some other policy finishes, the fraction the planner finishes;
- the union of the shipped heuristics (a task counts if any of them finishes it) against the
  planner;
- the fraction of the gap from the straight line to the planner that each policy closes;
- the tasks no policy finishes (each policy's end reason; they are open, not impossible: see
  :func:`report`) and the tasks only the planner finishes.

The planner is privileged (it plans on the true model and map, :mod:`train.planners.mppi`): it is the
reference learned policies are measured against, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from train.planners.baselines import BASELINES
from train.common.suite import SUITES_DIR, load_suite, maps_suite_json

__all__ = ["mcnemar", "load_results", "report", "report_markdown", "store_reference", "main"]

#: the heuristics the package ships (their union is the bar the reference must clear)
HEURISTICS = tuple(b for b in BASELINES if b != "random")
_VOLATILE = ("chunk_tasks", "chunk_threads", "reference")  # not part of a suite's identity


def mcnemar(a: np.ndarray, b: np.ndarray) -> dict:
    """Exact McNemar test of paired successes ``a`` and ``b`` (bool, same tasks):
    ``{"a_only", "b_only", "p"}`` with ``p`` the two-sided binomial probability of a split
    at least this uneven of the discordant tasks under p = 1/2 (1.0 when there are none)."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    if a.shape != b.shape:
        raise ValueError(f"paired outcomes need one shape, got {a.shape} and {b.shape}")
    n10, n01 = int((a & ~b).sum()), int((~a & b).sum())
    n, k = n10 + n01, min(n10, n01)
    if n == 0:
        return {"a_only": 0, "b_only": 0, "p": 1.0}
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)  # ints: exact for any n
    return {"a_only": n10, "b_only": n01, "p": min(1.0, 2.0 * tail)}


def _identity(suite: dict) -> dict:
    """What makes two results the same suite: all but the chunking and the stored reference
    (the suite's and each task's: storing a new reference does not make another suite)."""
    out = {k: v for k, v in suite.items() if k not in _VOLATILE}
    if isinstance(out.get("tasks"), list):
        out["tasks"] = [{k: v for k, v in t.items() if k != "reference"}
                        if isinstance(t, dict) else t for t in out["tasks"]]
    return out


def load_results(paths) -> dict[str, dict]:
    """The policies' results of ``train.bench`` JSON files, by label; ValueError when the files
    are of different suites (chunking aside) or repeat a label."""
    out, ident, where = {}, None, None
    for p in paths:
        data = json.loads(Path(p).read_text())
        for label, res in data.items():
            this = _identity(res["suite"])
            if ident is None:
                ident, where = this, p
            elif this != ident:
                diff = sorted(k for k in set(this) | set(ident) if this.get(k) != ident.get(k))
                raise ValueError(f"{p} ({label}) is another suite than {where}: {diff} differ")
            if label in out:
                raise ValueError(f"policy {label!r} appears twice ({p})")
            out[label] = res
    if not out:
        raise ValueError("no results given")
    return out


def _families(res: dict) -> np.ndarray:
    """Each task's family name, in the results' task order (family by family); for a suite of
    maps, each task's map name (in the suite's task order)."""
    suite = res.get("suite") or {}
    if suite.get("maps"):
        return np.asarray([t["map"] for t in _map_tasks(res)])
    fams = list(res["by_family"])
    counts = [res["by_family"][f]["all"]["episodes"] for f in fams]
    return np.repeat(np.asarray(fams), counts)


def _map_tasks(res: dict) -> list[dict]:
    """A suite of maps' tasks in the results' order; ValueError for a slice of one."""
    tasks = res["suite"].get("tasks") or []
    if res["suite"].get("subset") is not None or len(tasks) != len(
            res["per_task"]["end_reason"]):
        raise ValueError("a report on a suite of maps needs results of the whole suite, not "
                         "a slice")
    return tasks


def _groups(res: dict) -> dict[str, np.ndarray]:
    """``{row name: (T,) bool mask}``: the table's rows. A suite of families: each family; a
    suite of maps: each tag's value (``difficulty=high``), as the bench's tables give them."""
    suite = res.get("suite") or {}
    if suite.get("maps"):
        tags = {m["name"]: m.get("tags", {}) for m in suite["maps"]}
        tasks = _map_tasks(res)
        out = {}
        for name in res["by_family"]:
            k, _, v = name.partition("=")
            out[name] = np.asarray([tags[t["map"]].get(k) == v for t in tasks])
        return out
    fam = _families(res)
    return {f: fam == f for f in dict.fromkeys(fam)}


def _levels(res: dict) -> np.ndarray:
    """Each task's level (0 for a suite of maps: it has none)."""
    if (res.get("suite") or {}).get("maps"):
        return np.zeros(len(res["per_task"]["end_reason"]), dtype=int)
    return np.concatenate([np.repeat(int(lv), res["by_family"][f][lv]["episodes"])
                           for f in res["by_family"] for lv in res["by_family"][f]
                           if lv != "all"])


def report(results: dict[str, dict], reference: str, straight: str = "heuristic",
           alpha: float = 0.05) -> dict:
    """The paired comparison of ``reference`` with every other policy in ``results`` (see the
    module docstring). Tasks no policy finishes are listed as open: whether a wheeled vehicle
    could finish one is not certified here. The closed forms that would (a ditch wall past
    atan(mu), a ledge past the quasi-static limit) bound a slow climb only; a vehicle that rolls
    down a trench's first wall keeps that speed for the second, so no momentum-free bound
    proves a crossing impossible."""
    if reference not in results:
        raise ValueError(f"no results for the reference {reference!r}; have {sorted(results)}")
    ok = {k: np.asarray([r == "goal_reached" for r in v["per_task"]["end_reason"]])
          for k, v in results.items()}
    ref = ok[reference]
    fam = _families(results[reference])
    others = [k for k in results if k != reference]
    out: dict = {"reference": reference, "privileged": True, "tasks": int(ref.size),
                 "families": {}, "policies": others}
    rows = dict(_groups(results[reference]), all=np.ones(ref.size, bool))
    for f, sel in rows.items():
        cell = {"tasks": int(sel.sum()), "success": {k: float(ok[k][sel].mean()) for k in ok},
                "mcnemar": {}}
        for k in others:
            t = mcnemar(ref[sel], ok[k][sel])
            t["reference_below"] = bool(t["p"] < alpha and t["b_only"] > t["a_only"])
            cell["mcnemar"][k] = t
        out["families"][f] = cell
    any_other = np.any([ok[k] for k in others], 0) if others else np.zeros_like(ref)
    out["coverage"] = {"finished_by_another": int(any_other.sum()),
                       "of_those_reference": int((ref & any_other).sum()),
                       "fraction": float((ref & any_other).sum() / max(1, any_other.sum()))}
    heur = [k for k in results if k in HEURISTICS]
    if heur:
        union = np.any([ok[k] for k in heur], 0)
        out["heuristics_union"] = {"policies": heur, "success": float(union.mean()),
                                   "reference": float(ref.mean()),
                                   "mcnemar": mcnemar(ref, union)}
    if straight in ok and straight != reference:
        gap = float(ref.mean() - ok[straight].mean())
        out["gap_closed"] = {k: (float(ok[k].mean() - ok[straight].mean()) / gap
                                 if gap > 0 else None) for k in others}
        out["gap_closed"]["_gap"] = gap
    res = results[reference]
    level = _levels(res)
    out["levels"] = ({} if (res.get("suite") or {}).get("maps") else
                     {f: {int(lv): {k: float(ok[k][(fam == f) & (level == lv)].mean())
                                    for k in ok}
                          for lv in sorted(set(level[fam == f].tolist()))}
                      for f in dict.fromkeys(fam)})
    why = {k: v["per_task"]["end_reason"] for k, v in results.items()}
    none = np.flatnonzero(~np.any([ok[k] for k in ok], 0))
    out["open"] = [{"task": int(i), "family": str(fam[i]), "level": int(level[i]),
                    "end_reasons": {k: why[k][i] for k in results}} for i in none]
    only = np.flatnonzero(ref & ~any_other)
    out["reference_only"] = [{"task": int(i), "family": str(fam[i]), "level": int(level[i]),
                              "steps": int(res["per_task"]["steps"][i])} for i in only]
    return out


def obstacle_notes(spec, open_tasks: list[dict]) -> dict[int, str]:
    """What every path of an open task of the ``steps`` or ``ditches`` family must cross,
    ``{task: note}`` (tasks numbered as in the results). Both families' features span the map
    (ledges are parallel lines, trenches straight strips), so what the straight line from start
    to goal crosses, every path crosses: an up-ledge (the largest rise over 1.25 cells, samples
    1/4 cell apart) against the suite's quasi-static 4WD limit (a quarter of its top ledge,
    ``family_options["max_step"]``), or a trench (the line dips to its floor) with its walls
    against ``atan(mu)``. These are the obstacles; they do not prove a task impossible
    (momentum is not bounded here)."""
    import torch
    from offroad_env.core.frames import build_maps
    from terrain import level_spec

    from train.common.suite import suite_config, suite_tasks

    want = {(t["family"], t["task"]) for t in open_tasks if t["family"] in ("steps", "ditches")}
    if not want:
        return {}
    from offroad_env.physics.vehicle import preset

    notes = {}
    r = preset(spec.vehicle).wheel_radius  # the ledges in wheel radii
    mu = _mu(spec)
    for g in spec.groups():
        n_g = g.num_tasks
        fams = [f for f in g.families if f in ("steps", "ditches")]
        if not fams or not any(f in fams for f, _ in want):
            continue
        world = build_maps(suite_config(g))
        tasks = suite_tasks(g, world)
        res = min(world.resolution) / 4
        for i in range(n_g):
            fam = g.families[int(tasks["family"][i])]
            # the results number tasks family by family in the suite's order
            k = _result_index(spec, g, tasks, i)
            if (fam, k) not in want:
                continue
            (x0, y0), (x1, y1) = tasks["start"][i][:2], tasks["goal"][i]
            m = int(math.hypot(x1 - x0, y1 - y0) / res) + 2
            t = torch.linspace(0.0, 1.0, m, dtype=torch.float64)
            z = world.height(x0 + t * (x1 - x0), y0 + t * (y1 - y0),
                             torch.full((m,), int(tasks["map_index"][i]))).double()
            lv = level_spec(g.levels.family.__class__(**{**g.levels.family.__dict__,
                                                         "family": fam}), int(
                tasks["level"][i]))
            if fam == "steps":
                up = float((z[5:] - z[:-5]).max())  # a ledge spans one cell (bilinear)
                h = lv["step_height"]
                limit = spec.family_options.get("max_step", 0.0) / 4
                if up > 0.5 * h:
                    notes[k] = (f"every path climbs a ledge of {h:.3f} m"
                                + f" = {h / r:.2f} r"
                                + (f" (quasi-static 4WD limit {limit:.3f} m)" if limit else ""))
            else:
                d, wall = lv["depth"], lv["wall_deg"]
                ends = torch.stack((z[0], z[-1]))
                if float(z.min()) <= float(ends.min()) - 0.9 * d:
                    notes[k] = (f"every path crosses a trench {d:.2f} m deep with "
                                f"{wall:.1f} deg walls (atan(mu) = "
                                f"{math.degrees(math.atan(mu)):.1f} deg)")
    return notes


def _mu(spec) -> float:
    from train.common.suite import suite_config
    return float(suite_config(spec.groups()[0]).ground_mu)


def _result_index(spec, g, tasks, i: int) -> int:
    """The results' number of task ``i`` of group ``g`` (families in the suite's order, each
    family's tasks in the group's order)."""
    fam = g.families[int(tasks["family"][i])]
    before = sum(spec.num_levels * spec.worlds * spec.pairs
                 for f in spec.families[:spec.families.index(fam)])
    same = int((tasks["family"][:i] == tasks["family"][i]).sum())
    return before + same


def report_markdown(rep: dict) -> str:
    """The report as Markdown: the per-family table with the paired tests, then the lists."""
    ref, others = rep["reference"], rep["policies"]
    lines = [f"Reference: `{ref}` (privileged: it plans on the true model and map), "
             f"{rep['tasks']} tasks.", "",
             "| family | " + " | ".join(others) + f" | {ref} | reference below any? |",
             "|---|" + "---|" * (len(others) + 2)]
    for f, c in rep["families"].items():
        cells = []
        for k in others:
            t = c["mcnemar"][k]
            cells.append(f"{100 * c['success'][k]:.1f} (+{t['a_only']}/-{t['b_only']}, "
                         f"p {t['p']:.2g})")
        below = [k for k in others if c["mcnemar"][k]["reference_below"]]
        lines.append(f"| {f} | " + " | ".join(cells) + f" | {100 * c['success'][ref]:.1f} | "
                     + (", ".join(below) if below else "no") + " |")
    lines += ["", "Each cell: success % (tasks only the reference finishes / only that policy "
              "does, McNemar's exact p).", ""]
    cov = rep["coverage"]
    lines.append(f"Of the {cov['finished_by_another']} tasks another policy finishes, the "
                 f"reference finishes {cov['of_those_reference']} "
                 f"({100 * cov['fraction']:.1f} %).")
    if "heuristics_union" in rep:
        u = rep["heuristics_union"]
        lines.append(f"The union of {', '.join(u['policies'])}: {100 * u['success']:.1f} %; "
                     f"the reference {100 * u['reference']:.1f} % (McNemar p "
                     f"{u['mcnemar']['p']:.2g}).")
    if "gap_closed" in rep:
        g = rep["gap_closed"]
        if g["_gap"] > 0:
            lines.append(f"Gap from the straight line to the reference: "
                         f"{100 * g['_gap']:.1f} points; closed by "
                         + ", ".join(f"{k} {100 * v:.0f} %" for k, v in g.items()
                                     if k != "_gap" and v is not None) + ".")
        else:
            lines.append(f"The reference is not above the straight line ({100 * g['_gap']:+.1f} "
                         "points): there is no gap for the others to close, and it is no "
                         "ceiling.")
    lines += ["", f"Tasks no policy finishes (open, not certified impossible): "
              f"{len(rep['open'])}; by family and level:"]
    lines.append(_count_line(rep["open"]))
    known = [t for t in rep["open"] if t.get("obstacle")]
    if known:
        lines += ["", f"Of these, {len(known)} have an obstacle on every path "
                  "(train.reference.obstacle_notes), by family and level:",
                  _count_line(known)]
        for note in sorted({t["obstacle"] for t in known}):
            n = sum(t.get("obstacle") == note for t in known)
            lines.append(f"- {n} x {note}")
    lines += ["", f"Tasks only the reference finishes: {len(rep['reference_only'])}; by "
              "family and level:", _count_line(rep["reference_only"])]
    names = others + [ref]
    if not rep["levels"]:  # a suite of maps: no levels
        return "\n".join(lines) + "\n"
    lines += ["", "Success % by family and level:", "",
              "| family | level | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for f, levels in rep["levels"].items():
        for lv, cell in levels.items():
            lines.append(f"| {f} | {lv} | " + " | ".join(f"{100 * cell[k]:.0f}" for k in names)
                         + " |")
    return "\n".join(lines) + "\n"


def _count_line(tasks: list[dict]) -> str:
    if not tasks:
        return "(none)"
    counts: dict[str, dict[int, int]] = {}
    for t in tasks:
        counts.setdefault(t["family"], {}).setdefault(t["level"], 0)
        counts[t["family"]][t["level"]] += 1
    return "; ".join(f"{f} " + ", ".join(f"L{lv}: {n}" for lv, n in sorted(c.items()))
                     for f, c in counts.items())


def store_reference(suite_path: Path, res: dict, label: str, note: str) -> None:
    """Write the reference's per-task outcome into the suite's JSON: each stored task gets
    ``"reference": {"end_reason", "steps"}`` and the spec a ``reference`` entry naming the
    policy; ValueError if the suite has no stored tasks or the results are of another suite."""
    raw = json.loads(suite_path.read_text())
    if not raw.get("tasks"):
        raise ValueError(f"{suite_path} stores no tasks (a per-task reference needs them)")
    theirs = res["suite"]
    if (raw.get("name"), raw.get("version")) != (theirs.get("name"), theirs.get("version")) or [
            (t["start"], t["goal"]) for t in raw["tasks"]] != [
            (t["start"], t["goal"]) for t in theirs.get("tasks") or []]:
        raise ValueError(f"the results are not of the suite in {suite_path}")
    per = res["per_task"]
    if raw.get("maps"):  # a suite of maps: the results are in the suite's task order
        _map_tasks(res)
        order = list(range(len(raw["tasks"])))
    else:
        fams = list(res["by_family"])
        order = sorted(range(len(raw["tasks"])), key=lambda i: (
            fams.index(raw["tasks"][i]["family"]), raw["tasks"][i]["level"],
            raw["tasks"][i]["world"], i))  # the results' task order (as the suite runs them)
    for j, i in enumerate(order):
        raw["tasks"][i]["reference"] = {"end_reason": per["end_reason"][j],
                                        "steps": per["steps"][j]}
    ok = sum(r == "goal_reached" for r in per["end_reason"])
    raw["reference"] = {"policy": label, "privileged": True, "success_rate": ok / len(order),
                        "note": note}
    suite_path.write_text(maps_suite_json(raw) if raw.get("maps")
                          else json.dumps(raw, indent=1) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.reference",
                                description=__doc__.split("\n")[0])
    p.add_argument("results", nargs="+", help="train.bench JSON files of one suite")
    p.add_argument("--reference", required=True, help="the reference policy's label")
    p.add_argument("--straight", default="heuristic", help="the straight-line policy's label")
    p.add_argument("--out", default=None, help="folder for report.md and report.json")
    p.add_argument("--store", action="store_true",
                   help="write the reference per task into train/suites/<suite>.json")
    p.add_argument("--note", default="", help="with --store: how the reference was run")
    p.add_argument("--obstacles", action="store_true",
                   help="name what every path of an open steps or ditches task crosses "
                        "(builds the suite's maps)")
    p.add_argument("--suite", default=None,
                   help="the suite's name or file for --obstacles (default: the results')")
    args = p.parse_args(argv)
    try:
        results = load_results(args.results)
        rep = report(results, args.reference, args.straight)
        if args.obstacles:
            spec = load_suite(args.suite or results[args.reference]["suite"]["name"])
            for k, note in obstacle_notes(spec, rep["open"]).items():
                next(t for t in rep["open"] if t["task"] == k)["obstacle"] = note
        if args.store:
            name = results[args.reference]["suite"]["name"]
            store_reference(SUITES_DIR / f"{name}.json", results[args.reference],
                            args.reference, args.note)
    except (ValueError, OSError, KeyError) as exc:
        print(f"train.reference: error: {exc}", file=sys.stderr)
        return 2
    md = report_markdown(rep)
    print(md)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(md)
        (out / "report.json").write_text(json.dumps(rep, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
