"""The Gymnasium contract of the vector env: checkers, registration, spaces, autoreset modes,
seeding and determinism, terminations and truncation, rendering."""

import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import offroad_env
from offroad_env import OffroadEnv, OffroadVectorEnv
from offroad_env.task.observations import Observer
from offroad_env.task.task import REASONS, EndReason

from env_util import FLAT, SMALL, across_slope_env, make_vec, park_across, rollout, small_env


@pytest.mark.parametrize("kw", [
    dict(task="nav"), dict(task="velocity"),
    dict(task="nav", dynamics="ackermann"),
    dict(task="nav", dynamics="skid_steer", ground="rigid_contact"),
])
def test_gymnasium_check_env_passes_without_warnings(kw):
    task = kw.pop("task")
    env_id = {v: k for k, v in offroad_env.ENV_IDS.items()}[task]
    env = gym.make(env_id, render_mode="rgb_array", **small_env(**kw)).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)
    env.close()
    env.close()  # twice is fine


@pytest.mark.parametrize("env_id", list(offroad_env.ENV_IDS))
def test_every_registered_id_runs_with_make_and_make_vec(env_id):
    env = gym.make(env_id, terrain=SMALL, num_maps=1)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    for _ in range(3):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert isinstance(r, float) and isinstance(term, bool) and isinstance(trunc, bool)
    steps = offroad_env.EPISODE_STEPS.get(offroad_env.ENV_IDS[env_id], 500)
    assert env.spec.max_episode_steps == steps
    env.close()
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point",
                        terrain=SMALL, num_maps=1)
    assert isinstance(venv.unwrapped, OffroadVectorEnv)
    assert venv.unwrapped.max_episode_steps == steps
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3,) + venv.single_observation_space.shape
    obs, r, term, trunc, info = venv.step(torch.zeros(3, 2))
    assert r.shape == term.shape == trunc.shape == (3,)
    venv.close()
    # the module-prefixed form works without importing first
    gym.make("offroad_env:" + env_id, terrain=SMALL, num_maps=1).close()


def test_spaces_dtypes_and_layout():
    venv = OffroadVectorEnv(num_envs=5, **small_env(height_scan=offroad_env.HeightScanConfig()))
    obs, info = venv.reset(seed=3)
    assert obs.dtype == torch.float32 and obs.shape == (5, venv.single_observation_space.shape[0])
    assert venv.observation_space.shape == (5,) + venv.single_observation_space.shape
    assert venv.action_space.shape == (5, 2)
    layout = venv.obs_layout
    assert [t for t, _, _ in layout][-1] == "height_scan"
    assert layout[-1][2] == venv.single_observation_space.shape[0]
    assert np.all(np.isfinite(venv.single_observation_space.low))
    for row in obs.numpy():
        assert venv.single_observation_space.contains(row)
    assert venv.metadata["autoreset_mode"] == venv.autoreset_mode == AutoresetMode.NEXT_STEP


def test_next_step_autoreset_on_scripted_episode_ends():
    env = make_vec(AutoresetMode.NEXT_STEP)
    ref = make_vec(AutoresetMode.DISABLED)
    a = torch.full((3, 2), 0.3)
    env.reset(seed=5)
    ref.reset(seed=5)
    # env 0 restarts after one step: episodes then end at steps 3 (envs 1, 2) and 4 (env 0)
    env.step(a)
    ref.step(a)
    m0 = torch.tensor([True, False, False])
    o1, _ = env.reset(options={"reset_mask": m0})
    o2, _ = ref.reset(options={"reset_mask": m0})
    assert torch.equal(o1, o2)
    for t in range(2):
        o, r, term, trunc, info = env.step(a)
        ro, rr, rterm, rtrunc, _ = ref.step(a)
        assert torch.equal(o, ro) and torch.equal(r, rr)
    assert trunc.tolist() == [False, True, True] and not term.any()
    assert info["_end_reason"].tolist() == [False, True, True]
    assert [REASONS[int(c)] for c in info["end_reason"][1:]] == ["time_limit", "time_limit"]
    # the next step returns the reset observation of envs 1, 2, reward 0, flags False
    reset_obs, _ = ref.reset(options={"reset_mask": torch.tensor([False, True, True])})
    o, r, term, trunc, info = env.step(a)
    assert torch.equal(o[1:], reset_obs[1:])
    assert r[1:].tolist() == [0.0, 0.0] and not term[1:].any() and not trunc[1:].any()
    ro, rr, rterm, rtrunc, _ = ref.step(a)
    assert torch.equal(o[0], ro[0]) and trunc[0] and rtrunc[0]  # env 0 reached its limit
    with pytest.raises(RuntimeError, match="reset them"):
        ref.step(a)  # disabled: env 0 of ref has finished


