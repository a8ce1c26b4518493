"""The teacher's cost per rollout step (``--teacher path``, :mod:`train.ppo.teacher`) on the
``--suite`` training env: the first labels (each map's traversability, the rows' first fields)
and the median of the next steps' labels, against the env's eager step, at the suite preset's
4096 envs; ``--teacher rollout``: the rollout teacher's (``--options`` its planner's).

    python benchmarks/bench_teacher.py --rows 256 --steps 40 --threads 2
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
    p.add_argument("--rows", type=int, nargs="+", default=[256])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--options", default="")
    p.add_argument("--teacher", default="path", choices=("path", "rollout"))
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    from train.common.agent import Agent, goal_column
    from train.common.checkpoint import obs_layout
    from train.ppo.config import PPOConfig
    from train.ppo.teacher import PathTeacher, RolloutTeacher
    from train.ppo.trainer import make_vec_env
    from train.common.envconfig import env_kwargs
    from wrappers import TerrainCurriculum

    cfg = PPOConfig.preset("suite", env={"suite": a.suite})
    kw = env_kwargs(cfg.env_id, cfg.env)
    env = TerrainCurriculum(make_vec_env(cfg.env_id, a.num_envs, **kw), 5)
    obs, _ = env.reset(seed=0)
    agent = Agent(obs.shape[1], 2, (8,), action_map="residual",
                  goal_col=goal_column(obs_layout(env)))
    act = lambda o: agent.act(o)  # noqa: E731
    step_s = []
    for _ in range(a.steps):
        t = time.perf_counter()
        obs, *_ = env.step(act(obs))
        step_s.append(time.perf_counter() - t)
    print(f"env step (eager, {a.num_envs} envs): median {statistics.median(step_s) * 1e3:.1f} ms")
    for rows in a.rows:
        teacher = (PathTeacher if a.teacher == "path" else RolloutTeacher)(env, agent, rows,
                                                                             a.options)
        t = time.perf_counter()
        teacher.labels(obs)
        first = time.perf_counter() - t
        lab_s = []
        for _ in range(a.steps):
            obs, *_ = env.step(act(obs))
            t = time.perf_counter()
            teacher.labels(obs)
            lab_s.append(time.perf_counter() - t)
        print(f"teacher, {rows} rows: first labels {first:.1f} s; then median "
              f"{statistics.median(lab_s) * 1e3:.1f} ms a step (max {max(lab_s) * 1e3:.0f}), "
              + (f"{teacher.policy.num_fields} fields kept" if a.teacher == "path" else ""))


if __name__ == "__main__":
    main()
