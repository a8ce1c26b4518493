"""PPO's settings: :class:`PPOConfig` (each field a ``--flag`` of ``python -m train.ppo``) and
the named :data:`PRESETS`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from offroad_env import check_device

from train.common.agent import ACTION_MAPS
from train.common.inputs import ACTOR_INPUTS, CRITIC_INPUTS
from train.planners.path import PathConfig, parse_options as parse_path_options
from train.planners.rollout import RolloutConfig, parse_options as parse_rollout_options
from train.ppo.teacher import TEACHERS, rollout_options

__all__ = ["PPOConfig", "PRESETS", "preset_flags"]

#: named settings (``--preset NAME``, :meth:`PPOConfig.preset`), measured in BENCHMARKS.md
#: ("Training speed", "Learning"): ``classic``, the defaults before issue 28 (256 envs x 64
#: steps, two 128 x 128 MLPs; the published runs used them); ``fast``, 2.5-3 x the defaults'
#: env-steps/s at N = 4096 (16-step rollouts, two epochs of two large minibatches, 64 x 64),
#: learning worse per env-step and per wall second on the tasks measured; ``suite``, what a
#: ``--suite`` run starts from unless a preset is named (4096 envs, the env compiled, 60 M
#: steps, a 2000-episode window, the ``residual`` action map, the terrain curriculum from
#: levels 0-5, and starts that face their goals within 0.5 rad and lie, with their goals, on
#: ground as flat as the suite's tasks' (``env``: environment options,
#: ``--task-start-heading-spread``, ``--suite-start-slopes``): the 28-minute command of
#: BENCHMARKS.md "Learning", 86.2 / 83.8 / 86.5 % on OffroadBench v2 on seeds 1 / 2 / 3, against
#: 86.4 / 84.9 / 85.8 % without the slope limits, 85.9 / 85.2 / 84.7 % before the rest cap, 84.5 /
#: 84.1 / 84.6 % with uniform start headings and 83.4 / 77.9 % (seeds 1 / 2) for the ``twist``
#: map without the curriculum), a validation every 100 iterations on 256 episodes of
#: held-out worlds (terrain seed 1000: never v2's), which keeps ``best.pt`` and shows the
#: held-out success beside training's while the run goes, and the map planner as a teacher for
#: the first 10 M steps (``teacher="path"``: three seeds 85.3 / 85.6 / 85.4 % on v2, level with
#: 86.0 / 83.9 / 85.4 % without, and 47.4 / 41.4 / 44.4 % on ``verti-bench-v1`` against 34.5 /
#: 30.5 / 35.3 %), with 128 x 128 networks (three seeds with the teacher 86.0 / 86.4 / 85.9 %
#: on v2, each above the three 64 x 64 seeds'; 43.8 / 45.9 / 42.6 % on ``verti-bench-v1``).
#: The defaults themselves (1024 envs x 16 steps, 64 x 64) keep the classic batch and update
#: (16 k samples, 4 epochs x 4 minibatches)
PRESETS = {
    "classic": dict(num_envs=256, num_steps=64, update_epochs=4, num_minibatches=4,
                    hidden=(128, 128)),
    "fast": dict(num_envs=4096, num_steps=16, update_epochs=2, num_minibatches=2,
                 hidden=(64, 64)),
    "suite": dict(num_envs=4096, compile_env=True, total_steps=60_000_000, stats_window=2000,
                  action_map="residual", curriculum=True, curriculum_init_level=5,
                  validate_every=100, validate_episodes=256, compile_after=5, teacher="path",
                  hidden=(128, 128),
                  env={"task": {"start_heading_spread": 0.5}, "suite_start_slopes": True}),
}


def preset_flags(name: str) -> dict:
    """The values of :data:`PRESETS` ``name`` by their ``train.ppo`` argparse dests: its
    environment options (``"env": {"task": {...}}``) as ``env.task.NAME``, tuples as lists."""
    out = {}
    for key, val in PRESETS[name].items():
        if key == "env":
            for part, opts in val.items():
                out.update({f"env.{part}.{k}": v for k, v in opts.items()}
                           if isinstance(opts, dict) else {f"env.{part}": opts})
        else:
            out[key] = list(val) if isinstance(val, tuple) else val
    return out


@dataclass(frozen=True, kw_only=True)
class PPOConfig:
    """Training settings (each is a ``--flag`` of the command line).

    Attributes:
        env_id: a registered id (``offroad_env/OffroadNav-v1``...).
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
        compile_after: with ``compile_env``, the first this many iterations run the eager step
            and the compile happens at this iteration: the first training step comes right
            after the start-up (88 s from the command on a cold 2-core machine, against 339 s
            with the compile first; the compiled step starts about 50 s later). A fixed
            iteration, so a run repeats bit for bit. 0: compile before the first iteration.
        compile_policy: ``torch.compile`` the agent's hot passes (:class:`train.ppo.algorithm.Passes`:
            the rollout's forward pass, and each minibatch's loss with its backward pass): the
            same functions up to float rounding; the first iteration waits for the compile
            (about 20-40 s on a CPU).
        curriculum: train through terrain levels (:class:`wrappers.TerrainCurriculum`; the env's
            terrain must be level maps, as ``OffroadTraverse-v1``'s); the log gains
            ``mean_level``.
        curriculum_init_level: initial levels are drawn in ``[0, this]``.
        env: the environment spec (:mod:`train.common.envconfig`: SimConfig, task and reward
            overrides, terrain generator or map file, or an OffroadBench suite's tasks: then
            ``env_id`` becomes the traverse id) on top of ``env_id``'s config; recorded in
            ``config.json`` and the checkpoint.
        action_map: how the actor's actions become the env's (:data:`train.common.agent.ACTION_MAPS`):
            ``"auto"`` (default) takes ``"twist"`` (speed and turn) for a skid-steered vehicle
            (``dynamics`` ``skid_steer``, or ``rigid_body`` with skid steering) and ``"direct"``
            otherwise; the run records the one it took. ``"residual"`` (skid steering, a
            ``goal`` observation term): the actor corrects the straight-line controller's speed
            and turn, so a fresh agent drives the straight line.
        validate_every: every this many iterations (0: never), and after the last, score the
            agent's mean actions on ``validate_episodes`` episodes of held-out worlds of the
            training env (:mod:`train.ppo.validation`), log ``val_success_rate`` and
            ``val_return_mean``, and keep the best-scoring checkpoint as ``best.pt``. The time
            it takes counts in the run's time (``time_limit_s``).
        validate_episodes: the validation's episodes (one vector env, eager).
        actor_inputs: what the actor reads besides the env's observation: ``"none"``,
            ``"wide_scan"`` (a 6 x 4 m height scan at 0.5 m, 2 m ahead: an elevation map's) or
            ``"cost_scan"`` (the traversability cost on a 6 x 4 m grid at 0.4 m, 2 m ahead: a
            local traversability map's), :mod:`train.common.inputs`, which a trained policy
            computes from the env it runs in (the bench, evaluate:
            :func:`train.common.inputs.policy_of`).
        critic_inputs: what the critic reads besides the actor's inputs: ``"none"`` or
            ``"privileged"`` (an asymmetric critic: the true terrain family and level, the
            ground on the straight line to the goal, the wheels' soil state and the episode's
            elapsed time, :mod:`train.common.inputs`). The actor never reads them. Neither
            input is a preset's: one seed each of the ``--suite`` run scored 81.0 % (wide
            scan) and 84.6 % (privileged critic) on OffroadBench v2, against 86.0 and 83.9 %
            for two seeds without (BENCHMARKS.md, "Methods tried for the other half").
        teacher: ``"none"``, ``"path"`` or ``"rollout"``. ``"path"``: the map planner labels the turn of ``teacher_rows``
            envs at every step and the update regresses the actor's mean turn on the labels,
            with a weight ``teacher_coef`` falling linearly to 0 at ``teacher_steps`` env steps
            (:mod:`train.ppo.teacher`; privileged: training only; the actor reads only its
            own inputs). The ``suite`` preset's: three seeds of the ``--suite`` run scored
            85.3, 85.6 and 85.4 % on OffroadBench v2, level with three without (86.0, 83.9,
            85.4 %), and 47.4, 41.4 and 44.4 % on ``verti-bench-v1`` against 34.5, 30.5 and
            35.3 % (BENCHMARKS.md, "Methods tried for the other half"). With ``wide_scan``
            one seed scored 84.9 % on v2 (its best after 6.6 M steps) and 33.8 % on
            Verti-Bench.
            ``"rollout"``: DAgger from the privileged rollout planner with a 2.5-s look-ahead
            (its speed and turn, :class:`train.ppo.teacher.RolloutTeacher`).
        teacher_rows, teacher_coef, teacher_steps: as above (rows past ``num_envs``: all envs).
        teacher_options: the ``path`` baseline's options (``"lookahead=1.0,cell=0.2"``), or the
            rollout planner's over :data:`train.ppo.teacher.ROLLOUT_TEACHER` (``"H=30"``).
    """

    env_id: str = "offroad_env/OffroadNav-v1"
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
    compile_after: int = 0
    compile_policy: bool = False
    curriculum: bool = False
    curriculum_init_level: int = 0
    env: dict = field(default_factory=dict)
    action_map: str = "auto"
    validate_every: int = 0
    validate_episodes: int = 256
    actor_inputs: str = "none"
    critic_inputs: str = "none"
    teacher: str = "none"
    teacher_rows: int = 256
    teacher_coef: float = 1.0
    teacher_steps: int = 10_000_000
    teacher_options: str = ""

    def __post_init__(self):
        ints = ("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches",
                "stats_window")
        for name in ints:
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        for name in ("print_every", "threads", "validate_every", "compile_after"):
            v = getattr(self, name)
            if int(v) != v or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        if int(self.validate_episodes) != self.validate_episodes or self.validate_episodes < 1:
            raise ValueError(f"validate_episodes must be an int >= 1, got "
                             f"{self.validate_episodes!r}")
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
        if self.env.get("suite") is not None and self.env_id == "offroad_env/OffroadNav-v1":
            object.__setattr__(self, "env_id", "offroad_env/OffroadTraverse-v1")  # a suite's
        if self.action_map not in ("auto",) + ACTION_MAPS:
            raise ValueError(f"action_map must be one of {('auto',) + ACTION_MAPS}, got "
                             f"{self.action_map!r}")
        if self.actor_inputs not in ACTOR_INPUTS:
            raise ValueError(f"actor_inputs must be one of {ACTOR_INPUTS}, got "
                             f"{self.actor_inputs!r}")
        if self.critic_inputs not in CRITIC_INPUTS:
            raise ValueError(f"critic_inputs must be one of {CRITIC_INPUTS}, got "
                             f"{self.critic_inputs!r}")
        if self.teacher not in TEACHERS:
            raise ValueError(f"teacher must be one of {TEACHERS}, got {self.teacher!r}")
        for name in ("teacher_rows", "teacher_steps"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if not (math.isfinite(self.teacher_coef) and self.teacher_coef >= 0):
            raise ValueError(f"teacher_coef must be a finite number >= 0, got "
                             f"{self.teacher_coef!r}")
        if self.teacher == "path":  # the options read as the path baseline reads them
            PathConfig(**parse_path_options(self.teacher_options))
        elif self.teacher == "rollout":  # the rollout planner's, over the teacher's defaults
            RolloutConfig(**parse_rollout_options(rollout_options(self.teacher_options)))
        if not self.hidden or any(int(h) != h or h < 1 for h in self.hidden):
            raise ValueError(f"hidden must be a non-empty list of sizes >= 1, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))  # normalised

    @classmethod
    def preset(cls, name: str, **overrides) -> "PPOConfig":
        """The config of :data:`PRESETS` ``name``, with ``overrides`` on top; ValueError
        naming the presets for an unknown name."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
        values = {**PRESETS[name], **overrides}
        if "env" in PRESETS[name] and "env" in overrides:  # the spec's parts merge
            mine, given = PRESETS[name]["env"], overrides["env"]
            values["env"] = {**mine, **given, **{k: {**mine[k], **given[k]} for k in mine
                                                  if isinstance(given.get(k), dict)}}
        return cls(**values)

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    def num_iterations(self, world: int = 1) -> int:
        """Iterations to ``total_steps`` env steps (over ``world`` ranks' batches), rounded up
        to whole iterations (a run never stops short of what was asked; the trainer says when
        it rounds)."""
        return max(1, -(-self.total_steps // (self.batch_size * world)))
