"""Evaluate a policy on held-out terrain: success, tip-over, time to goal, roll and pitch.

    python -m train.evaluate runs/nav/checkpoint.pt --episodes 512 --out runs/nav/eval
    python -m train.evaluate runs/nav/checkpoint.pt --baselines      # also random and heuristic
    python -m train.evaluate --policy heuristic --env-id offroad_env/OffroadNav-v0
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
import torch

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env.devices import configure_threads
from offroad_env.tasks import EndReason

from .checkpoint import CheckpointError, load_checkpoint
from .envconfig import check_env_id, env_kwargs
from .logs import Progress, notice_missing_extras
from .outcomes import Outcomes
from .policies import (PLANNERS, baseline, heuristic_policy, is_policy_name,  # noqa: F401
                       random_policy)

__all__ = ["evaluate", "run_episodes", "heuristic_policy", "random_policy", "main"]

POLICIES = ("checkpoint", "random", "heuristic")
VIDEO = "video-episode-0.mp4"  # the name gymnasium.utils.save_video gives episode 0
#: the maps' seed of the held-out worlds (training uses the registered ``terrain_seed``, 0)
HELD_OUT_TERRAIN_SEED = 1000
#: the spawn and goal seed of the evaluation episodes
EVAL_SEED = 10_000


def evaluate(policy, env_id: str, episodes: int = 256, seed: int = EVAL_SEED,
             terrain_seed: int = HELD_OUT_TERRAIN_SEED, max_episode_steps: int | None = None,
             frames: bool = False, progress: bool = False, **env_kwargs) -> dict:
    """Run ``episodes`` episodes of ``policy`` (a function, or the string ``"random"`` or
    ``"heuristic"``) and return the statistics (see the module docstring).

    ``policy(obs (M, D) tensor) -> actions (M, 2)``. ``frames``: also return the rgb_array
    frames of episode 0 under ``"frames"``. ``progress``: a bar with its ETA on stderr over
    the episodes' steps (the run stops early once every episode ends).
    """
    check_env_id(env_id)
    if int(episodes) != episodes or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    kw = dict(env_kwargs, terrain_seed=terrain_seed)
    if max_episode_steps is not None:
        kw["max_episode_steps"] = max_episode_steps
    env = gym.make_vec(env_id, num_envs=episodes, vectorization_mode="vector_entry_point",
                       render_mode="rgb_array" if frames else None, **kw)
    if isinstance(policy, str):
        policy = baseline(policy, env, seed)
    base = env.unwrapped
    M = episodes
    out, shots = run_episodes(env, policy, seed, frames, progress)
    dt, labels = base.config.dt, base.end_labels  # the config's own terminations too
    env.close()
    reason, length, ret = out.reason, out.length, out.ret
    success = reason == EndReason.GOAL_REACHED
    n = float(M)
    res = {
        "env_id": env_id, "episodes": M, "seed": seed, "terrain_seed": terrain_seed,
        "success_rate": float(success.sum()) / n,
        "tip_over_rate": float((reason == EndReason.TIP_OVER).sum()) / n,
        "end_reasons": {label: int((reason == code).sum()) for code, label in labels.items()
                        if code != EndReason.NONE},
        "time_to_goal_s": float(length[success].double().mean() * dt) if success.any() else None,
        "return_mean": float(ret.mean()),
        "mean_abs_roll_deg": float(out.mean_abs_deg("roll").mean()),
        "max_abs_roll_deg": float(out.max_abs_deg("roll").max()),
        "mean_abs_pitch_deg": float(out.mean_abs_deg("pitch").mean()),
        "max_abs_pitch_deg": float(out.max_abs_deg("pitch").max()),
        "per_episode": {"end_reason": [labels[c] for c in reason.tolist()],
                        "length": length.tolist(), "return": ret.tolist(),
                        "max_abs_roll_deg": out.max_abs_deg("roll").tolist(),
                        "max_abs_pitch_deg": out.max_abs_deg("pitch").tolist()},
    }
    if frames:
        res["frames"] = shots
    return res


def run_episodes(env, policy, seed: int, frames: bool = False,
                 progress: bool = False) -> tuple[Outcomes, list]:
    """Reset the vector env ``env`` (M sub-envs) with ``seed`` and run ``policy`` until each
    sub-env's first episode ends (or the env's time limit, else 10 000 steps, passes); returns
    its :class:`Outcomes` (finished) and, with ``frames``, episode 0's rgb_array frames."""
    base = env.unwrapped
    limit = base.max_episode_steps or 10_000
    obs, _ = env.reset(seed=seed)
    out = Outcomes(env.num_envs)
    shots = [env.render()[0]] if frames else []
    bar = Progress(limit, enabled=progress, desc="evaluate", unit="step")
    with torch.inference_mode():
        for _ in range(limit):
            bar.update(1)
            obs, r, term, trunc, info = env.step(policy(obs))
            view = base.state_view()
            live = out.add(r, view.roll, view.pitch, term | trunc, info["end_reason"])
            if hasattr(policy, "active"):  # a planner plans only the episodes still counted
                policy.active = out.active
            if frames and bool(live[0]):
                shots.append(env.render()[0])
            if not bool(out.active.any()):
                break
            bar.set_postfix(running=int(out.active.sum()))
    bar.close()
    out.finish()  # episodes that ran out of steps
    return out, shots


def frame_strip(frames: list, count: int = 8) -> np.ndarray:
    """``count`` evenly spaced frames side by side, ``(H, count * W, 3)`` uint8."""
    idx = np.linspace(0, len(frames) - 1, min(count, len(frames))).round().astype(int)
    return np.concatenate([frames[i] for i in idx], axis=1)


def _plots(results: dict, out: Path) -> list[str]:
    from offroad_env.plots import pyplot

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
                        "train/bench.py); --baselines adds random, heuristic and careful")
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
        from . import bench
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
                             "offroad_env/OffroadNav-v0")
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
    # the checkpoint's environment (vehicle, models, task, terrain: train.envconfig)
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
            pol = lambda obs: agent.act(obs, deterministic=True)  # noqa: E731
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
