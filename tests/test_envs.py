"""The Gymnasium contract: checkers, registration, autoreset modes, seeding and determinism,
single env == vector sub-env, the IMU's closed forms, tip-over, time limits, bad actions."""

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
import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv, spawn
from offroad_env.tasks import REASONS

FLAT = terrain.FlatConfig(size=(30.0, 30.0), resolution=(0.25, 0.25))
SMALL = terrain.PerlinConfig(size=(30.0, 30.0), resolution=(0.25, 0.25), amplitude=0.3,
                             frequency=0.1)


def small_env(**kw):
    kw.setdefault("terrain", SMALL)
    kw.setdefault("num_maps", 2)
    return kw


# ------------------------------------------------------------------ checkers and registration
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


def test_sb3_check_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check
    env = OffroadEnv(**small_env())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check(env, warn=True)


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


# ------------------------------------------------------------------ autoreset
def make_vec(mode, n=3, steps=3, **kw):
    return OffroadVectorEnv(num_envs=n, autoreset_mode=mode, max_episode_steps=steps,
                            **small_env(**kw))


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


# ------------------------------------------------------------------ seeding and determinism
def rollout(env, steps, seed, actions_seed=0):
    rng = np.random.default_rng(actions_seed)
    obs, _ = env.reset(seed=seed)
    out = [obs.clone()]
    for _ in range(steps):
        a = torch.as_tensor(rng.uniform(-1, 1, (env.num_envs, 2)), dtype=torch.float32)
        obs, r, term, trunc, _ = env.step(a)
        out.append(torch.cat([obs, r[:, None], term[:, None].float(), trunc[:, None].float()],
                             1))
    return torch.stack(out[1:])


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


@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_single_env_equals_vector_sub_env_across_resets(kw):
    n, steps = 3, 60
    venv = OffroadVectorEnv(num_envs=n, max_episode_steps=25, **small_env(**kw))
    singles = [OffroadEnv(max_episode_steps=25, **small_env(**kw)) for _ in range(n)]
    vo, _ = venv.reset(seed=100)
    for i, e in enumerate(singles):
        e.reset(seed=100 + i)
    rng = np.random.default_rng(1)
    needs_reset = [False] * n
    for _ in range(steps):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        vo, vr, vterm, vtrunc, _ = venv.step(torch.from_numpy(a))
        for i, e in enumerate(singles):
            if needs_reset[i]:  # NEXT_STEP: the vector env resets this sub-env now
                o, _ = e.reset()
                r, term, trunc = 0.0, False, False
            else:
                o, r, term, trunc, _ = e.step(a[i])
            np.testing.assert_allclose(vo[i].numpy(), o, rtol=1e-5, atol=1e-5)
            assert abs(float(vr[i]) - r) <= 1e-5 * max(1.0, abs(r))
            assert bool(vterm[i]) == term and bool(vtrunc[i]) == trunc
            needs_reset[i] = term or trunc
    assert any(needs_reset) or True


def test_pickle_round_trip_and_no_shared_observation_memory():
    env = OffroadEnv(**small_env())
    o1, _ = env.reset(seed=3)
    o2, *_ = env.step(env.action_space.sample())
    assert not np.shares_memory(o1, o2)
    clone = pickle.loads(pickle.dumps(env))
    a = np.array([0.5, -0.2], dtype=np.float32)
    np.testing.assert_array_equal(env.step(a)[0], clone.step(a)[0])


# ------------------------------------------------------------------ IMU closed forms
def imu_of(obs_row, env):
    start = [s for t, s, e in env.obs_layout if t == "imu"][0]
    return obs_row[start:start + 3], obs_row[start + 3:start + 6]


