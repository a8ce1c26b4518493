"""Slicing a suite (``SuiteSpec.select``) is one call that keeps each task on its own map and
its stored start and goal: on OffroadBench v2 a slice's tasks end exactly as the same tasks do
in a run of their whole family, and the trial's recipe (``dataclasses.replace``) names it."""

import dataclasses

import numpy as np
import pytest

from train.bench import load_suite, run_suite
from train.common.suite import suite_tasks

V2 = load_suite("offroad-bench-v2")


def test_select_picks_the_tasks_by_family_level_world_pair_and_index():
    per = V2.num_levels * V2.worlds * V2.pairs
    fi = V2.families.index("steps")
    sl = V2.select(families=["steps"], levels=[8, 9], worlds=[1], pairs=[0, 3])
    want = [fi * per + lv * V2.worlds * V2.pairs + 1 * V2.pairs + p for lv in (8, 9)
            for p in (0, 3)]
    assert sl.task_ids().tolist() == want and sl.num_tasks == 4
    assert sl.families == V2.families and sl.grid_tasks == V2.grid_tasks  # the grid stays
    assert V2.select(tasks=[5, 3, 5]).subset == (3, 5)
    assert sl.select(tasks=want[1:3]).task_ids().tolist() == want[1:3]
    for kw, match in ((dict(families=["dunes"]), r"families \['dunes'\] not in the suite"),
                      (dict(levels=[10]), r"levels \[10\] not in the suite"),
                      (dict(tasks=[V2.grid_tasks]), "tasks must be indices within"),
                      (dict(families=["steps"], tasks=[0]), "the slice holds no task")):
        with pytest.raises(ValueError, match=match):
            V2.select(**kw)
    with pytest.raises(ValueError, match=r"SuiteSpec.select\(families="):
        dataclasses.replace(V2, families=("steps",), worlds=1, pairs=1)


def test_a_slice_keeps_each_stored_task_with_its_start_goal_and_map():
    sl = V2.select(families=["boulders", "real"], levels=[3], pairs=[2])
    ids = sl.task_ids()
    full = suite_tasks(V2, None)
    part = suite_tasks(sl, None)
    for k in ("map_index", "start", "goal", "level", "world", "task"):
        assert np.array_equal(part[k], full[k][ids]), k
    stored = [t for t in V2.tasks if t["family"] in ("boulders", "real") and t["level"] == 3]
    assert np.allclose(part["start"], [t["start"] for t in stored if
                                       stored.index(t) % V2.pairs == 2])


@pytest.mark.filterwarnings("ignore")
def test_a_slices_tasks_end_as_they_do_in_a_run_of_their_whole_family():
    """The same map, start and goal in other rows of a smaller batch: the same ends. (A batch
    of another size may round the last bits of its vectorised kernels otherwise, so a step
    count may differ by a few: measured 0-3 of about 280 here.)"""
    fam = V2.select(families=["steps"], levels=[6, 9])  # 40 tasks on their own grid group
    sl = fam.select(worlds=[0], pairs=[1, 4, 7])       # 6 of them, in other rows
    from train.common.suite import suite_env

    whole, part = suite_env(fam, 1).unwrapped.terrain, suite_env(sl, 1).unwrapped.terrain
    idx = suite_tasks(sl, None)["map_index"]
    assert np.array_equal(suite_tasks(fam, None)["map_index"][
        np.searchsorted(fam.task_ids(), sl.task_ids())], idx)
    for i in set(idx.tolist()):  # each task's map is the one the whole suite gives it
        assert np.array_equal(part[i].heights.numpy(), whole[i].heights.numpy(), equal_nan=True)
    a, b = run_suite(fam, "heuristic"), run_suite(sl, "heuristic")
    pos = {t: i for i, t in enumerate(a["per_task"]["task"])}
    for j, t in enumerate(b["per_task"]["task"]):
        assert b["per_task"]["end_reason"][j] == a["per_task"]["end_reason"][pos[t]], t
        assert abs(b["per_task"]["steps"][j] - a["per_task"]["steps"][pos[t]]) <= 10, t
    assert b["tasks"] == 6 and list(b["by_family"]) == ["steps"]
    assert sorted(b["by_family"]["steps"]) == ["6", "9", "all"]
    assert tuple(b["suite"]["subset"]) == sl.subset  # bench.json records the slice
