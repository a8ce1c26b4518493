"""Time per episode of each planner and baseline started on a default env, as the
simulator-as-model guide starts them (one environment, one thread, the mean action of nothing:
the planners are deterministic).

    python benchmarks/bench_planners.py                 # all, on OffroadTraverse-v1's default
    python benchmarks/bench_planners.py --only mppi --steps 100

Each policy drives ``--episodes`` episodes of one env (the id's own time limit, or ``--steps``)
from seed 0; the figure is the wall time per episode and per control step, with how the
episodes ended. A planner's time grows with its samples and horizon (MPPI: K x H simulated
steps per control step; the rollout planner: candidates x the steps to its horizon every R
steps, to the episode's end with H=0)."""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym
import torch

import offroad_env  # noqa: F401  (registers the ids)
from train.planners import baseline

POLICIES = ("heuristic", "careful", "physics", "mppi:K=32,H=15", "mppi:K=16,H=15",
            "rollout:R=20,H=100", "rollout:R=20,H=100,library=straight")


def run(env_id: str, policy: str, episodes: int, steps: int | None) -> dict:
    kw = {} if steps is None else {"max_episode_steps": steps}
    env = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point", **kw)
    ends, n_steps = [], 0
    t0 = time.perf_counter()
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        act = baseline(policy, env, ep)
        while True:
            obs, _, term, trunc, info = env.step(act(obs))
            n_steps += 1
            if bool(term[0] | trunc[0]):
                ends.append(env.unwrapped.end_labels[int(info["end_reason"][0])])
                break
    dt = time.perf_counter() - t0
    env.close()
    return {"policy": policy, "s_per_episode": dt / episodes, "ms_per_step": 1e3 * dt / n_steps,
            "steps": n_steps / episodes, "ends": ends}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="offroad_env/OffroadTraverse-v1")
    p.add_argument("--only", nargs="+", default=None)
    p.add_argument("--episodes", type=int, default=2)
    p.add_argument("--steps", type=int, default=None)
    args = p.parse_args()
    torch.set_num_threads(1)
    print(f"# {platform.processor() or platform.machine()}, torch {torch.__version__}, 1 thread, "
          f"{args.env_id}, N = 1")
    print("| policy | s per episode | ms per step | steps per episode | ends |\n|---|---|---|---|---|")
    for pol in args.only or POLICIES:
        r = run(args.env_id, pol, args.episodes, args.steps)
        print(f"| `{r['policy']}` | {r['s_per_episode']:.1f} | {r['ms_per_step']:.1f} | "
              f"{r['steps']:.0f} | {', '.join(r['ends'])} |", flush=True)


if __name__ == "__main__":
    main()
