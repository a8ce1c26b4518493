"""MPPI in real time: the wall time per simulated second of N Husky robots whose world runs the
physical model, planning included, and the latency of a plan, by what the samples are rolled on
(the physical model itself, ``model=env``, or its kinematic twin, ``model=twin``) and whether
the step is compiled.

    python benchmarks/bench_mppi_realtime.py [--n 1 64] [--model env twin]
        [--modes eager compiled] [--seconds 10] [--policy mppi] [--terrain traverse]

Each case runs in a fresh process: ``OffroadVectorEnv(num_envs=n, dynamics="rigid_body")`` on
the traverse task's default terrain (or any ``make_config`` task), ``--policy`` with
``model=...`` added, driven for ``--seconds`` of simulated time after a warm-up of 2 s (the
compile, the first cost-to-go fields and the look-ahead's simulators are built there; fields of
later episodes' goals are counted). The real-time factor is simulated seconds per wall second
(>= 1: real time); the plan latency is the median wall time of a call that plans (every
``replan``-th), the world's step left out; the step is the world's own step time. Torch's
threads: the default (2 here), one thread for small batches (``batch_threads``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASE = r"""
import json, statistics, sys, time, torch
sys.path.insert(0, {root!r})
from offroad_env import OffroadVectorEnv, make_config
from train.planners.baselines import baseline
n, model, compiled, seconds, policy, task = {n}, {model!r}, {compiled}, {seconds}, {policy!r}, {task!r}
cfg = make_config(task, dynamics="rigid_body")
env = OffroadVectorEnv(num_envs=n, config=cfg, compile=compiled, max_episode_steps=600)
obs, _ = env.reset(seed=0)
sep = "," if ":" in policy else ":"
act = baseline(policy + sep + "model=" + model, env, 0)
dt = cfg.dt * cfg.action_repeat
warm, steps = int(round(2.0 / dt)), int(round(seconds / dt))
plan_t, step_t = [], []
for i in range(warm + steps):
    t0 = time.perf_counter()
    planning = act._calls % act.cfg.replan == 0
    u = act(obs)
    t1 = time.perf_counter()
    obs, *_ = env.step(u)
    t2 = time.perf_counter()
    if i == warm:
        start = t0
    if i >= warm:
        step_t.append(t2 - t1)
        if planning:
            plan_t.append(t1 - t0)
wall = time.perf_counter() - start
print(json.dumps({{"rtf": steps * dt / wall, "plan_ms": 1e3 * statistics.median(plan_t),
                  "step_ms": 1e3 * statistics.median(step_t), "horizon": act.horizon,
                  "samples": act.cfg.samples, "replan": act.cfg.replan,
                  "threads": torch.get_num_threads()}}))
"""


def run_case(n, model, compiled, seconds, policy, task) -> dict:
    code = CASE.format(root=str(ROOT), n=n, model=model, compiled=compiled, seconds=seconds,
                       policy=policy, task=task)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, nargs="+", default=[1, 64])
    p.add_argument("--model", nargs="+", default=["twin", "env"], choices=["env", "twin"])
    p.add_argument("--modes", nargs="+", default=["eager", "compiled"],
                   choices=["eager", "compiled"])
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--policy", default="mppi")
    p.add_argument("--task", default="traverse")
    a = p.parse_args(argv)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{a.policy} on the physical model ({a.task}), {a.seconds:g} s simulated after 2 s")
    print("| N | mode | planning model | real-time factor | plan latency [ms] | world step [ms] |")
    print("|---|---|---|---|---|---|")
    for n in a.n:
        for mode in a.modes:
            for model in a.model:
                r = run_case(n, model, mode == "compiled", a.seconds, a.policy, a.task)
                print(f"| {n} | {mode} | {model} | {r['rtf']:.2f} | {r['plan_ms']:.0f} | "
                      f"{r['step_ms']:.1f} |", flush=True)
    print(f"(K = {r['samples']}, H = {r['horizon']} steps, a plan every {r['replan']} steps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
