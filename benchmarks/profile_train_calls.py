"""Where a PPO run's env step spends its time, by call: ``train.ppo`` itself under cProfile,
then the cumulative seconds of the env's main calls (the step, the physics, observations,
the task, the masked resets, the reset's rest and the spawn redraws).

    python benchmarks/profile_train_calls.py [--suite offroad-bench-v1] [--num-envs 4096]
        [--num-steps 16] [--iterations 4] [--threads 2]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from train.ppo import trainer as ppo  # noqa: E402

CALLS = ("train", "step", "advance", "reset", "_start_episodes", "observe", "settle", "rest",
         "start_at_rest", "redraw_until_rest", "_place_rows", "rigid_body_step", "_contact",
         "update")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="offroad-bench-v1")
    ap.add_argument("--num-envs", type=int, default=4096)
    ap.add_argument("--num-steps", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = ppo.PPOConfig(num_envs=a.num_envs, num_steps=a.num_steps,
                        total_steps=a.num_envs * a.num_steps * a.iterations,
                        out=tempfile.mkdtemp(), progress=False, print_every=0,
                        tensorboard=False, threads=a.threads, env={"suite": a.suite})
    pr = cProfile.Profile()
    pr.enable()
    ppo.train(cfg)
    pr.disable()
    rows = [(ct, nc, f, name) for (f, _, name), (_, nc, _, ct, _) in pstats.Stats(pr).stats.items()
            if name in CALLS and ("offroad_env" in f or "train" in f)]
    for ct, nc, f, name in sorted(rows, reverse=True):
        print(f"{ct:8.2f} s {nc:6d} calls  {Path(f).parent.name}/{Path(f).name}:{name}")


if __name__ == "__main__":
    main()
