"""Shared helpers of the environment tests (tests/envs/): small terrains, env builders, a seeded
rollout, the IMU slice of an observation, a vehicle parked across a slope, and a small
simulator on flat ground (``sim``, on ``FLAT20``)."""

import math

import numpy as np
import torch

import terrain
from offroad_env import OffroadVectorEnv, Simulator
from offroad_env.sim.config import SimConfig


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


FLAT20 = terrain.FlatConfig(size=(20.0, 20.0), resolution=(0.1, 0.1))


def sim(n=4, dtype=torch.float32, **kw):
    s = Simulator(SimConfig(**{"terrain": FLAT20, "num_maps": 1, **kw}), n, dtype=dtype)
    s.set_keys(torch.arange(n, dtype=torch.int64) * 7919 + 1, torch.ones(n, dtype=torch.bool))
    s.reset(torch.ones(n, dtype=torch.bool))
    return s


def assert_compiled_agrees(eager, comp, action, steps, seed, tol=1e-4, later_tol=None):
    """Reset ``eager`` and ``comp`` (the same vector env, eager and compiled) with ``seed`` and
    step both with ``action`` for ``steps``: equal resets, observations and rewards within
    ``tol`` on the first step and ``later_tol`` (default ``tol``) after it."""
    o_e, _ = eager.reset(seed=seed)
    o_c, _ = comp.reset(seed=seed)
    torch.testing.assert_close(o_c, o_e)
    for k in range(steps):
        o_e, r_e, *_ = eager.step(action)
        o_c, r_c, *_ = comp.step(action)
        t = tol if k == 0 or later_tol is None else later_tol
        torch.testing.assert_close(o_c, o_e, rtol=t, atol=t)
        torch.testing.assert_close(r_c, r_e, rtol=t, atol=t)


def ruts_after_random_steps(compiled: bool, n=16, steps=30, **env_kw):
    """``(wheel_sinkage, body_pos)`` of an ``OffroadVectorEnv(num_envs=n, dynamics="rigid_body",
    task="velocity", compile=compiled, **env_kw)`` after ``steps`` seeded random actions (the
    compiled and eager soil steps are compared on it)."""
    env = OffroadVectorEnv(num_envs=n, dynamics="rigid_body", task="velocity",
                           compile=compiled, **env_kw)
    env.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        env.step(torch.rand(n, 2, generator=gen) * 2 - 1)
    st = env.unwrapped.sim.state
    return st.wheel_sinkage.clone(), st.body_pos.clone()

