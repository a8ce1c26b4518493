"""What a new user waits for: the wall time from ``python -m train.ppo --suite ...`` to its first
training iteration, on a cold machine (no level stack cached, no compiled kernel cached) or a
warm one.

Each case runs the command in a fresh process with its own empty cache folders
(``OFFROAD_ENV_CACHE`` for the level stacks, ``TORCHINDUCTOR_CACHE_DIR`` for the compiled
kernels) unless ``--warm``, stops it after its first iteration, and reports from the run's own
log: the start-up (the command to the first iteration's start: imports, the level stack, the
curriculum's rest check, the env's first reset) and the first iteration (its rollout and update;
with the env compiled first, the compile). Cases: ``compiled`` (the default: eager iterations
while another process compiles, ``--compile-after``), ``compiled-first`` (``--compile-after
0``: the compile before the first iteration) and ``eager`` (``--no-compile-env``).

    python benchmarks/bench_first_step.py                      # cold: the three cases
    python benchmarks/bench_first_step.py --warm --cases compiled
    python benchmarks/bench_first_step.py --cases compiled --first-only --extra "--teacher none"
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {"compiled": [], "compiled-first": ["--compile-after", "0"],
         "eager": ["--no-compile-env"]}


def first_iteration(args: list[str], cold: bool, timeout_s: float,
                    first_only: bool = False) -> dict:
    """Run ``train.ppo`` with ``args`` until its first iteration is logged (and, unless
    ``first_only``, its first compiled one); its timings [s]."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if cold:
            env["OFFROAD_ENV_CACHE"] = str(Path(tmp) / "levels")
            env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tmp) / "inductor")
        cmd = [sys.executable, "-m", "train.ppo", *args, "--out", str(Path(tmp) / "run"),
               "--print-every", "1", "--no-progress", "--no-tensorboard"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
                                stdout=subprocess.DEVNULL)
        out = {"command": " ".join(["python -m train.ppo", *args])}
        switched = False
        try:
            for line in proc.stderr:
                now = time.perf_counter() - t0
                if re.match(r"iter 1/\d+", line):
                    out["first_iteration_done_s"] = round(now, 1)
                    if (first_only or "--no-compile-env" in args
                            or "compile-after" in " ".join(args)):
                        break  # compiled from the first iteration, or never
                if "the compiled step from here on" in line:
                    switched = True
                    out["switch"] = line.strip().removeprefix("train.ppo: ")
                elif switched and line.startswith("iter "):
                    out["first_compiled_iteration_done_s"] = round(now, 1)
                    break
                if now > timeout_s:
                    out["timed_out_s"] = timeout_s
                    break
        finally:
            proc.kill()
            proc.wait()
        csv_path = Path(tmp) / "run" / "progress.csv"
        rows = csv_path.read_text().splitlines() if csv_path.exists() else []
        if len(rows) > 1:
            head, first = rows[0].split(","), rows[1].split(",")
            it = float(first[head.index("time_s")])
            out["first_iteration_s"] = round(it, 1)
            if "first_iteration_done_s" in out:
                out["startup_s"] = round(out["first_iteration_done_s"] - it, 1)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="offroad-bench-v1")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--warm", action="store_true", help="keep this machine's caches")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout-s", type=float, default=1200.0)
    ap.add_argument("--first-only", action="store_true",
                    help="stop each case at its first iteration (not its first compiled one)")
    ap.add_argument("--extra", default="",
                    help="more train.ppo flags for every case, one string: \"--teacher none\"")
    args = ap.parse_args(argv)
    print(f"| case | cache | start-up [s] | first iteration [s] | command to the first "
          f"iteration's end [s] | command to the first compiled iteration's end [s] |\n"
          f"|---|---|---|---|---|---|")
    for case in args.cases:
        run = ["--suite", args.suite, "--threads", str(args.threads), *CASES[case],
               *args.extra.split()]
        r = first_iteration(run, not args.warm, args.timeout_s, args.first_only)
        label = f"{case} {args.extra}".strip()
        print(f"| {label} | {'warm' if args.warm else 'cold'} | {r.get('startup_s', '-')} | "
              f"{r.get('first_iteration_s', '-')} | {r.get('first_iteration_done_s', '-')}"
              f"{' (timed out)' if 'timed_out_s' in r else ''} | "
              f"{r.get('first_compiled_iteration_done_s', '-')} |", flush=True)
        if "switch" in r:
            print(f"  ({case}: {r['switch']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
