"""Soak: long random-action runs of every dynamics x ground combination, checking that nothing
goes wrong silently.

    python benchmarks/bench_soak.py [--envs 4096] [--steps 10000000] [--task nav_rough]

For each combination: N environments (NEXT_STEP autoreset, 500-step episodes) driven by
uniform random actions, redrawn every 20 steps, for at least ``--steps`` env-steps. Reports
non-finite observations and rewards (0 expected), the resident memory at the start and the end,
the episode ends by reason, the episodes that ended on their first step (0 expected: spawns are
stable rests with the goal at goal_distance) and the share of steps whose rigid placement was
not settled. Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offroad_env import EndReason, OffroadVectorEnv  # noqa: E402


def rss_mb() -> float:
    """Current resident set size [MB] (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def soak(dynamics: str, ground: str, n: int, steps: int, task: str) -> dict:
    env = OffroadVectorEnv(num_envs=n, task=task, dynamics=dynamics, ground=ground,
                           max_episode_steps=500)
    obs, _ = env.reset(seed=0)
    g = torch.Generator().manual_seed(0)
    rss0 = rss_mb()
    ends = torch.zeros(len(EndReason), dtype=torch.int64)
    nonfinite = first_step = unsettled = 0
    k = 0
    t0 = time.perf_counter()
    with torch.inference_mode():
        while k * n < steps:
            if k % 20 == 0:
                a = torch.rand(n, 2, generator=g) * 2 - 1
            obs, r, term, trunc, info = env.step(a)
            done = info["_end_reason"]
            nonfinite += int((~torch.isfinite(obs)).any(1).sum() + (~torch.isfinite(r)).sum())
            ends += torch.bincount(info["end_reason"][done], minlength=len(EndReason))
            first_step += int((term & (env.state_view().steps == 1)).sum())
            unsettled += int((~env.sim.state.contact.settled).sum())
            k += 1
    dt = time.perf_counter() - t0
    return {"combo": f"{dynamics} + {ground}", "env_steps": k * n, "rate": k * n / dt,
            "nonfinite": nonfinite, "rss0": rss0, "rss1": rss_mb(),
            "ends": {r.label: int(ends[r]) for r in EndReason if r != EndReason.NONE},
            "first_step": first_step, "unsettled": unsettled / (k * n)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=10_000_000)
    p.add_argument("--task", default="nav_rough")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}; "
          f"{args.task}, N = {args.envs}, >= {args.steps:,} env-steps each, one thread")
    print("| dynamics + ground | env-steps | env-steps/s | non-finite | RSS start -> end [MB] "
          "| ends: tip_over / off_map / hole / goal / time_limit | first-step ends "
          "| unsettled steps |")
    print("|---|---|---|---|---|---|---|---|")
    for dynamics in ("unicycle", "ackermann", "skid_steer"):
        for ground in ("four_wheel", "rigid_contact"):
            r = soak(dynamics, ground, args.envs, args.steps, args.task)
            e = r["ends"]
            print(f"| {r['combo']} | {r['env_steps']:,} | {r['rate']:,.0f} | {r['nonfinite']} "
                  f"| {r['rss0']:.0f} -> {r['rss1']:.0f} | {e['tip_over']} / {e['off_map']} / "
                  f"{e['hole']} / {e['goal_reached']} / {e['time_limit']} | {r['first_step']} "
                  f"| {100 * r['unsettled']:.2f} % |", flush=True)


if __name__ == "__main__":
    main()
