"""Suites of anyone's worlds (issue 67): a user's folder of maps and a task list becomes a suite
without code, runs from the command line as the same maps built in Python do, and refuses bad
input where it enters; ``verti-bench-v1`` is Verti-Bench's worlds and rules, scaled."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv, make_config

from train.bench.command import main as bench_main
from train.common.suite import SuiteSpec, load_suite, suite_episode_steps
from train.planners.baselines import baseline

MUD = {"n": 1.1, "k_c": 0.0, "k_phi": 2e6, "c": 0.0, "phi_deg": 30.0, "K": 0.01}
GRIP = {"mu": 0.6255, "c_rr": 0.03}


def _heights(seed):
    """A 12 x 12 m hill at 0.1 m (121 x 121), its rows growing with y."""
    y, x = np.mgrid[-6:6.05:0.1, -6:6.05:0.1]
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.8, 1.6, 2)
    return a * np.exp(-((x - 1) ** 2 + y ** 2) / 2) + b * np.sin(2 * x) * 0.1


def _materials():
    """Mud in a band across the middle, the user's gravel west of it, hard ground east."""
    m = np.zeros((121, 121), np.int64)
    m[:, :50] = 1
    m[:, 55:70] = 2
    return m


def _user_folder(tmp_path):
    """Two DEMs (an ESRI grid and a .npy with its sidecar), a material map, the suite JSON."""
    for i, name in enumerate(("north.asc", "south.npy")):
        hm = terrain.HeightMap(_heights(i), 0.1, origin=(-6.0, -6.0))
        terrain.save(hm, tmp_path / name)
    np.save(tmp_path / "bands.npy", _materials())
    tasks = []
    for mp in ("north", "south"):
        for sx, sy, gx, gy in ((-4.0, -3.0, 4.0, -3.0), (-4.0, 2.0, 4.0, 3.0),
                               (3.5, 0.0, -3.5, 0.5)):
            tasks.append({"map": mp, "start": [sx, sy, math.atan2(gy - sy, gx - sx)],
                          "goal": [gx, gy]})
    suite = {
        "name": "my-worlds", "version": 1, "vehicle": "husky", "dynamics": "rigid_body",
        "ground": "rigid_contact", "time_limit_s": 12.0, "stuck_time_s": 4.0,
        "goal_radius": 0.75,
        "materials": {"my/gravel": GRIP, "my/mud": MUD},
        "maps": [
            {"name": "north", "heights": "north.asc", "materials": "bands.npy",
             "material_names": ["hard", "my/gravel", "my/mud"], "tags": {"side": "north"}},
            {"name": "south", "heights": "south.npy", "materials": "bands.npy",
             "material_names": ["hard", "my/gravel", "my/mud"], "tags": {"side": "south"}}],
        "tasks": tasks}
    path = tmp_path / "my-worlds.json"
    path.write_text(json.dumps(suite))
    return path, suite


def _python_run(suite):
    """The same tasks on the same maps built here in Python (no suite code): the heuristic
    baseline, each task's first episode: ``(end reasons, steps)``."""
    maps = terrain.HeightMap.stack([
        terrain.HeightMap(_heights(i), 0.1, origin=(-6.0, -6.0), materials=_materials(),
                          material_names=("hard", "my/gravel", "my/mud"),
                          material_defs=suite["materials"]) for i in range(2)])
    cfg = make_config("traverse", vehicle="husky", dynamics="rigid_body",
                      ground="rigid_contact", terrain=maps)
    d = min(math.dist(t["start"][:2], t["goal"]) for t in suite["tasks"])
    cfg = replace(cfg, task=replace(cfg.task, goal_radius=0.75, stuck_time=4.0,
                                    goal_distance=(0.25 * d, 0.5 * d), spawn_margin=0.0))
    T = len(suite["tasks"])
    steps = int(round(12.0 / (cfg.dt * cfg.action_repeat)))
    env = OffroadVectorEnv(num_envs=T, config=cfg, max_episode_steps=steps)
    base = env.unwrapped
    mi = torch.as_tensor([0 if t["map"] == "north" else 1 for t in suite["tasks"]])
    base.set_map_range(mi, torch.ones_like(mi))
    obs, _ = env.reset(seed=0, options={
        "start_pose": torch.tensor([t["start"] for t in suite["tasks"]], dtype=torch.float64),
        "goal": torch.tensor([t["goal"] for t in suite["tasks"]], dtype=torch.float64)})
    act = baseline("heuristic", env, 0)
    reason, length = [None] * T, [0] * T
    for k in range(steps):
        obs, _, term, trunc, info = env.step(act(obs))
        for i in torch.nonzero(term | trunc).flatten().tolist():
            if reason[i] is None:
                reason[i] = base.end_labels[int(info["end_reason"][i])]
                length[i] = k + 1
        if all(r is not None for r in reason):
            break
    return reason, length


