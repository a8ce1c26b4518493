"""Evaluate a policy on held-out terrain: success, tip-over, time to goal, roll and pitch.

    python -m train.evaluate runs/nav/checkpoint.pt --episodes 512 --out runs/nav/eval
    python -m train.evaluate runs/nav/checkpoint.pt --baselines      # also random and heuristic
    python -m train.evaluate --policy heuristic --env-id offroad_env/OffroadNav-v1
    python -m train.evaluate runs/trav/checkpoint.pt --suite offroad-bench-v0 --baselines

M episodes run as M sub-environments of one vector env (each sub-env's first episode counts), on
maps generated from ``--terrain-seed`` (training uses the registered ``terrain_seed``, 0, so
the default 1000 is held out) with spawn seeds from ``--seed``. Policies:

* ``checkpoint``: the PPO agent's mean action (deterministic);
* ``random``: uniform actions in [-1, 1];
* ``heuristic``: drive straight at the goal, turning towards it in proportion to the bearing
  (unicycle and skid-steer nav tasks).

Writes ``eval.json`` (per policy: rates, times, attitude statistics and per-episode values),
``eval_outcomes.png`` and ``eval_attitude.png`` (with the ``plot`` extra), ``frames.png`` (a strip
of ``rgb_array`` frames of episode 0) and, with ``--video``, ``video-episode-0.mp4`` through
Gymnasium's ``save_video`` (needs ``moviepy``). Existing files are not overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env.core.devices import configure_threads
from offroad_env.task.task import EndReason

from train.common.checkpoint import CheckpointError, load_checkpoint
from train.common.inputs import AgentPolicy
from train.common.envconfig import check_env_id, env_kwargs
from train.common.logs import notice_missing_extras
from train.common.episodes import (EVAL_SEED, HELD_OUT_TERRAIN_SEED, evaluate, frame_strip,
                                   run_episodes)
from train.planners.baselines import (PLANNERS, baseline, heuristic_policy, is_policy_name,  # noqa: F401
                       random_policy)

__all__ = ["evaluate", "run_episodes", "heuristic_policy", "random_policy", "main"]

POLICIES = ("checkpoint", "random", "heuristic")
VIDEO = "video-episode-0.mp4"  # the name gymnasium.utils.save_video gives episode 0


def _plots(results: dict, out: Path) -> list[str]:
    from offroad_env.drawing.plots import pyplot

    plt = pyplot()
    names = list(results)
    reasons = [r.label for r in EndReason if r != EndReason.NONE]
    fig, ax = plt.subplots(figsize=(8, 4))
    bottom = np.zeros(len(names))
    for r in reasons:
        vals = np.array([results[n]["end_reasons"][r] / results[n]["episodes"] for n in names])
        ax.bar(names, vals, bottom=bottom, label=r)
        bottom += vals
    ax.set_ylabel("fraction of episodes")
    ax.set_title("How the episodes ended")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "eval_outcomes.png", dpi=100)
    plt.close(fig)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for n in names:
        a1.hist(results[n]["per_episode"]["max_abs_roll_deg"], bins=30, alpha=0.5, label=n)
        a2.hist(results[n]["per_episode"]["max_abs_pitch_deg"], bins=30, alpha=0.5, label=n)
    a1.set_xlabel("max |roll| per episode (deg)")
    a2.set_xlabel("max |pitch| per episode (deg)")
    a1.legend()
    fig.tight_layout()
    fig.savefig(out / "eval_attitude.png", dpi=100)
    plt.close(fig)
    return ["eval_outcomes.png", "eval_attitude.png"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train.evaluate",
                                description=__doc__.split("\n")[0])
    p.add_argument("checkpoint", nargs="?", default=None, help="a train.ppo checkpoint")
    p.add_argument("--policy", default=None, metavar="CKPT|" + "|".join(POLICIES[1:] + (
                   "careful",)),
                   help="a checkpoint file or a baseline (default: the checkpoint if one is "
                        "given; careful: with --suite only)")
    p.add_argument("--suite", default=None,
                   help="run an evaluation suite instead (e.g. offroad-bench-v0; see "
                        "python -m train.bench); --baselines adds random, heuristic and careful")
    p.add_argument("--baselines", action="store_true",
                   help="also evaluate the random and heuristic policies on the same episodes")
    p.add_argument("--env-id", default=None, help="default: the checkpoint's")
    p.add_argument("--episodes", type=int, default=256)
    p.add_argument("--seed", type=int, default=EVAL_SEED, help="spawn/goal seed")
    p.add_argument("--terrain-seed", type=int, default=HELD_OUT_TERRAIN_SEED,
                   help="held-out maps")
    p.add_argument("--max-episode-steps", type=int, default=None)
    p.add_argument("--out", default=None, help="output folder (default: next to the checkpoint)")
    p.add_argument("--video", action="store_true", help=f"also write {VIDEO} (needs moviepy)")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("--allow-module", action="append", default=[], metavar="MODULE",
                   help="a module the checkpoint's own terms may be imported from (repeat it; "
                        "importing runs the module's code, so none is imported unless named)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (default 0: the physical cores, capped at the free ones)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (by default one per policy on stderr, with its ETA)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    notice_missing_extras()
    try:
        configure_threads(args.threads)
        return _main(args)
    except (CheckpointError, ValueError, OSError, ImportError) as exc:
        print(f"train.evaluate: error: {exc}", file=sys.stderr)
        return 2


def _main(args) -> int:
    policy = args.policy
    if policy is not None and not is_policy_name(policy):
        if not Path(policy).is_file():
            raise ValueError(f"--policy {policy!r} is neither a checkpoint file nor one of "
                             f"{POLICIES[1:] + ('careful',)} (or a planner: "
                             f"{', '.join(p + ':...' for p in PLANNERS)})")
        if args.checkpoint and args.checkpoint != policy:
            raise ValueError(f"two checkpoints given: {args.checkpoint!r} and --policy "
                             f"{policy!r}")
        args.checkpoint, policy = policy, "checkpoint"
    policy = policy or ("checkpoint" if args.checkpoint else None)
    if args.suite is not None:
        from train import bench
        if policy is None:
            raise ValueError("give a checkpoint or --policy random|heuristic|careful")
        pols = [args.checkpoint if policy == "checkpoint" else policy]
        if args.baselines:
            pols += [p for p in bench.POLICIES if p != policy]
        argv = ["--suite", args.suite, "--policy", *pols] + (
            ["--out", args.out] if args.out else []) + (["--force"] if args.force else []) + (
            ["--no-progress"] if args.no_progress else []) + ["--threads", str(args.threads)]
        return bench.main(argv)
    if policy == "careful":
        raise ValueError("the careful policy needs the traverse task's observations: use "
                         "--suite")
    if policy is None:
        raise ValueError("give a checkpoint or --policy random|heuristic")
    if policy == "checkpoint" and not args.checkpoint:
        raise ValueError("--policy checkpoint needs a checkpoint path")
    state = None
    if args.checkpoint:
        _, state = load_checkpoint(args.checkpoint)  # fails early on a bad file
    env_id = args.env_id or (state["config"].get("env_id") if state else
                             "offroad_env/OffroadNav-v1")
    check_env_id(env_id)  # before any gym.make: a checkpoint's id must not import a module
    if args.out:
        out = Path(args.out)
    elif args.checkpoint:
        out = Path(args.checkpoint).parent / "eval"
    else:
        out = Path("runs") / f"eval_{policy}"
    files = ["eval.json", "frames.png", "eval_outcomes.png", "eval_attitude.png"] + (
        [VIDEO] if args.video else [])
    if not args.force:
        for f in files:
            if (out / f).exists():
                raise FileExistsError(f"{out / f} exists; pass --force to overwrite it")
    if args.video:
        try:
            import moviepy  # noqa: F401
        except ImportError:
            raise ImportError("--video needs moviepy: pip install 'offroad-env[video]'") from None
    names = [policy] + ([p for p in ("random", "heuristic") if p != policy] if args.baselines
                        else [])
    # the checkpoint's environment (vehicle, models, task, terrain: train.common.envconfig)
    spec = (env_kwargs(env_id, state["config"].get("env"), Path(args.checkpoint).parent,
                       tuple(args.allow_module)) if state else {})
    suite_steps = spec.pop("max_episode_steps", None)  # a --suite run's time limit
    common = dict(env_id=env_id, episodes=args.episodes, seed=args.seed,
                  terrain_seed=args.terrain_seed,
                  max_episode_steps=args.max_episode_steps or (
                      state["config"].get("max_episode_steps") if state else None)
                  or suite_steps, **spec)
    results = {}
    for name in names:
        if name == "checkpoint":
            probe = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point",
                                 **spec)
            agent, _ = load_checkpoint(args.checkpoint, probe)  # layout check against the env
            probe.close()
            agent.eval()
            pol = AgentPolicy(agent)  # its own inputs, if any, from the env evaluate makes
        else:
            pol = name
        results[name] = evaluate(pol, frames=(name == names[0]), progress=not args.no_progress,
                                 **common)
    out.mkdir(parents=True, exist_ok=True)
    shots = results[names[0]].pop("frames")
    from PIL import Image
    Image.fromarray(frame_strip(shots)).save(out / "frames.png")
    if args.video:
        from gymnasium.utils.save_video import save_video
        save_video(shots, str(out), fps=int(round(1 / 0.05)), name_prefix="video")
    written = ["eval.json", "frames.png"] + ([VIDEO] if args.video else [])
    try:
        written += _plots(results, out)
    except ImportError as exc:
        print(f"(no plots: {exc})", file=sys.stderr)
    (out / "eval.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"{'policy':12s}{'success':>9s}{'tip-over':>10s}{'time to goal':>14s}"
          f"{'mean|roll|':>12s}{'max|roll|':>11s}{'mean|pitch|':>13s}{'max|pitch|':>12s}")
    for name, r in results.items():
        ttg = f"{r['time_to_goal_s']:.1f} s" if r["time_to_goal_s"] is not None else "-"
        print(f"{name:12s}{r['success_rate']:9.1%}{r['tip_over_rate']:10.1%}{ttg:>14s}"
              f"{r['mean_abs_roll_deg']:12.1f}{r['max_abs_roll_deg']:11.1f}"
              f"{r['mean_abs_pitch_deg']:13.1f}{r['max_abs_pitch_deg']:12.1f}")
    print(f"wrote {out}/: " + ", ".join(written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