def test_imu_at_rest_on_flat_ground_reads_plus_g():
    env = OffroadEnv(terrain=FLAT, num_maps=1)
    obs, _ = env.reset(seed=0)
    acc, gyro = imu_of(obs, env)
    np.testing.assert_allclose(acc, [0, 0, 9.81], atol=1e-5)
    np.testing.assert_allclose(gyro, [0, 0, 0], atol=1e-6)
    for _ in range(3):
        obs, *_ = env.step(np.zeros(2, dtype=np.float32))
    acc, gyro = imu_of(obs, env)
    np.testing.assert_allclose(acc, [0, 0, 9.81], atol=1e-4)
    np.testing.assert_allclose(gyro, [0, 0, 0], atol=1e-5)


def test_imu_on_a_static_slope_reads_gravity_rotated():
    slope = terrain.PlaneConfig(size=(30.0, 30.0), resolution=(0.25, 0.25), slope_x=0.2,
                                slope_y=-0.3)
    env = OffroadEnv(terrain=slope, num_maps=1)
    obs, _ = env.reset(seed=4)
    for _ in range(2):
        obs, *_ = env.step(np.zeros(2, dtype=np.float32))
    acc, gyro = imu_of(obs, env)
    R = env.sim.state.contact.base_rotation[0].double()
    expected = (R.T @ torch.tensor([0.0, 0.0, 9.81], dtype=torch.float64)).numpy()
    np.testing.assert_allclose(acc, expected, atol=1e-4)
    roll, pitch = float(env.sim.state.contact.roll[0]), float(env.sim.state.contact.pitch[0])
    np.testing.assert_allclose(acc, 9.81 * np.array([-math.sin(pitch),
                                                     math.cos(pitch) * math.sin(roll),
                                                     math.cos(pitch) * math.cos(roll)]),
                               atol=1e-4)
    assert abs(roll) > 0.1 or abs(pitch) > 0.1


@pytest.mark.parametrize("at_rear_axle", [True, False])
def test_imu_in_a_constant_turn_reads_omega_and_v_omega(at_rear_axle):
    # the unicycle turns about the rear-axle frame; base_link is 0.256 m ahead of it
    offset = (-0.256, 0.0, 0.0328) if at_rear_axle else (0.0, 0.0, 0.0)
    env = OffroadEnv(terrain=FLAT, num_maps=1, max_speed=1.0, max_yaw_rate=1.0,
                     imu=offroad_env.ImuConfig(offset=offset))
    env.reset(seed=0)
    v, w, dt = 0.8, 0.5, env.config.dt
    a = np.array([v, w], dtype=np.float32)
    for _ in range(5):
        obs, *_ = env.step(a)
    acc, gyro = imu_of(obs, env)
    assert gyro[2] == pytest.approx(w, rel=1e-5)
    assert abs(gyro[0]) < 1e-5 and abs(gyro[1]) < 1e-5
    assert acc[2] == pytest.approx(9.81, abs=1e-4)
    # the IMU differences the sensor's world trajectory: the reading lags the heading by 1.5
    # steps, rotating the continuous value by -1.5 w dt
    lag = 1.5 * w * dt
    d = 0.0 if at_rear_axle else 0.256
    lat, lon = v * w, -w * w * d  # continuous: lateral v w, centripetal -w^2 d at offset d
    # the body has turned by `lag` since: components rotate by -lag
    expected = (lon * math.cos(lag) + lat * math.sin(lag), -lon * math.sin(lag)
                + lat * math.cos(lag))
    assert acc[1] == pytest.approx(expected[1], rel=5e-3)
    assert acc[0] == pytest.approx(expected[0], abs=2e-3)
    if at_rear_axle:
        assert acc[1] == pytest.approx(v * w, rel=1e-3)


