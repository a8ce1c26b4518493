"""Benchmark: what the reference costs per episode as episodes grow (issue 68).

The rollout planner looks ahead every ``R`` steps with each of its ``C`` candidates: to the
episode's end (``H=0``, the former reference: each look-ahead as long as the episode has left,
so an episode costs about ``C T^2 / (2 R)`` simulated steps) or ``H`` steps with the map
planner's cost-to-go scoring the rest (the bounded reference: at most ``C H T / R``, linear in
``T``). Here one task that no episode finishes (a goal 140 m away across 160 x 20 m of Perlin
hills, no stuck rule: every episode runs to its time limit ``T``) is driven by each reference
for T = 300, 600 and 1200 steps, on ``OffroadTraverse-v1`` with the physical model
(``rigid_body``), ``--n`` envs, one thread; the figure is the wall time per episode, and its
ratio to the 300-step episode's (linear: 2 and 4; quadratic: 4 and 16).

    python benchmarks/bench_reference_cost.py [--steps 300 600 1200] [--n 2]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import gymnasium as gym
import torch

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env.sim.config import TaskConfig
from terrain.generators import PerlinConfig
from train.planners import baseline

POLICIES = ("rollout:R=20,H=100,library=map", "rollout:R=20,H=0")


def episode(policy: str, steps: int, n: int) -> tuple[float, list[str]]:
    env = gym.make_vec("offroad_env/OffroadTraverse-v1", num_envs=n,
                       vectorization_mode="vector_entry_point", dynamics="rigid_body",
                       terrain=PerlinConfig(size=(160.0, 20.0), resolution=(0.1, 0.1),
                                            amplitude=0.5),
                       task=TaskConfig(stuck_time=None), max_episode_steps=steps)
    y = torch.linspace(-4.0, 4.0, n, dtype=torch.float64)
    start = torch.stack((torch.full_like(y, -70.0), y, torch.zeros_like(y)), 1)
    goal = torch.stack((torch.full_like(y, 70.0), y), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        obs, _ = env.reset(seed=0, options={"start_pose": start, "goal": goal})
    act = baseline(policy, env, 0)
    ends = [None] * n
    t0 = time.perf_counter()
    while any(e is None for e in ends):
        obs, _, term, trunc, info = env.step(act(obs))
        for i in torch.nonzero(term | trunc).flatten().tolist():
            if ends[i] is None:
                ends[i] = env.unwrapped.end_labels[int(info["end_reason"][i])]
    dt = time.perf_counter() - t0
    env.close()
    return dt, ends


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[300, 600, 1200])
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--only", nargs="+", default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    print(f"# {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"1 thread, N = {args.n}")
    print("| policy | " + " | ".join(f"T = {t} [s]" for t in args.steps)
          + " | ratios to the first | ends |")
    print("|---|" + "---|" * len(args.steps) + "---|---|")
    for policy in args.only or POLICIES:
        times, ends = [], set()
        for t in args.steps:
            dt, e = episode(policy, t, args.n)
            times.append(dt)
            ends.update(e)
        ratios = ", ".join(f"{x / times[0]:.2f}" for x in times)
        print(f"| `{policy}` | " + " | ".join(f"{x:.1f}" for x in times)
              + f" | {ratios} | {', '.join(sorted(ends))} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