def test_same_step_autoreset_gives_final_obs_and_info():
    env = make_vec(AutoresetMode.SAME_STEP, steps=2)
    ref = make_vec(AutoresetMode.DISABLED, steps=2)
    a = torch.full((3, 2), -0.4)
    env.reset(seed=9)
    ref.reset(seed=9)
    env.step(a)
    ref.step(a)
    o, r, term, trunc, info = env.step(a)
    ro, rr, rterm, rtrunc, rinfo = ref.step(a)
    assert trunc.all() and info["_final_obs"].all()
    assert torch.equal(info["final_obs"], ro)  # the true last observation
    assert torch.equal(r, rr)
    assert info["final_info"]["end_reason"].tolist() == [5, 5, 5]
    reset_obs, _ = ref.reset(options={"reset_mask": torch.ones(3, dtype=torch.bool)})
    assert torch.equal(o, reset_obs)


def test_disabled_mode_and_reset_mask_errors():
    env = make_vec(AutoresetMode.DISABLED, steps=1)
    env.reset(seed=0)
    env.step(torch.zeros(3, 2))
    with pytest.raises(RuntimeError, match=r"\[0, 1, 2\]"):
        env.step(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="selects no"):
        env.reset(options={"reset_mask": torch.zeros(3, dtype=torch.bool)})
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"reset_mask": torch.ones(2, dtype=torch.bool)})
    env.reset(options={"reset_mask": torch.ones(3, dtype=torch.bool)})
    env.step(torch.zeros(3, 2))


def test_autoreset_mode_is_attribute_and_metadata():
    for mode in AutoresetMode:
        env = OffroadVectorEnv(num_envs=2, autoreset_mode=mode, **small_env())
        assert env.autoreset_mode == mode and env.metadata["autoreset_mode"] == mode
    assert OffroadVectorEnv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


def test_same_seed_same_trajectory_over_1000_steps():
    kw = dict(num_envs=4, max_episode_steps=150, **small_env())
    a = rollout(OffroadVectorEnv(**kw), 1000, seed=42)
    b = rollout(OffroadVectorEnv(**kw), 1000, seed=42)
    assert torch.equal(a, b)
    c = rollout(OffroadVectorEnv(**kw), 20, seed=43)
    assert not torch.equal(a[:20], c)
    assert torch.isfinite(a).all()


def test_int_seed_gives_sub_env_i_seed_plus_i_and_spawns_do_not_depend_on_n():
    one = OffroadVectorEnv(num_envs=1, **small_env())
    many = OffroadVectorEnv(num_envs=64, **small_env())
    o1, _ = one.reset(seed=7)
    o64, _ = many.reset(seed=7)
    assert torch.equal(o1[0], o64[0])
    single = OffroadEnv(**small_env())
    s, _ = single.reset(seed=7 + 5)
    np.testing.assert_array_equal(s, o64[5].numpy())


def test_pickle_round_trip_and_no_shared_observation_memory():
    env = OffroadEnv(**small_env())
    o1, _ = env.reset(seed=3)
    o2, *_ = env.step(env.action_space.sample())
    assert not np.shares_memory(o1, o2)
    clone = pickle.loads(pickle.dumps(env))
    a = np.array([0.5, -0.2], dtype=np.float32)
    np.testing.assert_array_equal(env.step(a)[0], clone.step(a)[0])


def test_tip_over_follows_static_stability():
    from offroad_env.task.task import static_tip_limits
    husky_limit = math.degrees(static_tip_limits(offroad_env.husky())[0])
    assert 54 < husky_limit < 57  # half track 0.2854 m over a CoM 0.194 m above the ground
    *_, term, trunc, info = park_across(across_slope_env(husky_limit + 3))
    assert term[0] and REASONS[int(info["end_reason"][0])] == "tip_over"
    *_, term, trunc, info = park_across(across_slope_env(husky_limit - 3))
    assert not term[0]
    # a tall vehicle (the paper's rover: CoM 0.45 m up, half track 0.45 m) tips across 45+
    rover_limit = math.degrees(static_tip_limits(offroad_env.six_wheel_rover())[0])
    assert rover_limit == pytest.approx(45.0)
    *_, term, trunc, info = park_across(across_slope_env(46, "six_wheel_rover"))
    assert term[0] and REASONS[int(info["end_reason"][0])] == "tip_over"


