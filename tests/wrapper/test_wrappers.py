"""wrappers/: domain randomization against independent per-vehicle computations, latency and
action repeat against shifted unwrapped runs, the trajectory recorder against the simulator's
state, the SB3 adapter against the native env, and Gymnasium's vector wrappers on the env."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import offroad_env
import terrain
from offroad_env.task import task as tasks
from offroad_env.physics.dynamics import SkidSteerParams, SkidSteerState, skid_steer_step
from offroad_env.physics.vehicle import VehicleBatch
from wrappers import (ActionDelay, DomainRandomization, DomainRandomizationEnv,
                      ObservationDelay, RandomizationConfig, TrajectoryRecorder, load_episode)

NAV = "offroad_env/OffroadNav-v1"
FLAT = terrain.FlatConfig(size=(40.0, 40.0), resolution=(0.1, 0.1))


def venv(n=8, mode=AutoresetMode.NEXT_STEP, **kw):
    return gym.make_vec(NAV, num_envs=n, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode, **kw)


def actions(n, steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(n, 2, generator=g) * 2 - 1 for _ in range(steps)]


# ---------------------------------------------------------------- domain randomization
def test_randomization_is_seeded_and_single_env_equals_vector_sub_env():
    a = DomainRandomization(venv(6))
    b = DomainRandomization(venv(6))
    a.reset(seed=5)
    b.reset(seed=5)
    for k in a.params:
        assert torch.equal(a.params[k], b.params[k]), k
    assert len(set(a.params["mass"].tolist())) == 6  # drawn per sub-env
    single = DomainRandomizationEnv(gym.make(NAV))
    single.reset(seed=5 + 3)
    for k, v in single.params.items():
        torch.testing.assert_close(v, a.params[k][3])
    # spawns are those of the unwrapped env (a salted stream draws the parameters)
    plain = venv(6)
    plain.reset(seed=5)
    assert torch.equal(plain.unwrapped.state_view().x, a.unwrapped.state_view().x)


def test_randomization_redraws_at_autoreset_only_for_the_finished_env():
    env = DomainRandomization(venv(4, max_episode_steps=3))
    env.reset(seed=0)
    mask = torch.tensor([True, False, True, False])
    before = env.params["mass"].clone()
    env.reset(options={"reset_mask": mask})
    after = env.params["mass"]
    assert torch.equal(after[~mask], before[~mask]) and not torch.equal(after[mask], before[mask])
    m0 = env.params["mass"].clone()
    for _ in range(4):  # episodes end at step 3, NEXT_STEP resets them at step 4
        env.step(torch.zeros(4, 2))
    assert (env.params["mass"] != m0).all()


def test_randomized_loads_sum_to_each_envs_weight_and_tip_limits_follow_the_com():
    cfg = RandomizationConfig(mass_scale=(0.5, 2.0), com_shift=((-0.1, 0.1), (-0.1, 0.1),
                                                                (0.0, 0.3)))
    env = DomainRandomization(venv(16, ground="rigid_contact", terrain=FLAT), cfg)
    env.reset(seed=1)
    sim = env.unwrapped.sim
    gc = env.unwrapped.state_view().contact
    g = env.unwrapped.config.gravity
    torch.testing.assert_close(gc.normal_force.sum(1), env.params["mass"] * g, rtol=1e-4, atol=0)
    # moments about the (randomized) CoM balance: sum F (p - c) = 0 in the plane
    com = env.params["com"]
    wx = torch.tensor([p[0] for p in sim.vehicle.wheel_positions])
    wy = torch.tensor([p[1] for p in sim.vehicle.wheel_positions])
    f = gc.normal_force
    torch.testing.assert_close((f * (wx - com[:, :1])).sum(1), torch.zeros(16), atol=1e-2, rtol=0)
    torch.testing.assert_close((f * (wy - com[:, 1:2])).sum(1), torch.zeros(16), atol=1e-2, rtol=0)
    # the static tip limits, env by env, from a plain Vehicle with that env's values
    for i in (0, 7, 15):
        v = dataclasses.replace(sim.vehicle, mass=float(env.params["mass"][i]),
                                com=tuple(float(c) for c in com[i]),
                                wheel_radius=float(env.params["wheel_radius"][i]))
        r_lim, p_lim = tasks.static_tip_limits(v)
        assert float(sim.task.roll_limit[i]) == pytest.approx(r_lim, rel=1e-5)
        assert float(sim.task.pitch_limit[i]) == pytest.approx(p_lim, rel=1e-5)


def test_randomized_wheel_radius_lifts_the_vehicle_on_flat_ground():
    cfg = RandomizationConfig(wheel_radius_scale=(0.5, 1.5))
    for ground in ("four_wheel", "rigid_contact"):
        env = DomainRandomization(venv(8, ground=ground, terrain=FLAT), cfg)
        env.reset(seed=2)
        # flat ground at 0: the rear axle sits one (per-env) wheel radius up
        torch.testing.assert_close(env.unwrapped.state_view().contact.position[:, 2],
                                   env.params["wheel_radius"], atol=1e-5, rtol=0)


def test_skid_steer_with_per_env_vehicles_equals_one_vehicle_at_a_time():
    v0 = offroad_env.husky()
    n, K = 3, v0.num_wheels
    mass = torch.tensor([30.0, 56.0, 90.0], dtype=torch.float64)
    com = torch.tensor([[0.20, 0.0, 0.05], [0.256, 0.03, 0.08], [0.30, -0.05, 0.1]],
                       dtype=torch.float64)
    radius = torch.tensor([0.15, 0.1651, 0.18], dtype=torch.float64)
    mu = torch.tensor([0.3, 0.6, 0.9], dtype=torch.float64)
    params = SkidSteerParams()
    fz = torch.tensor([[100.0, 120.0, 140.0, 160.0]] * n, dtype=torch.float64)
    targets = torch.tensor([[5.0, 8.0, 5.0, 8.0]] * n, dtype=torch.float64)
    s = SkidSteerState.zeros(n, K, torch.float64)
    zero = torch.zeros(n, dtype=torch.float64)
    batch, _ = skid_steer_step(VehicleBatch(v0, mass, com, radius), params, s, None, fz, zero,
                               zero, 0.05, substeps=5, mu=mu, speed_targets=targets)
    for i in range(n):
        vi = dataclasses.replace(v0, mass=float(mass[i]), com=tuple(com[i].tolist()),
                                 wheel_radius=float(radius[i]))
        one, _ = skid_steer_step(vi, params, SkidSteerState.zeros(1, K, torch.float64), None,
                                 fz[i:i + 1], zero[:1], zero[:1], 0.05, substeps=5,
                                 mu=mu[i:i + 1], speed_targets=targets[i:i + 1])
        for f in ("x", "y", "yaw", "vx", "vy", "yaw_rate", "wheel_omega"):
            torch.testing.assert_close(getattr(batch, f)[i:i + 1], getattr(one, f))


def test_randomized_imu_noise_has_the_drawn_level():
    cfg = RandomizationConfig(mass_scale=None, com_shift=None, wheel_radius_scale=None,
                              friction=None, accel_noise=(0.05, 0.5), gyro_noise=None)
    env = DomainRandomization(venv(4, terrain=FLAT), cfg)
    env.reset(seed=3)
    base = env.unwrapped
    samples = []
    for _ in range(400):  # parked on flat ground: the accelerometer reads g plus noise
        env.step(torch.zeros(4, 2))
        samples.append(base.state_view().accel_s[:, 0].clone())
    std = torch.stack(samples).std(0)
    torch.testing.assert_close(std, env.params["accel_noise"], rtol=0.15, atol=0)


def test_randomized_terrain_set_and_bad_configs():
    bumps = terrain.BumpsConfig(size=(40.0, 40.0), resolution=(0.1, 0.1))
    env = DomainRandomization(venv(8), RandomizationConfig(terrains=(FLAT, bumps),
                                                           maps_per_terrain=3))
    env.reset(seed=0)
    assert len(env.unwrapped.terrain) == 6
    small = terrain.FlatConfig(size=(10.0, 10.0), resolution=(0.1, 0.1))
    with pytest.raises(ValueError, match="size"):
        DomainRandomization(venv(2), RandomizationConfig(terrains=(small,)))
    with pytest.raises(ValueError, match="mass_scale"):
        RandomizationConfig(mass_scale=(0.0, 1.0))
    with pytest.raises(ValueError, match="friction"):
        RandomizationConfig(friction=(1.0, 0.5))
    with pytest.raises(ValueError, match="com_shift"):
        RandomizationConfig(com_shift=((0, 1), (0, 1)))
    with pytest.raises(ValueError, match="mass"):
        venv(2).unwrapped.set_params(torch.ones(2, dtype=torch.bool),
                                         mass=torch.tensor([1.0, -1.0]))


# ---------------------------------------------------------------- latency and repeat
@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_observation_delay_returns_the_observation_k_steps_back(mode):
    k, n, T = 2, 3, 14
    plain, delayed = venv(n, mode, max_episode_steps=5), ObservationDelay(
        venv(n, mode, max_episode_steps=5), k)
    o_p, _ = plain.reset(seed=4)
    o_d, _ = delayed.reset(seed=4)
    assert torch.equal(o_p, o_d)
    history = [o_p]  # unwrapped observations of the current episode, per env
    episode = [[o_p[i]] for i in range(n)]
    for t, a in enumerate(actions(n, T)):
        if mode == AutoresetMode.DISABLED and t % 5 == 0 and t:
            mask = torch.ones(n, dtype=torch.bool)
            o_p, _ = plain.reset(options={"reset_mask": mask})
            o_d, _ = delayed.reset(options={"reset_mask": mask})
            episode = [[o_p[i]] for i in range(n)]
            assert torch.equal(o_p, o_d)
        o_p, _, term, trunc, info_p = plain.step(a)
        o_d, _, _, _, info_d = delayed.step(a)
        for i in range(n):
            new_episode = (mode == AutoresetMode.NEXT_STEP and len(episode[i]) > 5)
            if new_episode:
                episode[i] = []
            if mode == AutoresetMode.SAME_STEP and bool(term[i] | trunc[i]):
                episode[i].append(info_p["final_obs"][i])
                expect_final = episode[i][max(0, len(episode[i]) - 1 - k)]
                assert torch.equal(info_d["final_obs"][i], expect_final)
                episode[i] = [o_p[i]]
                assert torch.equal(o_d[i], o_p[i])
                continue
            episode[i].append(o_p[i])
            assert torch.equal(o_d[i], episode[i][max(0, len(episode[i]) - 1 - k)]), (t, i)
        history.append(o_p)


def test_action_delay_equals_the_unwrapped_env_under_shifted_actions():
    k, n, T = 3, 4, 12
    acts = actions(n, T)
    delayed = ActionDelay(venv(n), k)
    plain = venv(n)
    delayed.reset(seed=9)
    plain.reset(seed=9)
    shifted = [torch.zeros(n, 2)] * k + acts[:-k]
    for a, s in zip(acts, shifted):
        o_d, r_d, *_ = delayed.step(a)
        o_p, r_p, *_ = plain.step(s)
        assert torch.equal(o_d, o_p) and torch.equal(r_d, r_p)
    with pytest.raises(ValueError, match="non-finite"):
        delayed.step(torch.full((n, 2), float("nan")))


def test_action_delay_restarts_with_zeros_after_an_episode_end():
    env = ActionDelay(venv(2, AutoresetMode.SAME_STEP, max_episode_steps=3), 2)
    env.reset(seed=0)
    for _ in range(3):
        env.step(torch.ones(2, 2))
    # the new episode starts: its first two executed actions are zeros (parked)
    base = env.unwrapped
    x0 = base.state_view().x.clone()
    env.step(torch.ones(2, 2))
    env.step(torch.ones(2, 2))
    torch.testing.assert_close(base.state_view().x, x0)
    env.step(torch.ones(2, 2))
    assert (base.state_view().x != x0).all()


def test_action_repeat_equals_repeated_steps_and_freezes_finished_envs():
    k = 3
    rep = venv(4, action_repeat=k)
    one = venv(4)
    rep.reset(seed=2)
    one.reset(seed=2)
    a = torch.tensor([[1.0, 0.3], [0.5, -0.2], [0.8, 0.0], [1.0, 1.0]])
    _, r_rep, *_ = rep.step(a)
    r_sum = torch.zeros(4)
    for _ in range(k):
        _, r, *_ = one.step(a)
        r_sum += r
    for name in ("x", "y", "yaw"):
        torch.testing.assert_close(getattr(rep.unwrapped.state_view(), name),
                                   getattr(one.unwrapped.state_view(), name))
    torch.testing.assert_close(r_rep, r_sum)
    assert rep.unwrapped.state_view().steps.tolist() == [1, 1, 1, 1]
    # env 0's goal is reached on the first physics step: it stops there, the others go on
    rep.reset(seed=2)
    one.reset(seed=2)
    for e in (rep, one):
        st = e.unwrapped.sim.state  # move the goals by hand (a test-only write)
        st.goal_w = st.contact.base_position[:, :2] + torch.tensor([[0.0, 0.0]] + [[15.0, 0.0]] * 3)
    fwd = torch.tensor([[1.0, 0.0]] * 4)
    _, r_rep, term, *_ = rep.step(fwd)
    _, r_one, term_one, *_ = one.step(fwd)
    assert bool(term[0]) and bool(term_one[0]) and not bool(term[1:].any())
    torch.testing.assert_close(rep.unwrapped.state_view().x[0], one.unwrapped.state_view().x[0])
    assert float(r_rep[0]) == pytest.approx(float(r_one[0]))
    for _ in range(k - 1):
        one.step(fwd)
    torch.testing.assert_close(rep.unwrapped.state_view().x[1:], one.unwrapped.state_view().x[1:])
    with pytest.raises(ValueError, match="action_repeat"):
        venv(1, action_repeat=0)


# ---------------------------------------------------------------- recording
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_recorder_writes_each_episode_with_the_final_state(tmp_path, mode):
    n, L = 3, 6
    rec = TrajectoryRecorder(venv(n, mode, max_episode_steps=L), tmp_path / "npz")
    twin = venv(n, AutoresetMode.DISABLED, max_episode_steps=L)
    rec.reset(seed=1)
    twin.reset(seed=1)
    poses = []
    for a in actions(n, L):
        rec.step(a)
        twin.step(a)
        poses.append(twin.unwrapped.state_view().base_position_w.clone())
    assert len(rec.written) == n
    ep = load_episode(tmp_path / "npz" / "env00001_ep00000.npz")
    assert len(ep["x"]) == L and str(ep["end_reason"]) == "time_limit"
    np.testing.assert_allclose(ep["x"], [p[1, 0].item() for p in poses], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ep["z"][-1], poses[-1][1, 2].item(), atol=1e-6)
    assert {"accel_z", "gyro_z", "action_0", "reward", "reward/progress"} <= set(ep)
    np.testing.assert_allclose(ep["action_0"], [a[1, 0].item() for a in actions(n, L)],
                               atol=1e-6)
    # CSV holds the same numbers
    rec2 = TrajectoryRecorder(venv(n, mode, max_episode_steps=L), tmp_path / "csv", envs=[1],
                              fmt="csv")
    rec2.reset(seed=1)
    for a in actions(n, L):
        rec2.step(a)
    assert len(rec2.written) == 1
    ep2 = load_episode(rec2.written[0])
    np.testing.assert_allclose(ep2["x"], ep["x"], atol=1e-5)
    with pytest.raises(ValueError, match="envs"):
        TrajectoryRecorder(venv(2), tmp_path, envs=[5])
    with pytest.raises(ValueError, match="max_episodes"):
        TrajectoryRecorder(venv(2), tmp_path, max_episodes=-1)
    with pytest.raises(ValueError, match="fmt"):
        TrajectoryRecorder(venv(2), tmp_path, fmt="parquet")


# ---------------------------------------------------------------- Gymnasium vector wrappers
def test_gymnasium_vector_wrappers_run_on_the_native_env():
    from gymnasium.wrappers.vector import (ArrayConversion, NormalizeObservation,
                                           RecordEpisodeStatistics)
    env = venv(8, AutoresetMode.NEXT_STEP, max_episode_steps=10)  # NormalizeObservation's mode
    env = RecordEpisodeStatistics(ArrayConversion(env, env_xp=torch, target_xp=np))
    env = NormalizeObservation(env)
    obs, _ = env.reset(seed=0)
    assert isinstance(obs, np.ndarray) and obs.shape == (8, 18)
    episodes = None
    for _ in range(12):
        obs, r, term, trunc, info = env.step(np.zeros((8, 2), dtype=np.float32))
        if "episode" in info:
            episodes = info
    assert episodes is not None and (episodes["episode"]["l"][episodes["_episode"]] == 10).all()
    assert np.all(np.abs(obs.mean(0)) < 1.0)


# ---------------------------------------------------------------- Stable-Baselines3
def test_sb3_adapter_terminal_observation_and_time_limit():
    from stable_baselines3.common.vec_env import VecCheckNan, VecMonitor, VecNormalize

    from wrappers import SB3VecEnv
    with pytest.raises(ValueError, match="SAME_STEP"):
        SB3VecEnv(venv(2))
    n, L = 4, 5
    sb = SB3VecEnv.make(NAV, n, max_episode_steps=L)
    twin = venv(n, AutoresetMode.SAME_STEP, max_episode_steps=L)
    sb.seed(11)
    obs = sb.reset()
    o_t, _ = twin.reset(seed=11)
    np.testing.assert_array_equal(obs, o_t.numpy())
    for t, a in enumerate(actions(n, L)):
        obs, rew, done, infos = sb.step(a.numpy())
        o_t, r_t, term, trunc, info = twin.step(a)
        np.testing.assert_array_equal(obs, o_t.numpy())
        np.testing.assert_allclose(rew, r_t.numpy())
    assert done.all()
    for i in range(n):
        np.testing.assert_array_equal(infos[i]["terminal_observation"],
                                      info["final_obs"][i].numpy())
        assert infos[i]["TimeLimit.truncated"] and infos[i]["end_reason"] == "time_limit"
    # SB3's own wrappers and checks run on it
    wrapped = VecNormalize(VecMonitor(VecCheckNan(SB3VecEnv.make(NAV, 4), raise_exception=True)))
    wrapped.reset()
    for a in actions(4, 20):
        wrapped.step(a.numpy())
    assert sb.env_is_wrapped(gym.Wrapper) == [False] * n
    assert sb.get_attr("num_envs") == [n] * n


def test_imu_noise_and_bias_random_walk_have_their_closed_form_spread():
    """Parked on flat ground over T steps: the gyro reads white noise plus a bias that is a
    random walk, so across many envs Var = walk^2 * T * dt + noise^2 (and the mean stays 0)."""
    from offroad_env.sim.config import ImuConfig
    n, T, noise, walk = 4000, 100, 0.01, 0.05
    env = venv(n, terrain=FLAT, imu=ImuConfig(gyro_noise=noise, gyro_bias_walk=walk))
    env.reset(seed=0)
    for _ in range(T):
        env.step(torch.zeros(n, 2))
    gz = env.unwrapped.state_view().gyro_s[:, 2].double()
    dt = env.unwrapped.config.dt
    expected = walk ** 2 * T * dt + noise ** 2
    assert float(gz.var()) == pytest.approx(expected, rel=0.08)
    assert abs(float(gz.mean())) < 4 * (expected / n) ** 0.5


def test_randomized_friction_changes_skid_steer_traction():
    """Full throttle from rest with skid-steer on flat ground: on slippery ground (mu 0.05) the
    wheels spin and the vehicle covers less distance than on grippy ground (mu 1.0)."""
    def run(mu):
        cfg = RandomizationConfig(mass_scale=None, com_shift=None, wheel_radius_scale=None,
                                  friction=(mu, mu), accel_noise=None, gyro_noise=None)
        env = DomainRandomization(venv(4, dynamics="skid_steer", ground="rigid_contact",
                                       terrain=FLAT), cfg)
        env.reset(seed=0)
        base = env.unwrapped
        x0, y0 = base.state_view().x.clone(), base.state_view().y.clone()
        for _ in range(20):
            obs, *_ = env.step(torch.ones(4, 2))
            assert torch.isfinite(obs).all()
        return torch.hypot(base.state_view().x - x0, base.state_view().y - y0)
    slippery, grippy = run(0.05), run(1.0)
    assert (slippery < 0.8 * grippy).all(), (slippery, grippy)


def test_sb3_vec_env_reports_episodes_so_ep_rew_mean_logs_without_vec_monitor():
    from stable_baselines3 import PPO

    from wrappers import SB3VecEnv
    sb = SB3VecEnv.make(NAV, 3, max_episode_steps=7)
    sb.reset()
    g = np.random.default_rng(0)
    ret, length, seen = np.zeros(3), np.zeros(3, dtype=int), 0
    for _ in range(20):
        _, r, done, infos = sb.step(g.uniform(-1, 1, (3, 2)).astype(np.float32))
        ret += r
        length += 1
        for i in np.flatnonzero(done):
            ep = infos[i]["episode"]
            assert ep["l"] == length[i] == 7 and ep["r"] == pytest.approx(ret[i], rel=1e-5)
            ret[i], length[i] = 0.0, 0
            seen += 1
    assert seen == 6
    model = PPO("MlpPolicy", SB3VecEnv.make(NAV, 4, max_episode_steps=8), n_steps=16,
                batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert len(model.ep_info_buffer) > 0  # what ep_rew_mean averages
    assert all(ep["l"] == 8 for ep in model.ep_info_buffer)


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_torch_episode_statistics_match_gymnasiums_on_the_same_data(mode):
    # Gymnasium's numpy wrapper behind ArrayConversion vs the torch-native one, same seed
    from gymnasium.wrappers.vector import ArrayConversion
    from gymnasium.wrappers.vector import RecordEpisodeStatistics as GymStats

    from wrappers import TorchRecordEpisodeStatistics

    def make():
        return gym.make_vec(NAV, num_envs=4, vectorization_mode="vector_entry_point",
                            max_episode_steps=9, autoreset_mode=gym.vector.AutoresetMode(mode))
    ours = TorchRecordEpisodeStatistics(make())
    theirs = GymStats(ArrayConversion(make(), env_xp=torch, target_xp=np))
    ours.reset(seed=5)
    theirs.reset(seed=5)
    g = np.random.default_rng(0)
    for _ in range(40):
        a = g.uniform(-1, 1, (4, 2)).astype(np.float32)
        *_, i1 = ours.step(torch.as_tensor(a))
        *_, i2 = theirs.step(a)
        assert ("episode" in i1) == ("episode" in i2)
        if "episode" in i2:
            assert np.array_equal(i1["_episode"].numpy(), i2["_episode"])
            np.testing.assert_allclose(i1["episode"]["r"].numpy(), i2["episode"]["r"],
                                       rtol=1e-6, atol=1e-9)
            assert np.array_equal(i1["episode"]["l"].numpy(), i2["episode"]["l"])
    np.testing.assert_allclose(list(ours.return_queue), list(theirs.return_queue), rtol=1e-6)
    assert list(ours.length_queue) == list(theirs.length_queue) and ours.episode_count > 8


def test_torch_normalize_observation_matches_gymnasiums_on_the_same_data():
    from gymnasium.wrappers.vector import ArrayConversion
    from gymnasium.wrappers.vector import NormalizeObservation as GymNorm

    from wrappers import TorchNormalizeObservation

    def make():
        return gym.make_vec(NAV, num_envs=4, vectorization_mode="vector_entry_point",
                            max_episode_steps=9)
    ours = TorchNormalizeObservation(make())
    theirs = GymNorm(ArrayConversion(make(), env_xp=torch, target_xp=np))
    o1, _ = ours.reset(seed=2)
    o2, _ = theirs.reset(seed=2)
    np.testing.assert_allclose(o1.numpy(), o2, rtol=1e-4, atol=1e-4)
    g = np.random.default_rng(1)
    for _ in range(25):
        a = g.uniform(-1, 1, (4, 2)).astype(np.float32)
        o1, *_ = ours.step(torch.as_tensor(a))
        o2, *_ = theirs.step(a)
        np.testing.assert_allclose(o1.numpy(), o2, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.obs_rms.mean.numpy(), theirs.obs_rms.mean, rtol=1e-5,
                               atol=1e-6)
    assert o1.dtype == torch.float32
