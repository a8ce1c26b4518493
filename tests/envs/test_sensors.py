"""The IMU's closed forms in the environment: at rest, on a slope, in a turn, after a reset."""

import math

import numpy as np
import pytest
import torch

import offroad_env
import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv

from env_util import FLAT, imu_of


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