def test_time_limit_gives_truncated_only():
    env = OffroadVectorEnv(num_envs=2, max_episode_steps=5, terrain=FLAT, num_maps=1,
                           autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=0)
    for t in range(5):
        obs, r, term, trunc, info = env.step(torch.zeros(2, 2))
    assert trunc.all() and not term.any()
    assert [REASONS[int(c)] for c in info["end_reason"]] == ["time_limit"] * 2
    single = OffroadEnv(terrain=FLAT, num_maps=1, max_episode_steps=5)
    single.reset(seed=0)
    for t in range(5):
        _, _, term, trunc, info = single.step(np.zeros(2, dtype=np.float32))
    # the single env's reason is an EndReason (an int: TorchRL's specs and numpy hold it)
    assert trunc and not term and info["end_reason"] == EndReason.TIME_LIMIT
    assert isinstance(info["end_reason"], int) and info["end_reason"].label == "time_limit"
    # through gymnasium.make the TimeLimit wrapper truncates (the env does not see its limit)
    made = gym.make("offroad_env/OffroadNav-v1", terrain=FLAT, num_maps=1, max_episode_steps=5)
    made.reset(seed=0)
    for t in range(5):
        _, _, term, trunc, info = made.step(np.zeros(2, dtype=np.float32))
    assert trunc and not term


def test_goal_reached_and_off_map_terminate():
    env = OffroadVectorEnv(num_envs=1, terrain=FLAT, num_maps=1)
    env.reset(seed=2)
    sim = env.sim
    sim.state.goal_w[0] = sim.state.contact.base_position[0, :2]
    *_, term, trunc, info = env.step(torch.zeros(1, 2))
    assert term[0] and REASONS[int(info["end_reason"][0])] == "goal_reached"
    assert info["reward/goal_reached"][0] == 1.0
    env.reset(seed=2)
    sim.state.x[0] = 14.9
    sim.state.yaw[0] = 0.0
    *_, term, trunc, info = env.step(torch.tensor([[1.0, 0.0]]))
    assert term[0] and REASONS[int(info["end_reason"][0])] == "off_map"


def test_render_rgb_array():
    env = OffroadEnv(render_mode="rgb_array", **small_env())
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.array([1.0, 0.3], dtype=np.float32))
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    venv = OffroadVectorEnv(num_envs=2, render_mode="rgb_array", **small_env())
    venv.reset(seed=0)
    (f0,) = venv.render()
    assert f0.shape == frame.shape


def test_async_make_vec_returns_after_the_parent_ran_an_env(tmp_path):
    # gymnasium's async vector env forks; torch in the child used to hang on its first op
    import subprocess
    import sys
    script = tmp_path / "a.py"
    script.write_text(
        "import gymnasium as gym, offroad_env\n"
        "e = gym.make('offroad_env/OffroadNav-v1'); e.reset(seed=0)\n"
        "e.step(e.action_space.sample())\n"
        "v = gym.make_vec('offroad_env/OffroadNav-v1', num_envs=2, vectorization_mode='async')\n"
        "o, _ = v.reset(seed=0)\n"
        "for _ in range(3): v.step(v.action_space.sample())\n"
        "v.close(); print('ok', o.shape)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok (2," in r.stdout, r.stderr[-1000:]



@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("dynamics", ["unicycle", "rigid_body"])
def test_an_autoreset_observes_only_its_rows_and_equals_observing_all(mode, dynamics,
                                                                     monkeypatch):
    # the step's observations are kept for the rows that go on; only the reset rows are
    # observed again (sim.reset(..., obs=)); every row is what observing the whole state gives
    n = 12
    env = OffroadVectorEnv(num_envs=n, autoreset_mode=mode, max_episode_steps=6,
                           **small_env(dynamics=dynamics))
    sim = env.unwrapped.sim
    observe, sizes = Observer.__call__, []

    def counting(self, state, maps):
        sizes.append(state.x.shape[0])
        return observe(self, state, maps)

    monkeypatch.setattr(Observer, "__call__", counting)
    env.reset(seed=3)
    env.unwrapped.set_episode_steps(torch.arange(n) % 6)  # a few rows end at every step
    g = torch.Generator().manual_seed(1)
    done = torch.zeros(n, dtype=torch.bool)
    subset_resets = 0
    for _ in range(14):
        sizes.clear()
        o, _, term, trunc, _ = env.step(torch.rand(n, 2, generator=g) * 2 - 1)
        reset = (term | trunc) if mode == AutoresetMode.SAME_STEP else done
        done = term | trunc
        full = observe(sim.observer, sim.state, sim.maps)
        assert torch.equal(o[~reset], full[~reset])  # the step's own rows
        torch.testing.assert_close(o[reset], full[reset], rtol=1e-6, atol=1e-6)
        assert sizes == ([n, int(reset.sum())] if reset.any() else [n])
        subset_resets += int(bool(reset.any()))
    assert subset_resets >= 10
    before = sim.state.x.clone()
    for bad in (o[:, :3], o[:5], o.numpy()):  # refused before the reset changes anything
        with pytest.raises(ValueError, match=r"obs must be the \(12, \d+\) observations"):
            sim.reset(torch.ones(n, dtype=torch.bool), obs=bad)
    assert torch.equal(sim.state.x, before)
