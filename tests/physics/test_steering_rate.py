"""The physical model's steering-rate action (issue 24: "speed and steering angle or rate"):
the angle is state, moved at the action's share of max_steer_rate and held within max_steer."""

import math

import pytest
import torch

from offroad_env import OffroadVectorEnv
from offroad_env.physics.rigid_params import RigidBodyParams

F64 = dict(dtype=torch.float64)


def _truck(steering, n=1, **kw):
    return OffroadVectorEnv(num_envs=n, vehicle="rc_truck", dynamics="rigid_body",
                            terrain="flat", task="velocity", dtype=torch.float64,
                            dynamics_params=RigidBodyParams(steering=steering, **kw),
                            obs_terms=("body_velocity", "steering"))


def _angle(obs):
    return float(obs[0, -1])


def test_a_held_rate_turns_the_wheels_at_that_rate_to_the_limit_and_back():
    env = _truck("ackermann_rate")
    p = env.unwrapped.config.dynamics_params
    obs, _ = env.reset(seed=0)
    assert _angle(obs) == 0.0
    step = p.max_steer_rate * env.unwrapped.config.dt  # 0.1 rad a step at full rate
    seen = []
    for _ in range(8):
        obs, *_ = env.step(torch.tensor([[0.3, 1.0]], **F64))
        seen.append(_angle(obs))
    want = [min((k + 1) * step, p.max_steer) for k in range(8)]
    assert seen == pytest.approx(want, abs=1e-12)  # 0.1, 0.2, ..., held at 30 deg
    obs, *_ = env.step(torch.tensor([[0.3, -0.5]], **F64))
    assert _angle(obs) == pytest.approx(p.max_steer - 0.5 * step, abs=1e-12)
    obs, _ = env.reset(seed=1)
    assert _angle(obs) == 0.0  # each episode starts straight


def test_a_rate_drive_is_the_angle_drive_of_its_integrated_angles():
    rate = _truck("ackermann_rate")
    p = rate.unwrapped.config.dynamics_params
    rate.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    angles, path = [], []
    for _ in range(40):
        u = torch.rand(1, generator=gen, **F64) * 2 - 1
        obs, *_ = rate.step(torch.stack((torch.full_like(u, 0.6), u), 1))
        angles.append(_angle(obs))
        path.append(rate.unwrapped.state_view().x[0].item())
    angle = _truck("ackermann")
    angle.reset(seed=0)
    again = []
    for a in angles:
        obs, *_ = angle.step(torch.tensor([[0.6, a / p.max_steer]], **F64))
        assert _angle(obs) == pytest.approx(a, abs=1e-12)
        again.append(angle.unwrapped.state_view().x[0].item())
    assert again == pytest.approx(path, abs=1e-9)
    assert max(abs(a) for a in angles) > 0.2  # it did steer


def test_the_rate_layout_is_checked_where_it_enters():
    with pytest.raises(ValueError, match="max_steer_rate must be a finite number > 0"):
        RigidBodyParams(steering="ackermann_rate", max_steer_rate=0.0)
    with pytest.raises(ValueError, match=r"steering must be one of \('skid', 'ackermann', "
                                         r"'ackermann_rate'\), got 'tank'"):
        RigidBodyParams(steering="tank")
    # a skid-steered Husky observes no steering angle
    env = OffroadVectorEnv(num_envs=1, dynamics="rigid_body", terrain="flat", task="velocity",
                           obs_terms=("steering",))
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(torch.tensor([[1.0, -1.0]]))
    assert float(obs[0, 0]) == 0.0
    assert math.isclose(float(env.unwrapped.single_observation_space.high[0]), math.pi / 2,
                        rel_tol=1e-6)
