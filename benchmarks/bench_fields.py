"""Benchmark: cost-to-go fields, N goals at once (issue 68).

On the map planner's grids of OffroadBench v2 (a 24 x 24 m boulders map: 241 x 241 samples,
planned at 121 x 121) and of Verti-Bench (a 20.5 m world: 257 x 257 samples, planned at 129 x
129), the fields of N random goals on one map's traversability
(:func:`train.planners.path.traversability`), by

* ``torch``: :func:`terrain.costs.cost_to_go` ``backend="torch"`` (all N at once, relaxed in
  torch);
* ``scipy``: :func:`terrain.costs.cost_to_go` ``backend="scipy"`` (SciPy's
  ``scipy.sparse.csgraph.dijkstra`` on the same 8-connected graph, the N goals as its
  ``indices``; the graph's build included), when SciPy is installed;
* ``skimage``: scikit-image's ``MCP_Geometric`` (one goal per call; its edge cost is the same,
  length x the mean of the two samples' costs), when scikit-image is installed.

Each is checked against the first column timed (the same finite cells; the largest relative
difference). Median wall time of ``--repeats`` calls for N = 1, one call past it; fields are made
in chunks of ``--chunk`` goals (the torch relaxation holds ~20 float64 copies of its fields:
4096 full fields at once do not fit in this machine's memory); the torch relaxation is timed
up to ``--torch-max`` goals.

    python benchmarks/bench_fields.py [--n 1 64 4096] [--repeats 3] [--threads 1] [--torch-max 64]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._timing import median_time  # noqa: E402
from offroad_env.physics.vehicle import husky  # noqa: E402
from terrain.costs import cost_to_go  # noqa: E402
from train.planners.path import PathConfig, traversability  # noqa: E402


def _grids():
    from terrain import verti_bench
    from train.common.suite import load_suite, suite_env
    spec = load_suite("offroad-bench-v2").select(families=["boulders"], levels=[5], pairs=[0])
    env = suite_env(spec, 1)
    v2 = env.unwrapped.terrain
    v2 = v2[0] if len(v2) > 1 else v2
    env.close()
    out = {}
    for name, hm in (("v2 (boulders, level 5)", v2), ("verti-bench world 1",
                                                     verti_bench.world_map(1))):
        cost, stride = traversability(hm, husky(), 0.8, 0.02, PathConfig())
        rx, ry = hm.resolution
        out[name] = (cost[0], (stride * rx, stride * ry), tuple(hm.heights.shape[-2:]))
    return out


def _goals(cost, n, seed=0):
    free = torch.nonzero(torch.isfinite(cost))
    g = torch.Generator().manual_seed(seed)
    return free[torch.randint(len(free), (n,), generator=g)]


def _fields(cost, goals, res, chunk, backend):
    return torch.cat([cost_to_go(cost[None], goals[i:i + chunk], None, res, backend=backend)
                      for i in range(0, len(goals), chunk)])


def _skimage(cost, goals, res):
    from skimage.graph import MCP_Geometric
    c = cost.numpy()
    # MCP_Geometric's lengths are in samples; anisotropic spacing via ``sampling``
    m = MCP_Geometric(c, fully_connected=True, sampling=(res[1], res[0]))
    out = []
    for g in goals.tolist():
        f, _ = m.find_costs([tuple(g)])
        out.append(f)
        m = MCP_Geometric(c, fully_connected=True, sampling=(res[1], res[0]))
    return np.stack(out)


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return math.inf
    m = fa & (b > 0)
    return float(np.max(np.abs(a[m] - b[m]) / b[m])) if m.any() else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1, 64, 4096])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--torch-max", type=int, default=64,
                    help="the most goals the torch relaxation is timed on (slow on a CPU)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    have = {}
    for lib in ("skimage", "scipy"):
        try:
            __import__(lib)
            have[lib] = True
        except ImportError:
            have[lib] = False
            print(f"({lib} not installed: its column is left out)")
    print(f"torch {torch.__version__}, {args.threads} thread(s)")
    print("| grid | N | torch [s] | scipy [s] | skimage MCP_Geometric [s] | "
          "largest rel. diff. vs the first |")
    print("|---|---|---|---|---|---|")
    for name, (cost, res, shape) in _grids().items():
        for n in args.n:
            goals = _goals(cost, n)
            reps = args.repeats if n == 1 else 1
            ref, cells, diffs = None, [], []
            for lib, fn in (("torch", lambda: _fields(cost, goals, res, args.chunk, "torch")),
                            ("scipy", lambda: _fields(cost, goals, res, args.chunk, "scipy")),
                            ("skimage", lambda: _skimage(cost, goals, res))):
                if not have.get(lib, True) or (lib == "torch" and n > args.torch_max):
                    cells.append("-")
                    continue
                t0 = time.perf_counter()
                got = fn()
                t = median_time(fn, reps, 0) if reps > 1 else time.perf_counter() - t0
                cells.append(f"{t:.3g}")
                if ref is None:
                    ref = torch.as_tensor(np.asarray(got))
                else:
                    diffs.append(f"{lib} {_rel(got, ref.numpy()):.1e}")
            print(f"| {name}: {shape[0]} x {shape[1]} samples, planned at "
                  f"{cost.shape[0]} x {cost.shape[1]} | {n} | " + " | ".join(cells)
                  + f" | {', '.join(diffs) or '-'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
