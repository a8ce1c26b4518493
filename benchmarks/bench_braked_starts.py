"""Every task of a suite, braked (issue 44, items 6 and 7): do its starts rest, and does the brake
hold there?

Each task starts at its own start pose (the suite's JSON or its drawn tasks), the stuck rule is
off, and the brake is held (action 0) for ``--steps`` steps. Per family it counts the episodes
that ended (by reason), the starts the model's own rest check refuses at the reset (its
``converged`` or ``stable`` flag False: friction cannot hold the rest, or it tips), and the
bases that moved 1 cm or more, split by whether the start's ground is below the surface's
holding limit (hard ground: its tilt under atan(mu); soil: the rest check's holding criterion).

    python benchmarks/bench_braked_starts.py --suite offroad-bench-v1 [--steps 200] [--json F]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offroad_env import OffroadVectorEnv  # noqa: E402
from offroad_env.task.task import EndReason  # noqa: E402
from train.common.suite import load_suite, suite_config, suite_tasks  # noqa: E402


def run_group(spec, steps: int) -> dict:
    cfg = suite_config(spec)
    cfg = replace(cfg, task=replace(cfg.task, stuck_time=None))
    T = spec.num_tasks
    env = OffroadVectorEnv(num_envs=T, config=cfg, max_episode_steps=steps + 10)
    sim = env.unwrapped.sim
    tasks = suite_tasks(spec, env.unwrapped.terrain)
    lo = torch.as_tensor(tasks["map_index"])
    env.unwrapped.set_map_range(lo, torch.ones_like(lo))
    env.reset(seed=spec.seed, options={"start_pose": torch.as_tensor(tasks["start"],
                                                                        dtype=torch.float64),
                                       "goal": torch.as_tensor(tasks["goal"],
                                                               dtype=torch.float64)})
    gc = sim.state.contact
    rest_ok = (gc.converged & gc.stable).numpy()
    tilt = np.degrees(np.arccos(np.clip(gc.rotation[:, 2, 2].double().numpy(), -1, 1)))
    p0 = gc.base_position.clone()
    reason = np.zeros(T, dtype=np.int64)
    live = np.ones(T, dtype=bool)
    moved = np.zeros(T)
    with torch.inference_mode():
        for _ in range(steps):
            _, _, term, trunc, info = env.step(torch.zeros(T, 2))
            done = (term | trunc).numpy() & live
            reason[done] = info["end_reason"].numpy()[done]
            live &= ~done
            # how far each base moved while its episode ran
            now = (sim.state.contact.base_position - p0).norm(dim=1).numpy()
            moved = np.where(live, now, moved)
    env.close()
    return {"family": tasks["family"], "level": tasks["level"], "rest_ok": rest_ok,
            "tilt": tilt, "moved": moved, "reason": reason,
            "families": spec.families}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="offroad-bench-v1")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None, help="write the per-family counts here")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    spec = load_suite(args.suite)
    dp = suite_config(spec).dynamics_params
    mu = 0.8 if dp is None else dp.mu  # the RigidBodyParams default
    t0 = time.perf_counter()
    rows = []
    for g in spec.groups():
        r = run_group(g, args.steps)
        for fi, fam in enumerate(r["families"]):
            sel = r["family"] == fi
            ended = r["reason"][sel]
            holdable = sel & (r["tilt"] < math.degrees(math.atan(mu)))
            rows.append({
                "family": fam, "tasks": int(sel.sum()),
                "rest_refused": int((~r["rest_ok"][sel]).sum()),
                "ended": {EndReason(int(c)).name: int((ended == c).sum())
                          for c in np.unique(ended) if c != 0},
                "moved_1cm": int((r["moved"][sel] >= 0.01).sum()),
                "moved_1cm_holdable": int((r["moved"][holdable] >= 0.01).sum()),
                "max_moved": float(r["moved"][sel].max()),
                "max_start_tilt_deg": float(r["tilt"][sel].max())})
    print(f"{spec.name}: {args.steps} braked steps, {time.perf_counter() - t0:.0f} s")
    print("| family | tasks | rest refused | ended | moved >= 1 cm (holdable ground) | max drift "
          "[m] | max start tilt [deg] |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ended = ", ".join(f"{k.lower()} {v}" for k, v in r["ended"].items()) or "0"
        print(f"| {r['family']} | {r['tasks']} | {r['rest_refused']} | {ended} | "
              f"{r['moved_1cm']} ({r['moved_1cm_holdable']}) | "
              f"{r['max_moved']:.4f} | {r['max_start_tilt_deg']:.1f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
