"""The cost of the agent's own inputs (:mod:`train.common.inputs`) on the ``--suite`` training
env: each source's first call (the cost scan's map costs) and the median of its next calls,
against the env's eager step, at the suite preset's 4096 envs.

    python benchmarks/bench_inputs.py --steps 20 --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v1")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    from train.common.envconfig import env_kwargs
    from train.common.inputs import CostScan, CriticInputs, WideScan
    from train.ppo.config import PPOConfig
    from train.ppo.trainer import make_vec_env
    from wrappers import TerrainCurriculum

    cfg = PPOConfig.preset("suite", env={"suite": a.suite})
    env = TerrainCurriculum(make_vec_env(cfg.env_id, a.num_envs, **env_kwargs(cfg.env_id,
                                                                                cfg.env)), 5)
    env.reset(seed=0)
    action = torch.tensor([[0.5, 0.1]]).expand(a.num_envs, 2)
    sources = {"wide_scan": WideScan(env), "cost_scan": CostScan(env),
               "privileged (critic)": CriticInputs(env)}
    first = {}
    for name, src in sources.items():
        t = time.perf_counter()
        src()
        first[name] = time.perf_counter() - t
    step_s, call_s = [], {name: [] for name in sources}
    for _ in range(a.steps):
        t = time.perf_counter()
        env.step(action)
        step_s.append(time.perf_counter() - t)
        for name, src in sources.items():
            t = time.perf_counter()
            src()
            call_s[name].append(time.perf_counter() - t)
    print(f"env step (eager, {a.num_envs} envs): median {statistics.median(step_s) * 1e3:.1f} ms")
    for name, src in sources.items():
        print(f"{name}: {src.dim} columns, first call {first[name]:.2f} s, then median "
              f"{statistics.median(call_s[name]) * 1e3:.1f} ms a step")


if __name__ == "__main__":
    main()