def test_imu_is_right_on_the_first_step_after_an_autoreset():
    kw = dict(terrain=FLAT, num_maps=1)
    venv = OffroadVectorEnv(num_envs=1, max_episode_steps=3, **kw)
    venv.reset(seed=1)
    a = torch.tensor([[1.0, 0.7]])
    for _ in range(4):  # 3 steps of motion, then the autoreset step
        obs, *_ = venv.step(a)
    acc, gyro = imu_of(obs[0].numpy(), venv)
    np.testing.assert_allclose(acc, [0, 0, 9.81], atol=1e-4)  # at rest again, no old motion
    obs, *_ = venv.step(a)
    fresh = OffroadVectorEnv(num_envs=1, **kw)
    fresh.reset(seed=1)
    fresh.sim.set_keys(venv.sim.state.keys, torch.ones(1, dtype=torch.bool))
    fo, _ = fresh.reset()
    # the first step from rest of a new episode reads the same as a fresh env's first step
    fo, *_ = fresh.step(a)
    np.testing.assert_allclose(imu_of(obs[0].numpy(), venv)[1], imu_of(fo[0].numpy(), fresh)[1],
                               atol=1e-5)


# ------------------------------------------------------------------ terminations
def across_slope_env(angle_deg, vehicle="husky"):
    cfg = terrain.PlaneConfig(size=(30.0, 30.0), resolution=(0.25, 0.25), slope_x=0.0,
                              slope_y=math.tan(math.radians(angle_deg)))
    return OffroadVectorEnv(num_envs=1, terrain=cfg, num_maps=1, vehicle=vehicle)


def park_across(env):
    env.reset(seed=0)
    env.sim.state.x.zero_()
    env.sim.state.y.zero_()
    env.sim.state.yaw.zero_()  # heading along x: the slope rises to the left
    return env.step(torch.zeros(1, 2))


def test_tip_over_follows_static_stability():
    from offroad_env.tasks import static_tip_limits
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
    assert trunc and not term and info["end_reason"] == "time_limit"
    # through gymnasium.make the TimeLimit wrapper truncates (the env does not see its limit)
    made = gym.make("offroad_env/OffroadNav-v0", terrain=FLAT, num_maps=1, max_episode_steps=5)
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


