"""The configs: their checks where they are built, frozen values, make_config's terrain and task
arguments."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import offroad_env
from offroad_env import OffroadEnv, OffroadVectorEnv
from offroad_env.sim.config import HeightScanConfig, SimConfig


def test_bad_config_is_a_clear_error():
    with pytest.raises(ValueError, match="dynamics"):
        OffroadEnv(dynamics="hovercraft")
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        OffroadEnv(wheel_count=3)
    with pytest.raises(ValueError, match="preset"):
        OffroadEnv(vehicle="tank")
    with pytest.raises(ValueError, match="task"):
        OffroadEnv(task="race")
    with pytest.raises(ValueError, match="obs_terms"):
        OffroadEnv(obs_terms=("roll_pitch", "speed"))


def test_terrain_may_be_a_map_file_or_a_generator_name_and_unknown_keywords_are_type_errors(
        tmp_path):
    import terrain as terrain_pkg
    h = terrain_pkg.generate(terrain_pkg.PerlinConfig(size=(30.0, 30.0), resolution=(0.2, 0.2)), 2)
    np.save(tmp_path / "m.npy", h)
    env = gym.make("offroad_env/OffroadNav-v1", terrain=str(tmp_path / "m.npy"))
    env.reset(seed=0)
    assert env.unwrapped.terrain.shape == h.shape
    venv = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                        vectorization_mode="vector_entry_point", terrain=tmp_path / "m.npy")
    venv.reset(seed=0)
    assert venv.unwrapped.terrain.shape == h.shape
    named = OffroadVectorEnv(num_envs=2, terrain="bumps", num_maps=1)
    assert isinstance(named.config.terrain, terrain_pkg.BumpsConfig)
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gym.make("offroad_env/OffroadNav-v1", frameskip=4)
    with pytest.raises(terrain_pkg.TerrainFileError, match="no such file"):
        OffroadVectorEnv(num_envs=2, terrain=tmp_path / "missing.png")


def test_terrain_may_be_a_heightmap_or_an_array_with_its_resolution():
    import terrain as terrain_pkg
    h = terrain_pkg.generate(terrain_pkg.PerlinConfig(size=(30.0, 30.0), resolution=(0.2, 0.2)), 3)
    a = OffroadVectorEnv(num_envs=2, terrain=(h, 0.2))
    b = OffroadVectorEnv(num_envs=2, terrain=terrain_pkg.HeightMap(h, 0.2))
    assert a.terrain.shape == b.terrain.shape == h.shape and a.terrain.resolution == (0.2, 0.2)
    with pytest.raises(ValueError, match="heightmap must be a terrain.HeightMap"):
        OffroadVectorEnv(num_envs=2, heightmap=h)  # the array alone: its spacing is unknown


def test_a_task_config_passed_to_a_registered_id_replaces_only_its_task():
    # gym.make(id, task=TaskConfig(...)) keeps the id's terrain, observations and tip rule
    # (the registry names the id's own task as base_task); a TaskConfig of another kind is an
    # error, not a silently different task
    import dataclasses

    from offroad_env import TaskConfig, make_config
    for env_id, name in offroad_env.ENV_IDS.items():
        assert gym.spec(env_id).kwargs == {"task": name, "base_task": name, "version": 1}
    ref = make_config("traverse")
    new_task = dataclasses.replace(ref.task, goal_radius=1.0)
    cfg = make_config(new_task, base_task="traverse")
    assert cfg == dataclasses.replace(ref, task=new_task)
    assert make_config(TaskConfig(goal_radius=1.0)).terrain == make_config("nav").terrain
    with pytest.raises(ValueError, match="kind 'velocity' cannot replace the task of 'traverse'"):
        make_config(TaskConfig(kind="velocity"), base_task="traverse")
    with pytest.raises(ValueError, match="unknown base_task"):
        make_config("nav", base_task="climb")
    env = gym.make("offroad_env/OffroadNavRough-v1", task=TaskConfig(goal_radius=0.8),
                   num_maps=1, disable_env_checker=True)
    base = env.unwrapped.config
    assert base.task.goal_radius == 0.8 and base.terrain == make_config("nav_rough").terrain
    assert base.height_scan == make_config("nav_rough").height_scan
    env.close()


@pytest.mark.parametrize("kw, match", [
    (dict(d_eps=-1.0), "d_eps"), (dict(d_eps=float("nan")), "d_eps"),
    (dict(gravity=0.0), "gravity"), (dict(dynamics="tank"), "dynamics"),
    (dict(ground="lcp"), "ground")])
def test_sim_config_rejects_bad_values(kw, match):
    with pytest.raises(ValueError, match=match):
        SimConfig(**kw)


@pytest.mark.parametrize("kw, match", [
    (dict(resolution=0.0), "resolution"), (dict(clip=-1.0), "clip"),
    (dict(size=(1.0, float("inf"))), "size"), (dict(forward_offset=float("nan")), "forward")])
def test_height_scan_config_rejects_bad_values(kw, match):
    with pytest.raises(ValueError, match=match):
        HeightScanConfig(**kw)


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SimConfig().dt = 0.1
    with pytest.raises(dataclasses.FrozenInstanceError):
        HeightScanConfig().clip = 1.0


def test_an_observation_term_that_needs_a_config_field_is_refused_naming_it():
    """'height_scan' in obs_terms without SimConfig.height_scan was accepted and dropped; the
    planners then asked for the term again. Now the config refuses it, and a baseline names
    every term it lacks and how to get each."""
    import gymnasium as gym

    from offroad_env import make_config
    from train.planners import baseline

    with pytest.raises(ValueError, match=r"needs the scan's config: give height_scan=Height"):
        make_config("nav", obs_terms=("goal", "height_scan"))
    cfg = make_config("nav", obs_terms=("goal", "height_scan", "stability"),
                      height_scan=HeightScanConfig())
    assert cfg.terms == ("goal", "stability", "height_scan")
    env = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                       vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError) as info:
        baseline("careful", env, 0)
    msg = str(info.value)
    assert "lacks ['height_scan', 'stability']" in msg and "height_scan=HeightScanConfig()" in msg
    assert "'stability' in obs_terms" in msg
    ok = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                      vectorization_mode="vector_entry_point", height_scan=HeightScanConfig(),
                      obs_terms=("goal", "stability"))
    obs, _ = ok.reset(seed=0)
    assert baseline("careful", ok, 0)(obs).shape == (2, 2)
