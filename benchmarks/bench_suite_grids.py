"""Benchmark: a suite's training step on one grid against each family on its own grid (issue 46).

    python benchmarks/bench_suite_grids.py [--suite offroad-bench-v1] [--num-envs 4096]
        [--steps 24] [--repeats 3] [--threads 2] [--compile]

``train.ppo --suite`` trains every family on one map stack: the finest group's grid
(:meth:`train.common.suite.SuiteSpec.on_one_grid`; v1: 2.5 cm, so every wheel carries 15 rim samples).
The suite judges each family on its own grid (:meth:`~train.common.suite.SuiteSpec.groups`). This
builds both: the one-grid env with ``--num-envs`` rows, and one env per group with the rows
split by the group's share of the families (what a training env made of the groups would
step). Each env steps the same policy-like actions (Gaussian, std 0.6, clipped: an untrained
policy's), autoresets included, and the script prints each env's median env-steps/s over
``--repeats`` windows of ``--steps`` steps, and the groups' combined rate (all rows over the
groups' summed time: they would step one after the other in one process).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offroad_env import OffroadVectorEnv  # noqa: E402
from train.common.suite import load_suite, suite_config, suite_episode_steps  # noqa: E402


def _env(spec, n: int, compile: bool) -> OffroadVectorEnv:
    cfg = suite_config(spec, terrain_seed=0)  # training's worlds, not the suite's test maps
    return OffroadVectorEnv(num_envs=n, config=cfg, compile=compile,
                            max_episode_steps=suite_episode_steps(spec, cfg))


def _window_times(env: OffroadVectorEnv, steps: int, repeats: int) -> list[float]:
    gen = torch.Generator().manual_seed(0)
    env.reset(seed=0)
    shape = (env.num_envs,) + env.single_action_space.shape
    acts = [(0.6 * torch.randn(shape, generator=gen)).clamp(-1, 1) for _ in range(steps)]
    env.step(acts[0])  # warm-up (a compiled env compiles here)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for a in acts:
            env.step(a)
        out.append(time.perf_counter() - t0)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v1")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    suite = load_suite(a.suite)
    groups = suite.groups()
    n_fam = len(suite.families)
    split = [round(a.num_envs * len(g.families) / n_fam) for g in groups]
    split[0] += a.num_envs - sum(split)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {a.threads} threads, torch "
          f"{torch.__version__}, suite {a.suite}, N = {a.num_envs}, "
          f"{'compiled' if a.compile else 'eager'}, {a.steps} steps x {a.repeats}")
    print("| env | grid | families | rows | build s | median env-steps/s |")
    print("|---|---|---|---|---|---|")
    one = suite.on_one_grid()
    rows = [("one grid", one, a.num_envs)] + [(f"group {i}", g, k)
                                              for i, (g, k) in enumerate(zip(groups, split))]
    group_t = []
    for name, spec, n in rows:
        t0 = time.perf_counter()
        env = _env(spec, n, a.compile)
        build = time.perf_counter() - t0
        med = statistics.median(_window_times(env, a.steps, a.repeats))
        if name != "one grid":
            group_t.append(med)
        print(f"| {name} | {spec.resolution[0]:g} m, {spec.size[0]:g} m | "
              f"{', '.join(spec.families)} | {n} | {build:.0f} | {n * a.steps / med:,.0f} |",
              flush=True)
        del env
    print(f"| the groups together | | | {a.num_envs} | | "
          f"{a.num_envs * a.steps / sum(group_t):,.0f} |")


if __name__ == "__main__":
    main()