# ------------------------------------------------------------------ actions
def test_bad_actions():
    env = OffroadVectorEnv(num_envs=4096, **small_env())
    env.reset(seed=0)
    a = torch.zeros(4096, 2)
    a[1234, 1] = float("nan")
    with pytest.raises(ValueError, match=r"\[1234\]"):
        env.step(a)
    with pytest.raises(ValueError, match="shape"):
        env.step(torch.zeros(4096, 3))
    zeroing = OffroadVectorEnv(num_envs=4, nan_action="zero", **small_env())
    zeroing.reset(seed=0)
    b = torch.tensor([[0.1, 0.1], [float("inf"), 0.0], [5.0, -7.0], [0.0, 0.0]])
    obs, r, term, trunc, info = zeroing.step(b)
    assert info["bad_action"].tolist() == [False, True, False, False]
    assert torch.isfinite(obs).all() and torch.isfinite(r).all()
    # out of range is clipped: the previous-action term shows it
    pa = [s for t, s, e in zeroing.obs_layout if t == "prev_action"][0]
    assert obs[2, pa:pa + 2].tolist() == [1.0, -1.0] and obs[1, pa:pa + 2].tolist() == [0.0, 0.0]
    single = OffroadEnv(**small_env())
    single.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        single.step(np.array([np.nan, 0.0], dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        single.step(np.zeros(3, dtype=np.float32))


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


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_compiled_step_agrees_with_eager(kw):
    eager = OffroadVectorEnv(num_envs=16, max_episode_steps=30, **small_env(**kw))
    comp = OffroadVectorEnv(num_envs=16, max_episode_steps=30, compile=True, **small_env(**kw))
    a_e = rollout(eager, 80, seed=5)
    a_c = rollout(comp, 80, seed=5)
    # the same physics; rounding may differ (fused kernels), not the trajectory
    torch.testing.assert_close(a_c, a_e, rtol=1e-3, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_compiled_resets_in_chunks_agree_with_eager_and_never_recompile(kw):
    kw = dict(num_envs=150, max_episode_steps=6, **kw)
    eager = OffroadVectorEnv(**small_env(**kw))
    comp = OffroadVectorEnv(compile=True, **small_env(**kw))
    mask = torch.zeros(150, dtype=torch.bool)
    mask[torch.randperm(150, generator=torch.Generator().manual_seed(0))[:70]] = True
    a = torch.full((150, 2), 0.5)

    def agree(o_c, o_e):
        if "ground" not in kw:
            torch.testing.assert_close(o_c, o_e, rtol=1e-3, atol=1e-3)
        else:
            # a cold rigid placement can have two rests (a "wobbly table": which diagonal
            # carries the load is a tie); rounding picks one, so a few rows may differ
            close = ((o_c - o_e).abs() <= 1e-3 + 1e-3 * o_e.abs()).all(1)
            assert close.float().mean() >= 0.95
    for env in (eager, comp):
        env.reset(seed=1)
        env.step(a)
    # 70 resets: one full chunk of 64 and one of 6 padded to 64
    agree(comp.reset(options={"reset_mask": mask})[0],
          eager.reset(options={"reset_mask": mask})[0])
    comp.step(a)  # compiles the step
    eager.step(a)
    # autoresets every 6 steps; after the first compile the step and the reset placement keep
    # their graphs (a reset used to change the contact's strides and force a second graph)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for _ in range(14):
            o_c = comp.step(a)[0]
            o_e = eager.step(a)[0]
    agree(o_c, o_e)


@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_resets_without_host_sync_equal_subset_resets(kw):
    """The accelerator path (every row computed, reset rows kept) against the CPU's subset
    path, over autoresets on a map with holes (spawn redraws)."""
    import terrain as T
    holes = T.HolesConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), count=40,
                          radius_range=(0.5, 1.0), keep_center=0.0)
    envs = [OffroadVectorEnv(num_envs=48, max_episode_steps=7, terrain=holes, num_maps=2, **kw)
            for _ in range(2)]
    envs[1].sim.subset_resets = False
    a = rollout(envs[0], 30, seed=4)
    b = rollout(envs[1], 30, seed=4)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_compiled_env_is_bitwise_deterministic_per_seed():
    kw = dict(num_envs=150, max_episode_steps=6, dynamics="skid_steer", ground="rigid_contact")
    a = rollout(OffroadVectorEnv(compile=True, **small_env(**kw)), 40, seed=3)
    b = rollout(OffroadVectorEnv(compile=True, **small_env(**kw)), 40, seed=3)
    assert torch.equal(a, b)


@pytest.mark.slow
def test_compiled_resets_without_host_sync_agree_with_eager():
    """The accelerator reset path (all rows placed by the compiled cold placement, reset rows
    kept), run on the CPU, against the eager subset path; nothing recompiles once warm."""
    kw = dict(num_envs=48, max_episode_steps=5, dynamics="skid_steer", ground="rigid_contact")
    eager = OffroadVectorEnv(**small_env(**kw))
    comp = OffroadVectorEnv(compile=True, **small_env(**kw))
    comp.sim.subset_resets = False
    a = torch.full((48, 2), 0.4)
    for env in (eager, comp):
        env.reset(seed=2)
        for _ in range(6):  # compiles the step and, at the autoreset, the placement
            env.step(a)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for _ in range(12):
            o_c = comp.step(a)[0]
            o_e = eager.step(a)[0]
    # rows may differ where a cold rigid placement has two rests (see the chunked test)
    close = ((o_c - o_e).abs() <= 1e-3 + 1e-3 * o_e.abs()).all(1)
    assert close.float().mean() >= 0.9


def test_spawns_and_goals_avoid_holes_and_stay_per_env_deterministic():
    import terrain as T
    holes = T.HolesConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), count=60,
                          radius_range=(0.5, 1.2), keep_center=0.0)
    venv = OffroadVectorEnv(num_envs=512, terrain=holes, num_maps=2)
    venv.reset(seed=3)
    sim = venv.sim
    st = sim.state
    assert not bool(st.contact.hole.any())
    assert torch.isfinite(sim.maps.height(st.goal_w[:, 0], st.goal_w[:, 1], st.map_index)).all()
    # without the redraw a good share of these spawns would touch a hole
    plain = spawn.draw_spawn(torch.rand(512, 8, generator=torch.Generator().manual_seed(0)),
                             sim.maps, sim.cfg.task, None)
    assert spawn.in_hole(sim.maps, sim.vehicle, plain, True).float().mean() > 0.2
    single = OffroadEnv(terrain=holes, num_maps=2)
    for i in (0, 7, 300):
        obs, _ = single.reset(seed=3 + i)
        assert float(single.sim.state.x[0]) == float(st.x[i])
        assert float(single.sim.state.goal_w[0, 1]) == float(st.goal_w[i, 1])


