"""PPO for continuous actions on :class:`offroad_env.OffroadVectorEnv`, in one readable file.

    python -m train.ppo --env-id offroad_env/OffroadNav-v1 --total-steps 3000000 --out runs/nav

The data never leaves torch: observations, actions, rewards and advantages are tensors on the
env's device. The env runs in ``SAME_STEP`` autoreset mode, so a finished episode's last
observation arrives in ``info["final_obs"]``; a *truncated* episode (time limit) is bootstrapped
with the value of that observation, a *terminated* one is not.

Outputs in ``--out``: ``progress.csv`` (one row per iteration: steps, returns, episode lengths,
success and tip-over rates, the mean of each reward term, losses), ``checkpoint.pt`` (the latest;
``--checkpoint-every`` adds numbered ones), ``learning_curve.png`` (with the ``plot`` extra) and
TensorBoard event files in ``tb/`` when the tensorboard package is installed
(``--no-tensorboard``: none). Existing outputs are not overwritten without ``--force``;
``--resume`` continues a run from its checkpoint.

Checkpoints hold only tensors and plain Python values and are loaded with
``torch.load(weights_only=True)``; a checkpoint for another observation layout is refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import gymnasium as gym
import torch

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env.core.devices import compile_cache_dir, configure_threads
from offroad_env.task.terms import terms_to_plain
from wrappers import TerrainCurriculum

from train.common.agent import Agent, goal_column
from train.ppo.algorithm import (Passes, RolloutBuffer, RunningEpisodes,  # noqa: F401
                        bootstrap_truncated, compute_gae, rollout, update)
from train.common.checkpoint import (CHECKPOINT_FORMAT, CheckpointError, config_to_plain, load_checkpoint,
                         obs_layout, save_checkpoint, sim_config_plain)
from train.common.distributed import Dist, rank_seed
from train.common.envconfig import (add_env_arguments, check_env_id, env_kwargs as spec_kwargs, pack_inputs,
                        env_spec_from_args)
from train.common.logs import (EpisodeWindow, Progress, RunLog, compile_notice, iteration_line,
                   notice_missing_extras, plot_learning_curve, summary_json)
from train.planners.baselines import skid_steered
from train.ppo.config import PRESETS, PPOConfig, preset_flags
from train.common.inputs import WithInputs, actor_sources, critic_sources
from train.ppo.teacher import make_teacher, teacher_weight
from train.ppo.validation import Validation

__all__ = ["PPOConfig", "PRESETS", "make_optimizer", "parse_args", "Agent", "check_env_id",
           "make_vec_env", "train", "load_checkpoint", "CHECKPOINT_FORMAT", "save_checkpoint",
           "CheckpointError", "compute_gae", "bootstrap_truncated", "EpisodeWindow",
           "plot_learning_curve", "main"]


# ---------------------------------------------------------------------- env and checkpoints
def make_optimizer(agent: Agent, cfg: PPOConfig) -> torch.optim.Adam:
    """Adam (eps 1e-5, CleanRL's), fused into one kernel over the parameters (the same update
    as the per-tensor loop, in one pass)."""
    return torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5, fused=True)


def make_vec_env(env_id: str, num_envs: int, device="cpu", max_episode_steps=None,
                 **kwargs) -> gym.vector.VectorEnv:
    """``gymnasium.make_vec`` of a registered offroad id in SAME_STEP autoreset mode."""
    check_env_id(env_id)
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = max_episode_steps
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, device=device,
                        **kwargs)


def switch_compiled(env, bar) -> None:
    """Switch ``env`` to its compiled step (the compile happens at its next step)."""
    env.unwrapped.use_compiled(True)
    if bar is not None:
        bar.write("train.ppo: the compiled step from here on (this iteration waits for its "
                  "compile)")


def train(cfg: PPOConfig, resume: str | None = None, force: bool = False,
          env_kwargs: dict | None = None, allow_modules: tuple = ()) -> dict:
    """Train; returns a summary (last iteration's statistics, steps, wall time).

    ``env_kwargs``: SimConfig fields on top of the id's and ``cfg.env``'s, your own terms
    among them (``rewards=``, ``terminations=``, ... :mod:`offroad_env.task.terms`): the run records
    them by import path in its config and checkpoint; ``allow_modules`` names the modules a
    resumed run's recorded terms may be imported from.

    Under ``torchrun`` (``WORLD_SIZE`` > 1) each rank trains its own ``num_envs`` environments
    (rank r seeds them from ``seed + r * num_envs``) with gradients averaged across ranks
    (:mod:`train.common.distributed`); rank 0 writes the run folder and the log counts every rank's
    episodes."""
    ddp = Dist(cfg.device)
    try:
        return _train(cfg, ddp, resume, force, env_kwargs, tuple(allow_modules))
    finally:
        ddp.close()


def _train(cfg: PPOConfig, ddp: Dist, resume, force, env_kwargs, allow_modules=()) -> dict:
    out = Path(cfg.out)
    ckpt_path = out / "checkpoint.pt"
    # every check before anything is written: a refused run leaves nothing behind
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out} is a file, not a folder")
    own_run = resume is not None and Path(resume).resolve().parent == out.resolve()
    if out.exists() and any(out.iterdir()) and not force and not own_run:
        raise FileExistsError(f"{out} is not empty; pass --force to overwrite it, or --resume "
                              f"{out / 'checkpoint.pt'} to continue its run")
    have_tb = importlib.util.find_spec("tensorboard") is not None
    if cfg.tensorboard and not have_tb:
        raise ImportError("--tensorboard needs the tensorboard package (pip install tensorboard)")
    tensorboard = have_tb if cfg.tensorboard is None else cfg.tensorboard
    if torch.device(ddp.device).type == "cpu":
        configure_threads(cfg.threads, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    torch.manual_seed(cfg.seed)  # the same initial weights on every rank
    device = torch.device(ddp.device)
    W, rank = ddp.world, ddp.rank
    resume_base = None if resume is None else Path(resume).parent  # its inputs/ copies
    env_kwargs = {**spec_kwargs(cfg.env_id, cfg.env, resume_base, allow_modules),
                  **(env_kwargs or {})}
    compile_env = env_kwargs.get("compile", False) or cfg.compile_env
    late = compile_env and cfg.compile_after > 0  # eager first, compiled from an iteration on
    env_kwargs["compile"] = compile_env and not late
    limit = cfg.max_episode_steps or env_kwargs.pop("max_episode_steps", None)  # a suite's
    env = make_vec_env(cfg.env_id, cfg.num_envs, device, limit, **env_kwargs)
    curriculum = None
    if cfg.curriculum:
        try:
            curriculum = TerrainCurriculum(env, cfg.curriculum_init_level)
        except ValueError as exc:  # name the option the value came from
            raise ValueError(f"--curriculum-init-level {cfg.curriculum_init_level}: {exc} "
                             f"(pass a lower --curriculum-init-level, or --no-curriculum)"
                             if "init_max_level" in str(exc) else str(exc)) from None
    env = env if curriculum is None else curriculum
    own = terms_to_plain(env.unwrapped.config)  # recorded by import path (ValueError if none)
    if own:
        cfg = dataclasses.replace(cfg, env={**(cfg.env or {}), "terms": own})
    if cfg.action_map == "residual" and not skid_steered(env.unwrapped.config):
        raise ValueError(f"--action-map residual drives wheel speeds: it needs a skid-steered "
                         f"vehicle (dynamics skid_steer, or rigid_body with skid steering), "
                         f"got dynamics {env.unwrapped.config.dynamics!r} (pass --action-map "
                         f"auto)")
    if cfg.action_map == "auto":  # the run records the map it took
        cfg = dataclasses.replace(cfg, action_map="twist" if skid_steered(
            env.unwrapped.config) else "direct")
    act_dim = env.single_action_space.shape[0]
    layout = obs_layout(env)
    # the actor's own inputs and the critic's privileged ones, after the env's observation
    sensors, privileged = actor_sources(cfg.actor_inputs, env), critic_sources(cfg.critic_inputs,
                                                                               env)
    obs_dim = env.single_observation_space.shape[0] + sum(s.dim for s in sensors)  # the actor's
    critic_dim = sum(s.dim for s in privileged)
    if sensors or privileged:
        env = WithInputs(env, sensors + privileged)
    start_iteration, global_step = 0, 0
    if resume is not None:
        agent, state = load_checkpoint(resume, env, device)
        if (agent.obs_dim, agent.critic_dim) != (obs_dim, critic_dim):
            raise ValueError(f"--resume {resume}: its actor reads {agent.obs_dim} columns and "
                             f"its critic {agent.critic_dim} more; this run's --actor-inputs "
                             f"{cfg.actor_inputs} and --critic-inputs {cfg.critic_inputs} give "
                             f"{obs_dim} and {critic_dim}: pass the run's own")
        optimizer = make_optimizer(agent, cfg)
        if state.get("optimizer") is not None:
            optimizer.load_state_dict(state["optimizer"])
        start_iteration, global_step = state["iteration"], state["global_step"]
    else:
        state = {}
        goal_col = goal_column(layout) if cfg.action_map == "residual" else None
        agent = Agent(obs_dim, act_dim, cfg.hidden, cfg.init_log_std, cfg.action_map,
                      goal_col, critic_dim, cfg.actor_inputs).to(device)
        optimizer = make_optimizer(agent, cfg)
    ddp.barrier()  # every rank has checked the folder before rank 0 writes into it
    log = None
    if ddp.main:
        out.mkdir(parents=True, exist_ok=True)
        # the run's file inputs (a URDF, a map) copied in, so the folder is self-contained
        cfg = dataclasses.replace(cfg, env=pack_inputs(cfg.env, out, resume_base))
        plain = config_to_plain(cfg)
        plain["world_size"] = W
        plain["env_resolved"] = sim_config_plain(env.unwrapped.config)
        (out / "config.json").write_text(json.dumps(plain, indent=2) + "\n")
        log = RunLog(out, append=resume is not None, tensorboard=tensorboard)

    validation = None
    if cfg.validate_every and ddp.main:  # held-out worlds of the training env, eager, built
        # at the first validation (not before the first training step)
        validation = Validation(cfg.env_id, env_kwargs, cfg.validate_episodes, limit, device)
    N, T = cfg.num_envs, cfg.num_steps
    teacher = make_teacher(cfg, env, agent)
    buf = RolloutBuffer.zeros(T, N, obs_dim + critic_dim, act_dim, device,
                              teacher.num_rows if teacher is not None else 0,
                              teacher.label_shape if teacher is not None else ())
    passes = Passes.make(cfg.compile_policy)
    term_names = list(env.unwrapped.reward_terms)

    # each rank its own streams; a resumed run continues from new seeds, not the first ones
    obs, _ = env.reset(seed=rank_seed(cfg.seed, rank, N, W, start_iteration))
    window = EpisodeWindow(cfg.stats_window)
    episodes_now = RunningEpisodes.zeros(N, device)
    limit = env.unwrapped.max_episode_steps
    if cfg.spread_starts and limit and start_iteration == 0:
        g = torch.Generator().manual_seed(cfg.seed + rank)
        env.unwrapped.set_episode_steps(torch.randint(0, limit, (N,), generator=g).to(device))
        episodes_now.counted = torch.zeros_like(episodes_now.counted)
    n_iter = cfg.num_iterations(W)  # total_steps counts every rank's env steps
    if n_iter * cfg.batch_size * W != cfg.total_steps and ddp.main:
        print(f"train.ppo: total_steps {cfg.total_steps} is not a whole number of iterations "
              f"of {cfg.batch_size * W} env steps (num_envs x num_steps"
              f"{' x ranks' if W > 1 else ''}): training {n_iter * cfg.batch_size * W} "
              f"({n_iter} iterations)", file=sys.stderr)
    bar = Progress(n_iter * cfg.batch_size * W, global_step, cfg.progress and ddp.main,
                   desc="train")
    notice = compile_notice(compile_env and not late, cfg.compile_policy) if ddp.main else None
    if notice:
        bar.write(notice)
    switch_at = start_iteration + cfg.compile_after if late else None
    if late and ddp.main:
        bar.write(f"train.ppo: the first {cfg.compile_after} iterations run the eager step; "
                  f"iteration {switch_at + 1} compiles it (minutes on a cold cache, seconds on "
                  f"a warm one; the cache is {compile_cache_dir()})")
    t_start = time.perf_counter()
    summary, summary_best = {}, {}
    if validation is not None and own_run and state.get("best"):  # go on from the run's best
        summary_best = dict(state["best"])
        validation.best = (summary_best["best_val_success_rate"],
                           summary_best["best_val_return_mean"])
    iteration = start_iteration
    for iteration in range(start_iteration, n_iter):
        if iteration == switch_at:  # the compiled step takes over (a fixed iteration)
            switch_compiled(env, bar if ddp.main else None)
        if cfg.anneal_lr:
            frac = 1.0 - iteration / n_iter
            optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
        t_roll = time.perf_counter()
        weight = (teacher_weight(cfg.teacher_coef, cfg.teacher_steps, global_step)
                  if teacher is not None else 0.0)
        obs, ended, term_sums = rollout(agent, env, obs, buf, episodes_now, cfg, term_names,
                                          passes, teacher if weight > 0 else None)
        global_step += N * T * W
        rollout_s = time.perf_counter() - t_roll
        stats, n_updates = update(agent, optimizer, buf, obs, cfg, ddp, passes,
                                  teacher.rows if teacher is not None else None, weight)

        elapsed = time.perf_counter() - t_start
        iter_s = time.perf_counter() - t_roll  # the rollout and the update
        done_t, keep, ret_t, len_t, reason_t = (torch.stack(x) for x in zip(*ended))  # (T, N)
        episodes = ddp.gather(list(zip(ret_t[keep].tolist(), len_t[keep].tolist(),
                                       reason_t[keep].tolist())))  # every rank's
        if episodes:
            window.add(*(list(x) for x in zip(*episodes)))
        row = {
            "iteration": iteration + 1, "global_step": global_step,
            "time_s": round(elapsed, 3),
            # training throughput (rollout and update; SB3's time/fps), and the rollout's alone
            "steps_per_s": round(N * T * W / ddp.mean(iter_s), 1),
            "rollout_steps_per_s": round(N * T * W / ddp.mean(rollout_s), 1),
            "episodes": int(round(ddp.mean(float(done_t.sum())) * W)),
            **window.stats(),
        }
        if curriculum is not None:
            row["mean_level"] = ddp.mean(curriculum.mean_level)
        last = iteration + 1 == n_iter or ddp.any(bool(cfg.time_limit_s)
                                                   and elapsed > cfg.time_limit_s)
        if cfg.validate_every:  # the columns in every row, filled where it validates
            score = {"val_success_rate": None, "val_return_mean": None}
            if validation is not None and ((iteration + 1) % cfg.validate_every == 0 or last):
                score = validation(agent)
                if validation.improved(score):
                    save_checkpoint(out / "best.pt", agent, optimizer, cfg, layout,
                                    iteration + 1, global_step)
                    summary_best = {"best_checkpoint": str(out / "best.pt"),
                                    "best_iteration": iteration + 1,
                                    **{f"best_{k}": v for k, v in score.items()}}
            row.update(score)
        for n, v in zip(term_names, (term_sums / T).tolist()):
            row[f"reward/{n}"] = v
        row.update({k: v / max(n_updates, 1) for k, v in stats.items()})
        row["lr"] = optimizer.param_groups[0]["lr"]
        if teacher is not None:
            row["teacher_weight"] = weight
        summary = row
        if log is not None:
            log.write(row)
        bar.update(N * T * W)
        if row["window_episodes"]:
            bar.set_postfix(ret=f"{row['return_mean']:.2f}", succ=f"{row['success_rate']:.2f}",
                            tip=f"{row['tip_over_rate']:.3f}")
        if notice and iteration == start_iteration:
            bar.write(f"train.ppo: first iteration (with the compile) {iter_s:.1f} s")
        if ddp.main and cfg.print_every and ((iteration + 1) % cfg.print_every == 0
                                             or iteration + 1 == n_iter):
            bar.write(iteration_line(row, n_iter))
        if ddp.main:
            if cfg.checkpoint_every and (iteration + 1) % cfg.checkpoint_every == 0:
                save_checkpoint(out / f"checkpoint_{iteration + 1:05d}.pt", agent, optimizer,
                                cfg, layout, iteration + 1, global_step)
            save_checkpoint(ckpt_path, agent, optimizer, cfg, layout, iteration + 1,
                            global_step, summary_best)
        if last:
            break
    ddp.check_same(list(agent.parameters()) + list(agent.buffers()))
    bar.close()
    env.close()
    if validation is not None:
        validation.close()
    if log is not None:
        log.close()
        try:
            plot_learning_curve(out / "progress.csv", out / "learning_curve.png")
        except ImportError:
            pass
    summary = dict(summary)
    summary["checkpoint"] = str(ckpt_path)
    if curriculum is not None:  # each family's highest level played (levels without rest out)
        summary["curriculum_top_levels"] = dict(zip(curriculum.levels_config.families,
                                                    curriculum.top_levels.tolist()))
    summary.update(summary_best)  # the best validated checkpoint, with its score
    return summary


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train.ppo", description=__doc__.split("\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="named settings under the flags given (a --suite run: 'suite' unless "
                        "another is named): " + "; ".join(
                       f"{k}: " + ", ".join(f"{f}={v}" for f, v in preset_flags(k).items())
                       for k in PRESETS))
    for f in dataclasses.fields(PPOConfig):
        if f.name == "env":
            continue  # the environment options below
        if f.name == "tensorboard":
            p.add_argument("--tensorboard", action=argparse.BooleanOptionalAction,
                           default=None, help="TensorBoard event files (default: on when the "
                                              "tensorboard package is installed)")
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        if isinstance(default, bool):
            p.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                           default=default, help=f"default {default}")
        elif f.name == "hidden":
            p.add_argument(flag, dest=f.name, type=int, nargs="+", default=list(default),
                           help=f"default {' '.join(map(str, default))}")
        elif f.name in ("target_kl", "max_episode_steps"):
            typ = float if f.name == "target_kl" else int
            p.add_argument(flag, dest=f.name, type=typ, default=None, help="default None")
        else:
            p.add_argument(flag, dest=f.name, type=type(default), default=default,
                           help=f"default {default}")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT",
                   help="continue training from this checkpoint (appends to progress.csv)")
    p.add_argument("--force", action="store_true", help="overwrite a non-empty --out folder")
    add_env_arguments(p)
    return p


def parse_args(argv=None) -> dict:
    """The command line's options by name (``--preset``'s values under the flags given)."""
    parser = build_parser()
    known = vars(parser.parse_known_args(argv)[0])
    preset = known["preset"]
    if preset is None and known.get("env.suite") is not None:
        preset = "suite"  # a suite run's defaults (PRESETS)
    if preset is not None:  # the preset's values become defaults: flags given still win
        parser.set_defaults(**preset_flags(preset))
    args = vars(parser.parse_args(argv))
    args.pop("preset")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    resume, force = args.pop("resume"), args.pop("force")
    if int(os.environ.get("RANK", "0")) == 0:
        notice_missing_extras()
    try:
        spec = env_spec_from_args(args)
        if resume is not None and not spec:  # the resumed run's environment
            _, state = load_checkpoint(resume)
            spec = state["config"].get("env", {})
        cfg = PPOConfig(**args, env=spec)
        summary = train(cfg, resume=resume, force=force)
    except (ValueError, OSError, ImportError, CheckpointError) as exc:
        print(f"train.ppo: error: {exc}", file=sys.stderr)
        return 2
    if int(os.environ.get("RANK", "0")) != 0:
        return 0  # rank 0 reports for the run
    print(json.dumps(summary_json(summary), indent=2))
    return 0

