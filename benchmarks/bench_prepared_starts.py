"""Benchmark: an env's step with its next starts prepared ahead against the reset computed where
it happens (``offroad_env.core.next_starts``; issue 46), side by side in one process.

    python benchmarks/bench_prepared_starts.py [--env-id offroad_env/OffroadNav-v1]
        [--num-envs 1024] [--steps 100] [--repeats 5] [--threads 2] [--compile]

Two vector envs of the same id: one as built (prepared starts), one with
``sim.next_starts = None``. Both reset with seed 0 and have their episodes spread over the time
limit as ``train.ppo`` spreads them (``set_episode_steps``), so a few rows end at every step.
Each steps the same Gaussian actions (std 0.6, clipped); blocks of ``--steps`` steps alternate
between the two, and the script prints the median env-steps/s of each over ``--repeats`` blocks
and the prepared env's calls, rows prepared and rows taken.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import offroad_env  # noqa: E402,F401  (registers the ids)


def _env(env_id: str, n: int, compile: bool, prepared: bool):
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                       compile=compile)
    if not prepared:
        env.unwrapped.sim.next_starts = None
    env.reset(seed=0)
    limit = env.unwrapped.max_episode_steps or 500
    env.unwrapped.set_episode_steps(torch.arange(n) % limit)
    return env


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="offroad_env/OffroadNav-v1")
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    n = a.num_envs
    envs = {"prepared": _env(a.env_id, n, a.compile, True),
            "direct": _env(a.env_id, n, a.compile, False)}
    gen = torch.Generator().manual_seed(0)
    shape = (n,) + envs["direct"].single_action_space.shape
    acts = [(0.6 * torch.randn(shape, generator=gen)).clamp(-1, 1) for _ in range(a.steps)]
    for env in envs.values():  # warm-up (and the compile)
        for act in acts[:5]:
            env.step(act)
    times = {k: [] for k in envs}
    for _ in range(a.repeats):
        for k, env in envs.items():
            t0 = time.perf_counter()
            for act in acts:
                env.step(act)
            times[k].append(time.perf_counter() - t0)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {a.threads} threads, torch "
          f"{torch.__version__}, {a.env_id}, N = {n}, {'compiled' if a.compile else 'eager'}")
    rate = {k: n * a.steps / statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"{k}: {rate[k]:,.0f} env-steps/s (blocks {', '.join(f'{x:.3f}' for x in v)} s)")
    ns = envs["prepared"].unwrapped.sim.next_starts
    print(f"prepared / direct: {rate['prepared'] / rate['direct']:.2f}; prepare calls "
          f"{ns.calls}, rows prepared {ns.rows_prepared}, rows taken {ns.rows_taken}")


if __name__ == "__main__":
    main()
