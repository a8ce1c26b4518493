"""Benchmark: the physical model's step and masked reset in two checkouts, side by side.

    python benchmarks/bench_rigid_heads.py OLD_CHECKOUT NEW_CHECKOUT [--n 4096] [--rounds 3]
        [--seconds 4] [--threads 1] [--eager-only]

Each round runs, for each checkout in turn and each in a fresh process (so both see the same
machine state), the vector env with ``dynamics="rigid_body"`` at N = ``--n`` on the default
40 x 40 m Perlin maps (0.1 m grid), float32, random actions: env-steps/s of the step (eager,
and compiled unless ``--eager-only``; the compiled graphs are cached per checkout in
``TORCHINDUCTOR_CACHE_DIR``-style folders under the system's temp dir, so only the first round
compiles), and the time of a masked reset of 1 and of 64 rows. Prints every round, then each
figure's median over the rounds and the new/old ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time, numpy as np, torch
sys.path.insert(0, sys.argv[1])
from offroad_env import OffroadVectorEnv
n, seconds, compiled = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
torch.set_num_threads(int(sys.argv[5]))
torch._dynamo.config.recompile_limit = 64
env = OffroadVectorEnv(num_envs=n, dynamics="rigid_body", compile=compiled)
env.reset(seed=0)
rng = np.random.default_rng(0)
acts = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for _ in range(8)]
t0 = time.perf_counter()
for k in range(3):
    env.step(acts[k % 8])
warm = time.perf_counter() - t0
blocks = []
end = time.perf_counter() + seconds
k = 0
while time.perf_counter() < end or len(blocks) < 3:
    t = time.perf_counter()
    for _ in range(5):
        env.step(acts[k % 8]); k += 1
    blocks.append(5 * n / (time.perf_counter() - t))
sim = env.sim
out = {"steps_per_s": float(np.median(blocks)), "first_steps_s": warm}
for rows in (1, 64):
    times = []
    for rep in range(7):
        mask = torch.zeros(n, dtype=torch.bool)
        mask[rep * rows:(rep + 1) * rows] = True
        t = time.perf_counter()
        sim.reset(mask)
        times.append(time.perf_counter() - t)
    out[f"reset_{rows}_ms"] = 1e3 * float(np.median(times))
print(json.dumps(out))
"""


def run(checkout: str, args, compiled: bool) -> dict:
    cache = Path(tempfile.gettempdir()) / ("bench_heads_" + hashlib.sha1(
        str(Path(checkout).resolve()).encode()).hexdigest()[:10])
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_WAIT_POLICY="PASSIVE")
    res = subprocess.run([sys.executable, "-c", CHILD, checkout, str(args.n), str(args.seconds),
                          "1" if compiled else "0", str(args.threads)],
                         capture_output=True, text=True, env=env, cwd=checkout)
    if res.returncode != 0:
        raise SystemExit(f"{checkout} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--eager-only", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1 or args.n < 64:
        ap.error(f"--rounds must be >= 1 and --n >= 64, got {args.rounds}, {args.n}")
    modes = (False,) if args.eager_only else (False, True)
    got = {}
    for rnd in range(args.rounds):
        for compiled in modes:
            for side, path in (("old", args.old), ("new", args.new)):
                r = run(path, args, compiled)
                mode = "compiled" if compiled else "eager"
                print(f"round {rnd} {mode:8s} {side}: " + ", ".join(
                    f"{k} {v:,.1f}" for k, v in r.items()), flush=True)
                for k, v in r.items():
                    got.setdefault((mode, k, side), []).append(v)
    print(f"\nmedians over {args.rounds} round(s), N = {args.n}, {args.threads} thread(s):")
    for mode in ("eager", "compiled")[:len(modes)]:
        for key in ("steps_per_s", "reset_1_ms", "reset_64_ms", "first_steps_s"):
            old = statistics.median(got[(mode, key, "old")])
            new = statistics.median(got[(mode, key, "new")])
            print(f"  {mode:8s} {key:14s} old {old:12,.1f}  new {new:12,.1f}  new/old "
                  f"{new / old:.2f}")


if __name__ == "__main__":
    main()
