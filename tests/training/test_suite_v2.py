"""OffroadBench v2: stored tasks whose starts rest braked on the physical model."""

import numpy as np

from offroad_env import OffroadVectorEnv
from train.common.suite import load_suite, suite_config, suite_tasks
from train.suite_starts import braked_check


def test_v2_stores_v1s_grid_of_tasks_and_its_starts_rest_braked():
    v1, v2 = load_suite("offroad-bench-v1"), load_suite("offroad-bench-v2")
    assert v2.version == 2 and v2.num_tasks == v1.num_tasks == len(v2.tasks) == 1400
    assert v2.measured_with and v1.tasks is None
    g = v2.groups()[0]  # the 0.1 m grid's families
    env = OffroadVectorEnv(num_envs=1, config=suite_config(g))
    maps = env.unwrapped.terrain
    tasks = suite_tasks(g, maps)
    assert len(tasks["map_index"]) == g.num_tasks
    # in the order family, level, world; each map's tasks on that map
    key = tasks["family"] * 1000 + tasks["level"] * 10 + tasks["world"]
    assert (np.diff(key) >= 0).all()
    # a task of every family at its top level, held braked 200 steps: nothing ends, < 1 cm
    pick = [int(np.flatnonzero((tasks["family"] == f) & (tasks["level"] == 9))[0])
            for f in range(len(g.families))]
    sub = {k: v[pick] for k, v in tasks.items()}
    r = braked_check(g, sub, 200, maps=maps)
    assert r["ok"].all(), r