def test_a_folder_of_dems_and_a_task_list_runs_from_the_command_line_as_in_python(tmp_path):
    path, suite = _user_folder(tmp_path)
    out = tmp_path / "out"
    assert bench_main(["--suite", str(path), "--policy", "heuristic", "--out", str(out),
                       "--no-progress"]) == 0
    res = json.loads((out / "bench.json").read_text())["heuristic"]
    reason, length = _python_run(suite)
    assert res["per_task"]["end_reason"] == reason
    assert res["per_task"]["steps"] == length
    assert set(res["by_family"]) == {"side=north", "side=south"}
    assert res["by_family"]["side=north"]["all"]["episodes"] == 3
    assert len(set(reason)) > 1, reason  # the hills and the mud tell the tasks apart
    spec = load_suite(str(path))
    assert suite_episode_steps(spec, make_config("traverse")) == 240
    # the stack carries the suite's declarations and the user's material map
    from train.common.worlds import world_stack
    stack = world_stack(spec)
    assert stack.material_defs["my/gravel"] == GRIP
    assert stack.material_names == ("hard", "my/gravel", "my/mud")


def _refused(tmp_path, match, **change):
    path, suite = _user_folder(tmp_path)
    suite.update(change)
    path.write_text(json.dumps(suite))
    with pytest.raises(ValueError, match=match):
        load_suite(str(path))


def test_bad_input_is_refused_where_the_suite_enters(tmp_path):
    path, suite = _user_folder(tmp_path)
    maps = suite["maps"]
    bad = [dict(maps[0], material_names=["hard", "my/gravel", "my/clay"]), maps[1]]
    _refused(tmp_path, r"map 'north': material_names names 'my/clay', which is neither",
             maps=bad)
    _refused(tmp_path, r"materials\['my/mud'\]: missing \['K'\]",
             materials={"my/gravel": GRIP, "my/mud": {k: v for k, v in MUD.items()
                                                       if k != "K"}})
    _refused(tmp_path, r"materials: declared material 'snow' is a built-in soil",
             materials={"snow": MUD})
    tasks = [dict(suite["tasks"][0], goal=[9.0, 0.0])] + suite["tasks"][1:]
    _refused(tmp_path, r"tasks\[0\] goal \(9.0, 0.0\) is off its map 'north', which spans "
                       r"x \[-6.0, 6.0\]", tasks=tasks)
    _refused(tmp_path, r"map 'south': heights file .*gone.npy' not found",
             maps=[maps[0], dict(maps[1], heights="gone.npy")])
    _refused(tmp_path, r"tasks\[0\]: 'map' must name one of the suite's maps",
             tasks=[dict(suite["tasks"][0], map="east")])
    _refused(tmp_path, "unknown dataset 'chrono'",
             maps=[maps[0], {"name": "south", "dataset": "chrono", "key": 1}])
    _refused(tmp_path, "stuck_speed needs stuck_time_s", stuck_speed=0.5, stuck_time_s=None)


def test_verti_bench_v1_is_its_worlds_pairs_and_rules_scaled():
    from terrain import verti_bench as vb
    from train.verti_bench import scaled_rules

    spec = load_suite("verti-bench-v1")
    assert spec.num_tasks == 1000 and len(spec.maps) == 100
    assert spec.obs_terms == load_suite("offroad-bench-v2").obs_terms
    r = scaled_rules()
    assert r == pytest.approx({"goal_radius": 8 / 6, "time_limit_s": 40.0,
                               "stuck_time_s": 20 / 3, "stuck_speed": 0.5})
    assert (spec.goal_radius, spec.time_limit_s, spec.stuck_time_s, spec.stuck_speed) == (
        r["goal_radius"], r["time_limit_s"], r["stuck_time_s"], r["stuck_speed"])
    tags = [m["tags"] for m in spec.maps]
    assert sum(t["terrain"] == "rigid" for t in tags) == 60
    assert [t["difficulty"] for t in tags].count("low") == 35
    for k, t in enumerate(spec.tasks[:30]):
        w = int(t["map"][5:])
        (sx, sy), (gx, gy) = vb.world_pairs(w, 1 / 6)[k % 10]
        assert t["start"][:2] == pytest.approx([sx, sy]) and t["goal"] == pytest.approx(
            [gx, gy])
        assert t["start"][2] == pytest.approx(math.atan2(gy - sy, gx - sx))
    failed = sum(1 for t in spec.tasks if t.get("start_ok") is False)
    assert 0 < failed < 200


def test_a_slice_of_verti_bench_runs_offline_and_reports_each_tag():
    from train.bench.run import run_suite

    spec = load_suite("verti-bench-v1").select(worlds=["world1", "world61", "world95"],
                                               pairs=[0, 5])
    res = run_suite(spec, "heuristic")
    assert res["tasks"] == 6
    assert set(res["by_family"]) == {"difficulty=high", "difficulty=mid", "terrain=rigid",
                                     "terrain=deformable", "terrain=mixed"}
    assert sum(res["by_family"][f"terrain={k}"]["all"]["episodes"]
               for k in ("rigid", "deformable", "mixed")) == 6
    assert res["per_task"]["task"] == list(spec.subset)
    assert len(res["start_ok"]) == 6
    assert isinstance(SuiteSpec, type)
