"""OffroadBench's reference report (train.reference): the paired test and the tables."""

import json
import math

import numpy as np
import pytest

from train.reference import load_results, mcnemar, report, report_markdown


def test_mcnemar_is_the_exact_two_sided_binomial_of_the_discordant_tasks():
    a = np.array([1, 0, 0, 0, 0, 0, 1, 1], bool)  # a only: task 0; b only: tasks 1-5
    b = np.array([0, 1, 1, 1, 1, 1, 1, 0], bool)  # task 7: a only too -> 2 vs 5
    t = mcnemar(a, b)
    assert (t["a_only"], t["b_only"]) == (2, 5)
    # P(X <= 2 | n 7, 1/2) = (1 + 7 + 21) / 128; two-sided: twice that
    assert math.isclose(t["p"], 2 * 29 / 128)
    assert mcnemar(a, a) == {"a_only": 0, "b_only": 0, "p": 1.0}
    assert mcnemar(np.ones(12, bool), np.zeros(12, bool))["p"] == pytest.approx(2 / 4096)
    with pytest.raises(ValueError, match="one shape"):
        mcnemar(a, b[:3])


def _result(reasons, fams=("a", "b"), name="s"):
    per = len(reasons) // len(fams)
    return {"suite": {"name": name, "version": 1, "chunk_tasks": None},
            "by_family": {f: {"all": {"episodes": per}, "0": {"episodes": per}} for f in fams},
            "per_task": {"end_reason": list(reasons), "steps": [10] * len(reasons)}}


def test_report_pairs_the_policies_task_by_task(tmp_path):
    G, S = "goal_reached", "stuck"
    res = {"heuristic": _result([G, G, S, S, G, S, S, S]),
           "careful": _result([G, S, G, S, S, S, S, S]),
           "mppi": _result([G, G, G, G, G, S, G, S])}
    rep = report(res, "mppi")
    # union of the heuristics: tasks 0, 1, 2, 4 = 4 of 8; the planner 6 of 8
    assert rep["heuristics_union"]["success"] == 0.5 and rep["heuristics_union"]["reference"] == 0.75
    assert rep["coverage"] == {"finished_by_another": 4, "of_those_reference": 4, "fraction": 1.0}
    # straight line 3/8, planner 6/8: careful (2/8) closes -1/3 of the gap
    assert rep["gap_closed"]["careful"] == pytest.approx(-1 / 3)
    assert [t["task"] for t in rep["open"]] == [5, 7]
    assert [t["task"] for t in rep["reference_only"]] == [3, 6]
    assert rep["families"]["a"]["success"]["mppi"] == 1.0
    assert not any(t["reference_below"] for c in rep["families"].values()
                   for t in c["mcnemar"].values())
    md = report_markdown(rep)
    assert "privileged" in md and "b L0: 2" in md
    # files of two suites are refused, naming the field
    p1, p2 = tmp_path / "1.json", tmp_path / "2.json"
    p1.write_text(json.dumps({"mppi": res["mppi"]}))
    p2.write_text(json.dumps({"heuristic": _result([G] * 8, name="other")}))
    with pytest.raises(ValueError, match="name"):
        load_results([p1, p2])
    with pytest.raises(ValueError, match="no results for the reference"):
        report(res, "cem")
    # a result run before a reference was stored in the suite's tasks is of the same suite
    task = {"family": "a", "level": 0, "start": [0.0, 0.0, 0.0], "goal": [1.0, 1.0]}
    before, after = _result([G] * 8), _result([G] * 8)
    before["suite"]["tasks"] = [dict(task)] * 8
    after["suite"]["tasks"] = [dict(task, reference={"end_reason": G, "steps": 9})] * 8
    p1.write_text(json.dumps({"heuristic": before}))
    p2.write_text(json.dumps({"mppi": after}))
    assert set(load_results([p1, p2])) == {"heuristic", "mppi"}
    after["suite"]["tasks"][3] = dict(task, goal=[2.0, 1.0])
    p2.write_text(json.dumps({"mppi": after}))
    with pytest.raises(ValueError, match="tasks"):
        load_results([p1, p2])


def test_obstacle_notes_name_the_ledge_every_path_climbs():
    # offroad-bench-v2's steps family at level 9: ledges of 4 x the quasi-static 4WD limit
    # (0.304 m = 1.84 r) span the map, so a pair with an up-ledge between them is noted
    from train.reference import obstacle_notes
    from train.common.suite import load_suite

    spec = load_suite("offroad-bench-v2")
    tasks = [{"task": 780 + i, "family": "steps", "level": 9} for i in range(20)]
    notes = obstacle_notes(spec, tasks)
    assert len(notes) >= 10 and set(notes) <= {t["task"] for t in tasks}
    assert all("0.304 m = 1.84 r (quasi-static 4WD limit 0.076 m)" in n for n in notes.values())


def test_a_reference_below_the_straight_line_is_said_to_be_no_ceiling():
    G, S = "goal_reached", "stuck"
    res = {"heuristic": _result([G, G, G, S]), "mppi": _result([G, G, S, S])}
    md = report_markdown(report(res, "mppi"))
    assert "not above the straight line (-25.0 points)" in md and "no ceiling" in md


def test_a_suite_of_maps_is_reported_by_its_tags_and_stored_in_its_task_order(tmp_path):
    """Verti-Bench's suite: tasks in the suite's order (not family by family), rows by the maps'
    tags (``difficulty=high``), no levels; the stored reference lands on each task in order and
    the file keeps a task per line."""
    from train.reference import store_reference
    G, S = "goal_reached", "stuck"
    maps = [{"name": "w1", "tags": {"difficulty": "high"}},
            {"name": "w2", "tags": {"difficulty": "low"}}]
    tasks = [{"map": m, "start": [float(i), 0.0, 0.0], "goal": [5.0, 0.0]}
             for i, m in enumerate(("w1", "w2", "w1", "w2"))]
    suite = {"name": "m", "version": 1, "maps": maps, "tasks": tasks, "subset": None}

    def res(reasons):
        return {"suite": suite, "by_family": {"difficulty=high": {"all": {"episodes": 2}},
                                              "difficulty=low": {"all": {"episodes": 2}}},
                "per_task": {"end_reason": list(reasons), "steps": [7, 8, 9, 10]}}
    rep = report({"heuristic": res([S, G, S, S]), "path": res([G, G, G, S])}, "path")
    assert rep["families"]["difficulty=high"]["success"] == {"heuristic": 0.0, "path": 1.0}
    assert rep["families"]["difficulty=low"]["success"] == {"heuristic": 0.5, "path": 0.5}
    assert rep["levels"] == {} and "| difficulty=high |" in report_markdown(rep)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(suite))
    store_reference(path, res([G, G, G, S]), "path", "note")
    raw = json.loads(path.read_text())
    assert [t["reference"]["steps"] for t in raw["tasks"]] == [7, 8, 9, 10]
    assert raw["reference"]["success_rate"] == 0.75
    assert len(path.read_text().splitlines()) < 40  # a task per line
    with pytest.raises(ValueError, match="not a slice"):
        report({"path": dict(res([G] * 4), suite=dict(suite, subset=[0, 1]))}, "path")
