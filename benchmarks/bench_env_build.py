"""Benchmark: building the env that ``train.ppo --suite`` trains on, with the level-stack cache
(``terrain/cache.py``) cold and warm (issue 46: a warm second run should step soon).

    python benchmarks/bench_env_build.py [--suite offroad-bench-v1] [--num-envs 4096]
        [--repeats 2] [--threads 2]

Each build runs in a fresh process (what a second training run meets), in turn: "cold" with an
empty cache folder, "warm" with the folder the cold build filled. It times the maps (the level
stack), the env's construction around them, and the first reset (every row's rest), and checks
that the warm env's maps equal the cold one's bit for bit. Prints medians [s].
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import hashlib, json, sys, time
sys.path.insert(0, {root!r})
import torch
torch.set_num_threads({threads})
t0 = time.perf_counter()
from offroad_env import OffroadVectorEnv
import offroad_env.core.frames as frames
from train.common.envconfig import env_kwargs
spent = []
stack = frames._level_stack
def timed(*args):
    s = time.perf_counter()
    out = stack(*args)
    spent.append(time.perf_counter() - s)
    return out
frames._level_stack = timed
kw = env_kwargs("offroad_env/OffroadTraverse-v1", {{"suite": {suite!r}}})
t1 = time.perf_counter()
env = OffroadVectorEnv(num_envs={n}, **kw)
t3 = time.perf_counter()
env.reset(seed=0)
t4 = time.perf_counter()
maps = env.sim.world_maps
digest = hashlib.sha256(maps.heights.nan_to_num(-999.0).numpy().tobytes()).hexdigest()[:16]
print(json.dumps({{"import": t1 - t0, "maps": sum(spent), "env": t3 - t1 - sum(spent),
                  "reset": t4 - t3, "total": t4 - t0, "digest": digest}}))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v1")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    code = CHILD.format(root=str(ROOT), threads=a.threads, suite=a.suite, n=a.num_envs)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {a.threads} threads, suite "
          f"{a.suite}, N = {a.num_envs}")
    runs = {"cold": [], "warm": []}
    for _ in range(a.repeats):
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "OFFROAD_ENV_CACHE": folder}
            for kind in ("cold", "warm"):
                out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                     capture_output=True, text=True).stdout
                runs[kind].append(json.loads(out.strip().splitlines()[-1]))
    digests = {r["digest"] for kind in runs for r in runs[kind]}
    print("| build | maps [s] | env around them [s] | first reset [s] | import [s] | total [s] |")
    print("|---|---|---|---|---|---|")
    for kind, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("maps", "env", "reset",
                                                                  "import", "total")}
        print(f"| {kind} | {med['maps']:.1f} | {med['env']:.1f} | {med['reset']:.1f} | "
              f"{med['import']:.1f} | {med['total']:.1f} |")
    print(f"maps bit for bit alike in every build: {len(digests) == 1}")


if __name__ == "__main__":
    main()
