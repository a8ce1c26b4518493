"""PPO for continuous actions on :class:`offroad_env.OffroadVectorEnv`, in one readable file.

    python -m train.ppo --env-id offroad_env/OffroadNav-v0 --total-steps 3000000 --out runs/nav

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
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import torch

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env import check_device
from offroad_env.devices import configure_threads
from wrappers import TerrainCurriculum

from .agent import Agent
from .algorithm import (RolloutBuffer, RunningEpisodes, bootstrap_truncated,  # noqa: F401
                        compute_gae, rollout, update)
from .checkpoint import (CHECKPOINT_FORMAT, CheckpointError, config_to_plain, load_checkpoint,
                         obs_layout, save_checkpoint, sim_config_plain)
from .distributed import Dist, rank_seed
from .envconfig import (add_env_arguments, check_env_id, env_kwargs as spec_kwargs, pack_inputs,
                        env_spec_from_args)
from .logs import (EpisodeWindow, Progress, RunLog, iteration_line, notice_missing_extras,
                   plot_learning_curve, summary_json)

__all__ = ["PPOConfig", "PRESETS", "make_optimizer", "parse_args", "Agent", "check_env_id",
           "make_vec_env", "train", "load_checkpoint", "CHECKPOINT_FORMAT", "save_checkpoint",
           "CheckpointError", "compute_gae", "bootstrap_truncated", "EpisodeWindow",
           "plot_learning_curve", "main"]

#: named settings (``--preset NAME``, :meth:`PPOConfig.preset`), measured in BENCHMARKS.md
#: ("Training speed"): ``classic``, the defaults before issue 28 (256 envs x 64 steps, two 128 x
#: 128 MLPs; the published runs used them); ``fast``, 2.5-3 x the defaults' env-steps/s at N =
#: 4096 (16-step rollouts, two epochs of two large minibatches, 64 x 64), learning worse per
#: env-step and per wall second on the tasks measured. The defaults themselves (1024 envs x 16
#: steps, 64 x 64) keep the classic batch and update (16 k samples, 4 epochs x 4 minibatches)
PRESETS = {
    "classic": dict(num_envs=256, num_steps=64, update_epochs=4, num_minibatches=4,
                    hidden=(128, 128)),
    "fast": dict(num_envs=4096, num_steps=16, update_epochs=2, num_minibatches=2,
                 hidden=(64, 64)),
}


@dataclass(frozen=True, kw_only=True)
class PPOConfig:
    """Training settings (each is a ``--flag`` of the command line).

    Attributes:
        env_id: a registered id (``offroad_env/OffroadNav-v0``...).
        num_envs: parallel environments N.
        num_steps: rollout length T per iteration (a batch is N * T transitions).
        total_steps: environment steps to train for.
        learning_rate, anneal_lr: Adam step size, linearly annealed to 0 if set.
        gamma, gae_lambda: discount and GAE parameter.
        update_epochs, num_minibatches: passes over each batch and minibatches per pass.
        clip_coef, clip_vloss: PPO ratio clip (also used for the value, if clip_vloss).
        ent_coef, vf_coef, max_grad_norm: loss weights and gradient clip.
        target_kl: stop an update early when the approximate KL passes this (None: never).
        hidden: hidden layer sizes of the actor and critic MLPs.
        init_log_std: initial log standard deviation of the Gaussian policy.
        seed: seeds the env (sub-env i gets seed + i) and torch.
        device: torch device of the env and the networks.
        threads: torch CPU threads (0, default: torch's default, the physical cores, capped at
            the cores other work leaves free, shared among torchrun's local ranks; a count
            above the free cores warns).
        max_episode_steps: override of the id's time limit (None: the registered one).
        out: output folder.
        checkpoint_every: also keep a numbered checkpoint every this many iterations (0: never).
        tensorboard: write TensorBoard event files: None (default) when the ``tensorboard``
            package is installed, True (an error without it) or False (``--no-tensorboard``).
        progress: show a progress bar with its ETA on stderr (tqdm's; without tqdm, a line
            every 10 s).
        print_every: print a line to stderr every this many iterations (0: never): steps,
            steps/s, and the success rate and return over the episode window (with its size).
        time_limit_s: stop after this many seconds of training (0: no limit), saving as usual.
        stats_window: episode statistics (return, length, success and end-reason rates) are
            over the last this many finished episodes (the log says how many it held).
        spread_starts: at the first reset, give each env a random elapsed step count in
            ``[0, max_episode_steps)``, so episodes do not end in lockstep bursts (each env's
            first, shortened episode is left out of the statistics).
        compile_env: ``torch.compile`` the environment's step (3-5x faster env steps at
            thousands of envs; the first iteration waits for the compile, tens of seconds).
        curriculum: train through terrain levels (:class:`wrappers.TerrainCurriculum`; the env's
            terrain must be level maps, as ``OffroadTraverse-v0``'s); the log gains
            ``mean_level``.
        curriculum_init_level: initial levels are drawn in ``[0, this]``.
        env: the environment spec (:mod:`train.envconfig`: SimConfig, task and reward
            overrides, terrain generator or map file) on top of ``env_id``'s config; recorded
            in ``config.json`` and the checkpoint.
    """

    env_id: str = "offroad_env/OffroadNav-v0"
    num_envs: int = 1024
    num_steps: int = 16
    total_steps: int = 4_000_000
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    clip_vloss: bool = False
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    hidden: tuple[int, ...] = (64, 64)
    init_log_std: float = -0.5
    seed: int = 1
    device: str = "cpu"
    threads: int = 0
    max_episode_steps: int | None = None
    out: str = "runs/ppo"
    checkpoint_every: int = 0
    tensorboard: bool | None = None
    progress: bool = True
    print_every: int = 10
    time_limit_s: float = 0.0
    stats_window: int = 100
    spread_starts: bool = True
    compile_env: bool = False
    curriculum: bool = False
    curriculum_init_level: int = 0
    env: dict = field(default_factory=dict)

    def __post_init__(self):
        ints = ("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches",
                "stats_window")
        for name in ints:
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        for name in ("print_every", "threads"):
            v = getattr(self, name)
            if int(v) != v or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        if int(self.curriculum_init_level) != self.curriculum_init_level or \
                self.curriculum_init_level < 0:
            raise ValueError(f"curriculum_init_level must be an int >= 0, got "
                             f"{self.curriculum_init_level!r}")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ValueError(f"num_envs * num_steps ({self.num_envs * self.num_steps}) must be "
                             f"divisible by num_minibatches ({self.num_minibatches})")
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        for name in ("gamma", "gae_lambda"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        check_device(self.device)
        if self.env.get("suite") is not None and self.env_id == "offroad_env/OffroadNav-v0":
            object.__setattr__(self, "env_id", "offroad_env/OffroadTraverse-v0")  # a suite's
        if not self.hidden or any(int(h) != h or h < 1 for h in self.hidden):
            raise ValueError(f"hidden must be a non-empty list of sizes >= 1, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))  # normalised

    @classmethod
    def preset(cls, name: str, **overrides) -> "PPOConfig":
        """The config of :data:`PRESETS` ``name``, with ``overrides`` on top; ValueError
        naming the presets for an unknown name."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    def num_iterations(self, world: int = 1) -> int:
        """Iterations to ``total_steps`` env steps (over ``world`` ranks' batches), rounded up
        to whole iterations (a run never stops short of what was asked; the trainer says when
        it rounds)."""
        return max(1, -(-self.total_steps // (self.batch_size * world)))


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


def train(cfg: PPOConfig, resume: str | None = None, force: bool = False,
          env_kwargs: dict | None = None) -> dict:
    """Train; returns a summary (last iteration's statistics, steps, wall time).

    Under ``torchrun`` (``WORLD_SIZE`` > 1) each rank trains its own ``num_envs`` environments
    (rank r seeds them from ``seed + r * num_envs``) with gradients averaged across ranks
    (:mod:`train.distributed`); rank 0 writes the run folder and the log counts every rank's
    episodes."""
    ddp = Dist(cfg.device)
    try:
        return _train(cfg, ddp, resume, force, env_kwargs)
    finally:
        ddp.close()


def _train(cfg: PPOConfig, ddp: Dist, resume, force, env_kwargs) -> dict:
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
    env_kwargs = {**spec_kwargs(cfg.env_id, cfg.env, resume_base), **(env_kwargs or {})}
    env_kwargs["compile"] = env_kwargs.get("compile", False) or cfg.compile_env
    limit = cfg.max_episode_steps or env_kwargs.pop("max_episode_steps", None)  # a suite's
    env = make_vec_env(cfg.env_id, cfg.num_envs, device, limit, **env_kwargs)
    curriculum = TerrainCurriculum(env, cfg.curriculum_init_level) if cfg.curriculum else None
    env = env if curriculum is None else curriculum
    obs_dim = env.single_observation_space.shape[0]
    act_dim = env.single_action_space.shape[0]
    layout = obs_layout(env)
    start_iteration, global_step = 0, 0
    if resume is not None:
        agent, state = load_checkpoint(resume, env, device)
        optimizer = make_optimizer(agent, cfg)
        if state.get("optimizer") is not None:
            optimizer.load_state_dict(state["optimizer"])
        start_iteration, global_step = state["iteration"], state["global_step"]
    else:
        agent = Agent(obs_dim, act_dim, cfg.hidden, cfg.init_log_std).to(device)
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

    N, T = cfg.num_envs, cfg.num_steps
    buf = RolloutBuffer.zeros(T, N, obs_dim, act_dim, device)
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
    t_start = time.perf_counter()
    summary = {}
    iteration = start_iteration
    for iteration in range(start_iteration, n_iter):
        if cfg.anneal_lr:
            frac = 1.0 - iteration / n_iter
            optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
        t_roll = time.perf_counter()
        obs, ended, term_sums = rollout(agent, env, obs, buf, episodes_now, cfg, term_names)
        global_step += N * T * W
        rollout_s = time.perf_counter() - t_roll
        stats, n_updates = update(agent, optimizer, buf, obs, cfg, ddp)

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
        for n, v in zip(term_names, (term_sums / T).tolist()):
            row[f"reward/{n}"] = v
        row.update({k: v / max(n_updates, 1) for k, v in stats.items()})
        row["lr"] = optimizer.param_groups[0]["lr"]
        summary = row
        if log is not None:
            log.write(row)
        bar.update(N * T * W)
        if row["window_episodes"]:
            bar.set_postfix(ret=f"{row['return_mean']:.2f}", succ=f"{row['success_rate']:.2f}",
                            tip=f"{row['tip_over_rate']:.3f}")
        if ddp.main and cfg.print_every and ((iteration + 1) % cfg.print_every == 0
                                             or iteration + 1 == n_iter):
            bar.write(iteration_line(row, n_iter))
        if ddp.main:
            if cfg.checkpoint_every and (iteration + 1) % cfg.checkpoint_every == 0:
                save_checkpoint(out / f"checkpoint_{iteration + 1:05d}.pt", agent, optimizer,
                                cfg, layout, iteration + 1, global_step)
            save_checkpoint(ckpt_path, agent, optimizer, cfg, layout, iteration + 1,
                            global_step)
        if ddp.any(bool(cfg.time_limit_s) and elapsed > cfg.time_limit_s):
            break
    ddp.check_same(list(agent.parameters()) + list(agent.buffers()))
    bar.close()
    env.close()
    if log is not None:
        log.close()
        try:
            plot_learning_curve(out / "progress.csv", out / "learning_curve.png")
        except ImportError:
            pass
    summary = dict(summary)
    summary["checkpoint"] = str(ckpt_path)
    return summary


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train.ppo", description=__doc__.split("\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="named settings under the flags given: " + "; ".join(
                       f"{k}: " + ", ".join(f"{f}={v}" for f, v in s.items())
                       for k, s in PRESETS.items()))
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
    preset = parser.parse_known_args(argv)[0].preset
    if preset is not None:  # the preset's values become defaults: flags given still win
        parser.set_defaults(**{k: list(v) if isinstance(v, tuple) else v
                               for k, v in PRESETS[preset].items()})
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


if __name__ == "__main__":
    raise SystemExit(main())
