"""Where a PPO training iteration spends its time (issue 28, step 1): the env step, the policy's
forward passes in the rollout, GAE, the update's forward and backward passes, the optimizer
(with the gradient clip), the rest of the rollout and the update (Python, buffers, statistics,
host syncs) and the iteration's bookkeeping (episode window, log, checkpoint).

    python benchmarks/profile_train.py [--num-envs 256 4096] [--iterations 6] [--threads 1]
        [--suite offroad-bench-v1] [--num-steps 16] [--compile]

``--suite``: train on an OffroadBench suite's tasks (``train.ppo --suite``: the traverse env
on the suite's training grid and model) instead of the default env.

It runs :func:`train.ppo.train` itself, with timers wrapped around those calls (no change to the
loop), and reports each share of the wall time over the iterations after the first (its
start-up left out), per iteration and as env-steps/s. Timers call no synchronisation: on a CPU
the times are the calls' own.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import tempfile
import time

import torch

from train.common import logs
from train.ppo import algorithm
from train.ppo import trainer as ppo
from train.common.agent import Agent

T_ACC = collections.defaultdict(float)
PHASE = ["other"]


def _timed(fn, key):
    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            T_ACC[key() if callable(key) else key] += time.perf_counter() - t0
    return wrapper


@contextlib.contextmanager
def instrumented():
    """Wrap the calls whose time is reported; restore them afterwards."""
    saved = []

    def patch(obj, name, key):
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, _timed(getattr(obj, name), key))

    patch(Agent, "distribution", lambda: f"policy forward ({PHASE[0]})")
    patch(Agent, "value", lambda: f"policy forward ({PHASE[0]})")
    patch(algorithm, "compute_gae", "GAE")
    patch(torch.Tensor, "backward", "update: backward")
    patch(torch.nn.utils, "clip_grad_norm_", "update: optimizer + grad clip")
    patch(torch.optim.Adam, "step", "update: optimizer + grad clip")
    patch(logs.RunLog, "write", "bookkeeping: log write")

    def phase(name, fn):
        def wrapper(*a, **kw):
            PHASE[0] = name
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                T_ACC[f"{name} total"] += time.perf_counter() - t0
                PHASE[0] = "other"
        return wrapper

    for name, fn in (("rollout", ppo.rollout), ("update", ppo.update)):
        saved.append((ppo, name, fn))
        setattr(ppo, name, phase(name, fn))
    orig_make = ppo.make_vec_env

    def make(*a, **kw):
        env = orig_make(*a, **kw)
        base = env.unwrapped
        base.step = _timed(base.step, "env step")
        return env
    saved.append((ppo, "make_vec_env", orig_make))
    ppo.make_vec_env = make
    try:
        yield
    finally:
        for obj, name, fn in reversed(saved):
            setattr(obj, name, fn)


def profile(num_envs: int, num_steps: int, iterations: int, threads: int = 1,
            **overrides) -> dict:
    batch = num_envs * num_steps
    cfg = ppo.PPOConfig(num_envs=num_envs, num_steps=num_steps, total_steps=batch * iterations,
                        out=tempfile.mkdtemp(), progress=False, print_every=0,
                        tensorboard=False, threads=threads, **overrides)
    marks = []
    orig_write = logs.RunLog.write

    def write(self, row):  # iteration boundaries: snapshot the accumulators
        orig_write(self, row)
        marks.append((time.perf_counter(), dict(T_ACC)))
    logs.RunLog.write = write
    try:
        T_ACC.clear()
        with instrumented():
            ppo.train(cfg)
    finally:
        logs.RunLog.write = orig_write
    (t1, a1), (t2, a2) = marks[0], marks[-1]
    wall = t2 - t1
    share = {k: a2.get(k, 0.0) - a1.get(k, 0.0) for k in a2}
    n = len(marks) - 1
    out = {"env step": share.get("env step", 0.0),
           "policy forward (rollout)": share.get("policy forward (rollout)", 0.0),
           "rollout: the rest (Python, buffers, stats)": 0.0,
           "GAE": share.get("GAE", 0.0),
           "update: forward": share.get("policy forward (update)", 0.0),
           "update: backward": share.get("update: backward", 0.0),
           "update: optimizer + grad clip": share.get("update: optimizer + grad clip", 0.0),
           "update: the rest (losses, minibatches, host syncs)": 0.0,
           "bookkeeping (window, log, checkpoint)": 0.0}
    out["rollout: the rest (Python, buffers, stats)"] = (
        share.get("rollout total", 0.0) - out["env step"] - out["policy forward (rollout)"])
    out["update: the rest (losses, minibatches, host syncs)"] = (
        share.get("update total", 0.0) - out["GAE"] - out["update: forward"]
        - out["update: backward"] - out["update: optimizer + grad clip"])
    out["bookkeeping (window, log, checkpoint)"] = (
        wall - share.get("rollout total", 0.0) - share.get("update total", 0.0))
    return {"wall": wall, "iterations": n, "batch": batch, "parts": out}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--num-envs", type=int, nargs="+", default=[256, 4096])
    p.add_argument("--num-steps", type=int, default=64)
    p.add_argument("--iterations", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--suite", default=None, help="an OffroadBench suite to train on")
    p.add_argument("--compile", action="store_true",
                   help="compile the env's step and the agent's passes (their forward passes "
                        "then count in 'the rest' of the rollout and the update)")
    a = p.parse_args()
    over = dict(compile_env=True, compile_policy=True) if a.compile else {}
    if a.suite:
        over["env"] = {"suite": a.suite}
    torch.set_num_threads(a.threads)
    for n in a.num_envs:
        r = profile(n, a.num_steps, a.iterations, a.threads, **over)
        per = r["wall"] / r["iterations"]
        print(f"\nN = {n}, T = {a.num_steps} ({r['batch']:,} env steps an iteration), "
              f"{a.threads} thread(s): {per * 1e3:.0f} ms an iteration, "
              f"{r['batch'] / per:,.0f} env-steps/s of training")
        print("| part | ms / iteration | share |")
        print("|---|---|---|")
        for k, v in r["parts"].items():
            print(f"| {k} | {v / r['iterations'] * 1e3:.1f} | {100 * v / r['wall']:.1f} % |")


if __name__ == "__main__":
    main()
