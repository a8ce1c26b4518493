"""The one action check: shapes, dtypes, devices, NaN and inf, clipping."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv


FLAT = terrain.FlatConfig(size=(30.0, 30.0), resolution=(0.25, 0.25))


SMALL = terrain.PerlinConfig(size=(30.0, 30.0), resolution=(0.25, 0.25), amplitude=0.3,
                             frequency=0.1)


def small_env(**kw):
    kw.setdefault("terrain", SMALL)
    kw.setdefault("num_maps", 2)
    return kw


def make_vec(mode, n=3, steps=3, **kw):
    return OffroadVectorEnv(num_envs=n, autoreset_mode=mode, max_episode_steps=steps,
                            **small_env(**kw))


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


def imu_of(obs_row, env):
    start = [s for t, s, e in env.obs_layout if t == "imu"][0]
    return obs_row[start:start + 3], obs_row[start + 3:start + 6]


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