def test_terrain_may_be_a_map_file_or_a_generator_name_and_unknown_keywords_are_type_errors(
        tmp_path):
    import terrain as terrain_pkg
    h = terrain_pkg.generate(terrain_pkg.PerlinConfig(size=(30.0, 30.0), resolution=(0.2, 0.2)), 2)
    np.save(tmp_path / "m.npy", h)
    env = gym.make("offroad_env/OffroadNav-v0", terrain=str(tmp_path / "m.npy"))
    env.reset(seed=0)
    assert env.unwrapped.terrain.shape == h.shape
    venv = gym.make_vec("offroad_env/OffroadNav-v0", num_envs=2,
                        vectorization_mode="vector_entry_point", terrain=tmp_path / "m.npy")
    venv.reset(seed=0)
    assert venv.unwrapped.terrain.shape == h.shape
    named = OffroadVectorEnv(num_envs=2, terrain="bumps", num_maps=1)
    assert isinstance(named.config.terrain, terrain_pkg.BumpsConfig)
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gym.make("offroad_env/OffroadNav-v0", frameskip=4)
    with pytest.raises(terrain_pkg.TerrainFileError, match="no such file"):
        OffroadVectorEnv(num_envs=2, terrain=tmp_path / "missing.png")


def test_async_make_vec_returns_after_the_parent_ran_an_env(tmp_path):
    # gymnasium's async vector env forks; torch in the child used to hang on its first op
    import subprocess
    import sys
    script = tmp_path / "a.py"
    script.write_text(
        "import gymnasium as gym, offroad_env\n"
        "e = gym.make('offroad_env/OffroadNav-v0'); e.reset(seed=0)\n"
        "e.step(e.action_space.sample())\n"
        "v = gym.make_vec('offroad_env/OffroadNav-v0', num_envs=2, vectorization_mode='async')\n"
        "o, _ = v.reset(seed=0)\n"
        "for _ in range(3): v.step(v.action_space.sample())\n"
        "v.close(); print('ok', o.shape)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok (2," in r.stdout, r.stderr[-1000:]


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
        assert gym.spec(env_id).kwargs == {"task": name, "base_task": name}
    ref = make_config("traverse")
    new_task = dataclasses.replace(ref.task, goal_radius=1.0)
    cfg = make_config(new_task, base_task="traverse")
    assert cfg == dataclasses.replace(ref, task=new_task)
    assert make_config(TaskConfig(goal_radius=1.0)).terrain == make_config("nav").terrain
    with pytest.raises(ValueError, match="kind 'velocity' cannot replace the task of 'traverse'"):
        make_config(TaskConfig(kind="velocity"), base_task="traverse")
    with pytest.raises(ValueError, match="unknown base_task"):
        make_config("nav", base_task="climb")
    env = gym.make("offroad_env/OffroadNavRough-v0", task=TaskConfig(goal_radius=0.8),
                   num_maps=1, disable_env_checker=True)
    base = env.unwrapped.config
    assert base.task.goal_radius == 0.8 and base.terrain == make_config("nav_rough").terrain
    assert base.height_scan == make_config("nav_rough").height_scan
    env.close()
