"""OffroadBench: a fixed evaluation suite on terrain that tips careless driving.

    python -m train.bench --policy heuristic                 # offroad-bench-v0, a baseline
    python -m train.bench --suite offroad-bench-v1 --policy heuristic physics
    python -m train.bench --policy runs/trav/checkpoint.pt    # a trained PPO policy
    python -m train.evaluate --suite offroad-bench-v0 --policy careful   # the same
    python -m train.bench --suite offroad-bench-v2 --policy heuristic --families steps --levels 9

A suite is a versioned spec kept in the repo (``train/suites/<name>.json``, :mod:`train.common.suite`):
families x levels x worlds x start/goal pairs of the traverse task (``OffroadTraverse-v1``'s
terrain families, scaled for the spec's vehicle), every world generated from its seed and every
pair drawn from ``pair_seed``, so the tasks are the same on every machine. ``offroad-bench-v0``
has 5 families x 10 levels x 2 worlds x 10 pairs = 1000 tasks with a 30 s limit on the kinematic
Husky; ``offroad-bench-v1`` 7 families (with soft soil and windows of a real DEM) x 10 x 2 x 10
= 1400 on the physical model, with the stuck end. All tasks of one map grid run batched in one
vector env (task ``k`` is sub-env ``k``, on its own map, from its start facing its goal); each
counts its first episode. A slice (``--families``, ``--levels``, ``--worlds``, ``--pairs``,
``--tasks``: :meth:`~train.common.suite.SuiteSpec.select`) runs part of a suite, each task on its
own map.

The metrics per family and level (rates with their Wilson intervals, times, attitudes,
margins, energy) are :mod:`train.bench.run`'s.

Policies: ``random``, ``heuristic`` (straight at the goal), ``careful`` (slope-aware: steers
along the contour and slows where the ground ahead is steep or the margin is low), ``physics``
(margin- and friction-aware, :func:`~train.planners.baselines.physics_policy`), or a ``train.ppo``
checkpoint. The same inputs give the same JSON, bit for bit, on one machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import torch

from offroad_env.core.devices import configure_threads

from train.bench.report import plot_levels, table_markdown
from train.bench.run import run_suite
from train.common.distributed import Dist
from train.common.logs import notice_missing_extras
from train.common.suite import load_suite
from train.planners.baselines import BASELINES, is_policy_name

__all__ = ["POLICIES", "build_parser", "main"]

#: the baselines' names, as --policy takes them
POLICIES = tuple(BASELINES)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train.bench", description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v0", help="a suite name or JSON spec")
    p.add_argument("--policy", nargs="+", required=True, metavar="POLICY",
                   help=f"one or more of {POLICIES} or checkpoint paths; LABEL=PATH names a "
                        "checkpoint in the table and plot (default: its folder's name)")
    p.add_argument("--out", default=None, help="output folder (default runs/bench/<suite>)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (default 0: the physical cores, capped at the free ones)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (by default one per policy on stderr, with its ETA)")
    p.add_argument("--chunk-tasks", type=int, default=None, metavar="N",
                   help="run the tasks in fixed chunks of N per vector env (default: the "
                        "suite's chunk_tasks; none: a grid group in one env). A chunked run "
                        "uses the suite's chunk_threads per process, and under torchrun the "
                        "ranks share the chunks; rank 0 writes the same files as one process")
    sl = p.add_argument_group("a slice of the suite (SuiteSpec.select): each task on its own map")
    sl.add_argument("--families", nargs="+", default=None, metavar="NAME")
    sl.add_argument("--levels", nargs="+", type=int, default=None, metavar="L")
    sl.add_argument("--worlds", nargs="+", type=_int_or_name, default=None, metavar="W",
                    help="world indices (a suite of maps: its maps' names or indices)")
    sl.add_argument("--pairs", nargs="+", type=int, default=None, metavar="P")
    sl.add_argument("--tasks", nargs="+", type=int, default=None, metavar="I",
                    help="task indices in the suite's order (bench.json's per_task order)")
    p.add_argument("--sampled", action="store_true",
                   help="checkpoints act with actions sampled from their Gaussian, as in "
                        "training (from a generator seeded by the suite's seed; default: the "
                        "mean action); their default labels say '(sampled)'")
    return p


def _int_or_name(text: str):
    """A world's index, or a map's name (a suite of maps)."""
    try:
        return int(text)
    except ValueError:
        return text


def policy_builder(name: str, device, sampled: bool = False, seed: int = 0):
    """``(policy, identity)``: a baseline's name, or a checkpoint's policy builder; the
    identity names what it computes (a checkpoint by its bytes) for stored chunks."""
    if is_policy_name(name):
        return name, name
    from train.common.checkpoint import load_checkpoint
    from train.common.inputs import policy_of

    def make(env):  # the actor's own inputs, if any, computed from the suite's env
        agent, _ = load_checkpoint(name, env, device)  # the layout must be the suite env's
        agent.eval()
        if not sampled:
            return policy_of(agent, env)
        gen = torch.Generator(device).manual_seed(seed)  # each grid group from the start
        return policy_of(agent, env, deterministic=False, generator=gen)
    if not Path(name).is_file():
        raise ValueError(f"policy {name!r} is neither one of {POLICIES} nor a checkpoint file")
    digest = hashlib.sha256(Path(name).read_bytes()).hexdigest()[:24]
    return make, f"checkpoint {digest} sampled={sampled} seed={seed}"


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:80]


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = load_suite(args.suite)
        if any(v is not None for v in (args.families, args.levels, args.worlds, args.pairs,
                                       args.tasks)):
            spec = spec.select(families=args.families, levels=args.levels, worlds=args.worlds,
                               pairs=args.pairs, tasks=args.tasks)
        out = Path(args.out) if args.out else Path("runs") / "bench" / spec.name
        files = ["bench.json", "bench.md"] + (["bench_levels.png"] if spec.maps is None
                                              else [])
        if not args.force:
            for f in files:
                if (out / f).exists():
                    raise FileExistsError(f"{out / f} exists; pass --force to overwrite it")
        pols = {}
        for p in args.policy:
            label, sep, path = p.rpartition("=")
            if not sep or is_policy_name(p) or Path(p).is_file():
                label, path = (p if is_policy_name(p) else Path(p).parent.name
                               + (" (sampled)" if args.sampled else "")), p
            if label in pols:
                raise ValueError(f"two policies are labelled {label!r}; name them LABEL=PATH")
            pols[label] = policy_builder(path, args.device, args.sampled, spec.seed)
        if args.chunk_tasks is not None:
            spec = replace(spec, chunk_tasks=args.chunk_tasks)
        ranks = Dist(args.device)
        if ranks.active and spec.chunk_tasks is None:
            raise ValueError(f"suite {spec.name} has no chunk_tasks: pass --chunk-tasks N to "
                             f"split it across the {ranks.world} torchrun ranks")
        notice_missing_extras()
        if spec.chunk_tasks is None:
            configure_threads(args.threads)
        elif args.threads not in (0, spec.chunk_threads):
            raise ValueError(f"--threads {args.threads}: a chunked run uses the suite's "
                             f"chunk_threads ({spec.chunk_threads}) in every process")
        else:
            torch.set_num_threads(spec.chunk_threads)
        # each chunk's outcomes are kept as it ends, so a run that stops goes on from there
        results = {name: run_suite(spec, pol, args.device, progress=not args.no_progress,
                                   label=name, ranks=ranks if ranks.active else None,
                                   keep=out / "chunks" / _slug(name), identity=ident)
                   for name, (pol, ident) in pols.items()}
        if not ranks.main:
            ranks.close()
            return 0
        out.mkdir(parents=True, exist_ok=True)
    except (ValueError, FileExistsError, OSError) as exc:
        print(f"train.bench: error: {exc}", file=sys.stderr)
        return 2
    (out / "bench.json").write_text(json.dumps(results, indent=1) + "\n")
    shutil.rmtree(out / "chunks", ignore_errors=True)  # the run is whole: its chunks are done
    md = table_markdown(results)
    (out / "bench.md").write_text(md + "\n")
    try:
        if spec.maps is None:  # a suite of maps has no levels to plot against
            plot_levels(results, out / "bench_levels.png")
    except ImportError as exc:
        print(f"(no plot: {exc})", file=sys.stderr)
    print(md)
    print(f"wrote {out}/: " + ", ".join(files))
    ranks.close()
    return 0
