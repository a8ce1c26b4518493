"""OffroadBench v1: its levels follow from the physics, families on grids of their own run in
groups, the physics-aware baseline."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from offroad_env.sim.config import preset
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.physics.stability import ledge_climb_limit
from train.bench import SuiteSpec, load_suite, run_suite
from train.common.suite import suite_env, suite_tasks


def test_v1s_top_levels_are_stated_by_the_husky_on_its_ground():
    spec = load_suite("offroad-bench-v1")
    assert spec.version == 1 and spec.num_tasks == 1400 and spec.dynamics == "rigid_body"
    assert spec.families == ("slopes", "ditches", "boulders", "steps", "rough", "soft_soil",
                             "real")
    assert spec.stuck_time_s == 5.0
    husky, mu = preset("husky"), RigidBodyParams().mu
    r, traction = husky.wheel_radius, math.degrees(math.atan(mu))
    o = spec.family_options
    # ledges to 4 x the quasi-static 4WD limit (0.46 r at mu 0.8): the Husky at its full
    # 1 m/s climbs about twice that limit on momentum, a slow approach stalls at 1.25 x
    assert o["max_step"] == pytest.approx(4 * ledge_climb_limit(husky, mu) * r, rel=1e-5)
    assert o["max_wall_deg"] == pytest.approx(1.2 * traction, rel=1e-5)
    assert o["max_sigma"] == pytest.approx(2 * r, rel=1e-5)
    assert o["real_max_slope_deg"] == pytest.approx(1.05 * traction, rel=1e-5)
    # soft-soil hills stay under atan(mu) (climbable on hard ground; the soils stop the Husky
    # near 20 deg on dry sand), and cover the whole map at the top level
    assert 30.0 < o["soil_slope_deg"] < traction and o["max_soil_cover"] == 1.0
    # one soft-soil hill per 20 m^2, twice the slopes family's: at the slopes' density the
    # straight line crossed level 9 in 50 of 100 tasks over five draws, the bar's edge
    assert o["soil_hill_density"] == pytest.approx(2 / 40)
    # real starts stand where the brake holds (below atan(mu))
    assert spec.per_family["real"]["max_start_slope_deg"] < traction
    # the steps' grid resolves every level's ledge: spacing < h / tan(theta), cos(theta) =
    # 1 - h / r; near h = r (theta -> 90 deg) the one-cell ramp is past 80 deg as the edge is,
    # where tan > 5.6 = 7 mu: neither is climbed by friction (a ledge of h >= r is a wall the
    # wheel meets square, on any grid)
    steps = next(g for g in spec.groups() if g.families == ("steps",))
    lv = steps.levels
    d = max(steps.resolution)
    for level in range(spec.num_levels):
        import terrain
        h = terrain.level_spec(replace(lv.family, family="steps"), level)["step_height"]
        if h < r:
            resolved = d < h / math.tan(math.acos(1 - h / r))
            assert resolved or math.degrees(math.atan(h / d)) > 80.0, level
    assert [g.families for g in spec.groups()] == [
        ("slopes", "ditches", "boulders", "rough", "soft_soil"), ("steps",), ("real",)]
    # v0 is untouched: one group, no options
    v0 = load_suite("offroad-bench-v0")
    assert v0.groups() == [v0] and v0.family_options == {} and v0.per_family == {}


def test_suite_options_are_checked_where_they_enter():
    base = SuiteSpec(name="t", families=("slopes", "steps"))
    with pytest.raises(ValueError, match=r"family_options \['max_stepz'\] are not terrain"):
        replace(base, family_options={"max_stepz": 0.1})
    with pytest.raises(ValueError, match="max_step must be a finite number > 0"):
        replace(base, family_options={"max_step": -0.1})
    with pytest.raises(ValueError, match=r"per_family\['rough'\] must be a family of the suite"):
        replace(base, per_family={"rough": {"size": [8, 8]}})
    with pytest.raises(ValueError, match=r"per_family\['steps'\]"):
        replace(base, per_family={"steps": {"spacing": 0.01}})
    with pytest.raises(ValueError, match="obs_terms must be distinct names from"):
        replace(base, obs_terms=("goal", "goal_compass"))


def test_a_suites_observation_terms_are_what_its_env_and_training_see():
    """v1 names its observation (the traverse one with ``goal_polar``): the suite's env, a
    group's and the training env of ``--suite`` all show it; v0 keeps the traverse task's."""
    from train.common.envconfig import env_kwargs
    spec = load_suite("offroad-bench-v1")
    assert "goal_polar" in spec.obs_terms and "goal" in spec.obs_terms
    small = replace(spec.groups()[2], pairs=1, worlds=1, num_levels=1)
    names = [n for n, _, _ in suite_env(small, 2).unwrapped.obs_layout]
    assert names == list(spec.obs_terms) + ["height_scan"]
    cfg = env_kwargs("offroad_env/OffroadTraverse-v1", {"suite": "offroad-bench-v1"})["config"]
    assert cfg.terms == tuple(names)
    v0 = load_suite("offroad-bench-v0")
    v0_env = suite_env(replace(v0, families=("slopes",), num_levels=1, worlds=1, pairs=1), 2)
    assert v0.obs_terms is None and "goal_polar" not in v0_env.unwrapped.config.terms


def test_soft_soils_hill_density_puts_more_sand_past_the_huskys_climb():
    """``soil_hill_density`` draws that many hills per m^2 on a soft-soil map (the default,
    1/40, is the slopes family's, to the last bit); at v1's 1/20 twice the hills, so more of
    a top-level map is steeper than the 20 deg at which dry sand stops the Husky."""
    import terrain
    from terrain.families import FamilyConfig, _slopes, family_level, grid_xy
    base = FamilyConfig(family="soft_soil", soil_slope_deg=38.0, max_soil_cover=1.0)
    rng = lambda: np.random.default_rng((7, 0))  # noqa: E731
    spec = terrain.level_spec(base, 9)
    assert spec.pop("hill_density") == 1 / 40  # the slopes family's own count
    assert np.array_equal(family_level(base, 9, rng()), _slopes(base, spec, *grid_xy(base), rng()))

    def steep_share(cfg):
        shares = []
        for seed in range(4):
            z = family_level(cfg, 9, np.random.default_rng((seed, 0)))
            gy, gx = np.gradient(z, *reversed(cfg.resolution))
            shares.append(np.mean(np.degrees(np.arctan(np.hypot(gx, gy))) > 20.0))
        return float(np.mean(shares))
    sparse, dense = steep_share(base), steep_share(replace(base, soil_hill_density=0.05))
    assert terrain.level_spec(replace(base, soil_hill_density=0.05), 9)["hill_density"] == 0.05
    assert dense > 1.4 * sparse, (sparse, dense)
    with pytest.raises(ValueError, match="soil_hill_density must be a finite number > 0"):
        replace(base, soil_hill_density=0.0)


TINY = SuiteSpec(name="tiny-groups", dynamics="rigid_body", families=("slopes", "steps", "real"),
                 num_levels=2, worlds=1, pairs=2, size=(16.0, 16.0), resolution=(0.2, 0.2),
                 goal_distance=(4.0, 5.0), time_limit_s=4.0, stuck_time_s=2.0,
                 family_options={"max_step": 0.1, "real_max_slope_deg": 10.0},
                 per_family={"steps": {"size": [14.0, 14.0], "resolution": [0.04, 0.04]},
                             "real": {"max_start_slope_deg": 20.0}})


def test_a_suite_in_groups_runs_each_on_its_grid_and_reports_in_family_order():
    a = run_suite(TINY, "heuristic")
    assert json.dumps(a, sort_keys=True) == json.dumps(run_suite(TINY, "heuristic"),
                                                        sort_keys=True)
    assert list(a["by_family"]) == ["slopes", "steps", "real"]
    assert a["tasks"] == TINY.num_tasks == 12 and len(a["per_task"]["steps"]) == 12
    assert a["level_specs"]["steps"][1]["step_height"] == pytest.approx(0.1)
    # each group's tasks are those of its own spec, run alone
    groups = TINY.groups()
    assert [g.families for g in groups] == [("slopes",), ("steps",), ("real",)]
    assert groups[1].resolution == (0.04, 0.04) and groups[2].max_start_slope_deg == 20.0
    alone = run_suite(groups[1], "heuristic")
    assert alone["per_task"]["steps"] == a["per_task"]["steps"][4:8]
    assert alone["by_family"]["steps"] == a["by_family"]["steps"]
    env = suite_env(groups[1], 1)
    assert env.unwrapped.terrain.resolution == pytest.approx((0.04, 0.04))
    t = suite_tasks(groups[1], env.unwrapped.terrain)
    assert len(t["start"]) == 4
    env.close()


def _plane_env(slope_deg):
    """One traverse task on a plane rising along +x by ``slope_deg``, the physical Husky at
    the origin facing +x and its goal 8 m up the fall line."""
    import terrain
    from offroad_env import OffroadVectorEnv, make_config
    cfg = make_config("traverse", dynamics="rigid_body",
                      terrain=terrain.PlaneConfig(size=(24.0, 24.0), resolution=(0.1, 0.1),
                                                  slope_x=math.tan(math.radians(slope_deg))))
    env = OffroadVectorEnv(num_envs=1, config=cfg)
    f64 = torch.float64
    obs, _ = env.reset(seed=0, options={"start_pose": torch.tensor([[-4.0, 0.0, 0.0]], dtype=f64),
                                        "goal": torch.tensor([[4.0, 0.0]], dtype=f64)})
    return env, obs


def test_the_physics_baseline_takes_a_slope_past_traction_on_a_diagonal():
    from train.planners.baselines import baseline
    # 20 deg: within traction (atan 0.8 = 38.7 deg): straight at the goal, as the heuristic
    env, obs = _plane_env(20.0)
    a = baseline("physics", env, 0)(obs)
    assert torch.equal(a, baseline("heuristic", env, 0)(obs))
    assert a[0, 0] == a[0, 1] == 1.0
    env.close()
    # 45 deg straight up is past it: the physics baseline turns onto a diagonal, the
    # heuristic drives straight up
    env, obs = _plane_env(45.0)
    a = baseline("physics", env, 0)(obs)
    h = baseline("heuristic", env, 0)(obs)
    assert h[0, 0] == h[0, 1] == 1.0
    assert a[0, 0] != a[0, 1]
    env.close()
