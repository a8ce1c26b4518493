"""Golden trajectories: fixed-seed rollouts whose every output is stored and compared bit for bit.

A refactor that changes nothing must leave these unchanged. A change of the physics on purpose
re-records them (``python tests/golden_cases.py``) in the same commit, and its message says why;
``--missing`` records only cases the file lacks (a new env id); ``--case NAME`` re-records that
case alone (a change meant to alter it; the commit says why).

Each case is a vector env of ``N_ENVS`` sub-environments driven for ``STEPS`` steps by actions
drawn from a fixed numpy stream (forward drive in [0.2, 1.2] and a steering random walk, both
past the [-1, 1] bound at times, so clipping is exercised), with the
default NEXT_STEP autoreset and a 100-step time limit, so episodes end (goal, hole, off the map,
time limit) and restart inside the run.
"""

from __future__ import annotations

import os
from pathlib import Path

# the kernels the records were made with (tests/conftest.py says why); before torch loads
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

import gymnasium as gym
import numpy as np
import torch

import offroad_env  # noqa: F401  (registers the ids)
import terrain
from offroad_env.config import ImuConfig, TaskConfig

STEPS = 300
N_ENVS = 3
SEED = 123
LIMIT = 100
FILE = Path(__file__).parent / "golden" / "trajectories.npz"


def _randomized():
    from wrappers import DomainRandomization
    env = gym.make_vec("offroad_env/OffroadNav-v0", num_envs=N_ENVS,
                       vectorization_mode="vector_entry_point", dynamics="skid_steer",
                       max_episode_steps=LIMIT,
                       imu=ImuConfig(accel_noise=0.05, gyro_noise=0.01,
                                                        accel_bias_walk=0.01))
    return DomainRandomization(env)


def _make(name):
    if name == "randomized_skid":
        return _randomized()
    kw = {}
    if name.startswith("id:"):
        env_id = name[3:]
    else:
        env_id = "offroad_env/OffroadNav-v0"
        if name == "skid_rigid":
            kw = dict(dynamics="skid_steer", ground="rigid_contact")
        elif name == "ackermann_rough_rigid":
            env_id = "offroad_env/OffroadNavRough-v0"
            kw = dict(dynamics="ackermann", ground="rigid_contact", action_repeat=2)
        elif name == "six_wheel_rigid_skid":
            kw = dict(vehicle="six_wheel_rover", dynamics="skid_steer", ground="rigid_contact")
        elif name == "small_map_four_wheel":  # reaches goals, drives off the map
            kw = dict(terrain=terrain.PerlinConfig(size=(8.0, 8.0), resolution=(0.1, 0.1),
                                                   amplitude=0.8),
                      task=TaskConfig(goal_distance=(1.0, 3.0), goal_radius=1.0, spawn_margin=2.0))
    return gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode="vector_entry_point",
                        max_episode_steps=LIMIT, **kw)


CASES = tuple(f"id:{i}" for i in offroad_env.ENV_IDS) + (
    "skid_rigid", "ackermann_rough_rigid", "six_wheel_rigid_skid", "randomized_skid", "small_map_four_wheel", "single_rough_rigid")


def _single_rollout() -> dict[str, np.ndarray]:
    """The single env (its own time limit, so its end reasons include ``time_limit``) on the
    rough map, reset by hand when an episode ends."""
    env = offroad_env.OffroadEnv(task="nav_rough", max_episode_steps=LIMIT,
                                 ground="rigid_contact")
    gen = np.random.default_rng(7)
    obs, _ = env.reset(seed=SEED)
    out = {"obs": [obs], "reward": [], "terminated": [], "truncated": [], "end_reason": []}
    names = list(offroad_env.tasks.REASONS.values())
    steer = 0.0
    for _ in range(STEPS):
        steer = float(np.clip(steer + gen.normal(0.0, 0.3), -1.3, 1.3))
        obs, r, term, trunc, info = env.step(np.array([gen.uniform(0.2, 1.2), steer],
                                                      dtype=np.float32))
        out["reward"].append(np.float32(r))
        out["terminated"].append(term)
        out["truncated"].append(trunc)
        out["end_reason"].append(names.index(info["end_reason"].label))
        if term or trunc:
            obs, _ = env.reset()
        out["obs"].append(obs)
    return {k: np.asarray(v) for k, v in out.items()}


def rollout(name: str) -> dict[str, np.ndarray]:
    """``{obs, reward, terminated, truncated, end_reason}`` of one case, stacked over steps
    (``obs`` includes the reset observation first)."""
    torch.manual_seed(0)
    if name == "single_rough_rigid":
        return _single_rollout()
    env = _make(name)
    gen = np.random.default_rng(7)
    obs, _ = env.reset(seed=SEED)
    out = {"obs": [obs.numpy().copy()], "reward": [], "terminated": [], "truncated": [],
           "end_reason": []}
    steer = np.zeros(N_ENVS)
    for _ in range(STEPS):
        steer = np.clip(steer + gen.normal(0.0, 0.3, N_ENVS), -1.3, 1.3)
        a = torch.as_tensor(np.stack((gen.uniform(0.2, 1.2, N_ENVS), steer), 1)
                            .astype(np.float32))
        obs, r, term, trunc, info = env.step(a)
        out["obs"].append(obs.numpy().copy())
        out["reward"].append(r.numpy().copy())
        out["terminated"].append(term.numpy().copy())
        out["truncated"].append(trunc.numpy().copy())
        out["end_reason"].append(np.asarray(info["end_reason"]).astype(np.int64))
    env.close()
    return {k: np.stack(v) for k, v in out.items()}


def record(path: Path = FILE, missing_only: bool = False, cases: tuple = ()) -> None:
    """Record every case, or (``missing_only``, ``--missing``) only the cases the file lacks
    (a new env id or case), or only ``cases`` (``--case NAME``), keeping the others' records
    as they are."""
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; cases: {list(CASES)}")
    arrays = {}
    if (missing_only or cases) and path.exists():
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files if k.rsplit("/", 1)[0] not in cases}
    done = {k.rsplit("/", 1)[0] for k in arrays}
    todo = [c for c in CASES if c not in done]
    for case in todo:
        for k, v in rollout(case).items():
            arrays[f"{case}/{k}"] = v
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"recorded {len(todo)} case(s) to {path}: {todo}")


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    record(missing_only="--missing" in args,
           cases=tuple(args[i + 1] for i, a in enumerate(args) if a == "--case"))
