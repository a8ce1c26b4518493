"""Benchmark: the step with the default terms in two checkouts, and the cost of one added term.

    python benchmarks/bench_terms.py OLD_CHECKOUT NEW_CHECKOUT [--n 4096] [--rounds 3]
        [--seconds 4] [--threads 1] [--dynamics unicycle] [--eager-only]

Each round runs, each in a fresh process and in turn (so all see the same machine state):
the old checkout's vector env (``OffroadNav-v1``'s config with ``--dynamics``, N = ``--n``,
float32, random actions), the new checkout's, and the new checkout's with one declared reward
term (``RewardTerm`` of the mean |action|, weight -0.01: about as much work as a built-in
term). Env-steps/s eager, and compiled unless ``--eager-only`` (graphs cached per checkout and
variant, so only the first round compiles). Prints every round, then the medians and the
ratios new/old and with-term/new.
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
from offroad_env import OffroadVectorEnv, make_config
n, seconds, compiled = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
torch.set_num_threads(int(sys.argv[5]))
dynamics, with_term = sys.argv[6], sys.argv[7] == "1"
kw = {}
if with_term:
    from offroad_env.task.terms import RewardTerm
    import bench_term_fn
    kw["rewards"] = {"action_l1": RewardTerm(bench_term_fn.action_l1, weight=-0.01)}
cfg = make_config("nav", dynamics=dynamics, **kw)
env = OffroadVectorEnv(num_envs=n, config=cfg, compile=compiled)
env.reset(seed=0)
rng = np.random.default_rng(0)
acts = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for _ in range(8)]
for k in range(3):
    env.step(acts[k % 8])
blocks, k = [], 0
end = time.perf_counter() + seconds
while time.perf_counter() < end or len(blocks) < 3:
    t = time.perf_counter()
    for _ in range(5):
        env.step(acts[k % 8]); k += 1
    blocks.append(5 * n / (time.perf_counter() - t))
print(json.dumps({"steps_per_s": float(np.median(blocks))}))
"""

TERM_FN = '''import torch


def action_l1(ctx):
    return ctx.action.abs().mean(1)
'''


def run(checkout: str, args, compiled: bool, with_term: bool, fn_dir: Path) -> float:
    tag = f"{Path(checkout).resolve()}|{with_term}|{args.dynamics}"
    cache = Path(tempfile.gettempdir()) / ("bench_terms_" + hashlib.sha1(
        tag.encode()).hexdigest()[:10])
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_WAIT_POLICY="PASSIVE",
               PYTHONPATH=str(fn_dir))
    res = subprocess.run([sys.executable, "-c", CHILD, checkout, str(args.n), str(args.seconds),
                          "1" if compiled else "0", str(args.threads), args.dynamics,
                          "1" if with_term else "0"],
                         capture_output=True, text=True, env=env, cwd=checkout)
    if res.returncode != 0:
        raise SystemExit(f"{checkout} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])["steps_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dynamics", default="unicycle")
    ap.add_argument("--eager-only", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1 or args.n < 64:
        ap.error(f"--rounds must be >= 1 and --n >= 64, got {args.rounds}, {args.n}")
    fn_dir = Path(tempfile.mkdtemp(prefix="bench_terms_fn_"))
    (fn_dir / "bench_term_fn.py").write_text(TERM_FN)
    modes = ("eager",) if args.eager_only else ("eager", "compiled")
    got: dict = {}
    for rnd in range(args.rounds):
        for mode in modes:
            for side, path, term in (("old", args.old, False), ("new", args.new, False),
                                     ("new+term", args.new, True)):
                v = run(path, args, mode == "compiled", term, fn_dir)
                print(f"round {rnd} {mode:8s} {side:8s}: {v:,.0f} env-steps/s", flush=True)
                got.setdefault((mode, side), []).append(v)
    print(f"\nmedians over {args.rounds} round(s), N = {args.n}, {args.threads} thread(s), "
          f"{args.dynamics}:")
    for mode in modes:
        old, new, term = (statistics.median(got[(mode, s)]) for s in ("old", "new", "new+term"))
        print(f"  {mode:8s} old {old:10,.0f}  new {new:10,.0f}  new+term {term:10,.0f}  "
              f"new/old {new / old:.3f}  term/new {term / new:.3f}")


if __name__ == "__main__":
    main()
