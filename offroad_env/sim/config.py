"""Every simulation config, frozen and keyword-only, checked where it is built: the simulator
(:class:`SimConfig`), the task (:class:`TaskConfig`), the sensors (:class:`ImuConfig`,
:class:`HeightScanConfig`); and the named configurations of the registered environments
(:func:`make_config`)."""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

import terrain as terrain_pkg
from terrain import HeightMap

from offroad_env.task import task as tasks
from offroad_env.physics.constants import GRAVITY
from offroad_env.physics.ground import METHODS as GROUND_METHODS
from offroad_env.physics.models import MODELS, model_class
from offroad_env.physics.models.ground_following import GroundFollowing
from offroad_env.task.observations import TERM_NAMES as OBS_TERMS
from offroad_env.task.task import REASONS, RewardWeights
from offroad_env.task.terms import check_event_params, user_terms
from offroad_env.physics.vehicle import preset
from offroad_env.task.terrains import family_config, rough_terrain, traverse_terrain
from offroad_env.sim.removed_fields import REMOVED_FIELDS, RemovedFieldError, removed_fields_message

__all__ = ["SimConfig", "TaskConfig", "ImuConfig", "HeightScanConfig", "make_config", "TASKS",
           "rough_terrain", "family_config", "traverse_terrain", "DYNAMICS", "GROUND_METHODS",
           "OBS_TERMS", "check_obs_terms", "REMOVED_FIELDS", "RemovedFieldError", "ID_VERSIONS"]


#: the ground's friction coefficient of a model whose parameters name none
DEFAULT_GROUND_MU = 0.8

#: the built-in vehicle models (``SimConfig.dynamics``); a plug-in registered later is accepted
#: too (:data:`offroad_env.physics.models.MODELS`)
DYNAMICS = tuple(MODELS)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_range(name, value, low=-math.inf):
    lo, hi = value
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or lo < low:
        raise ValueError(f"{name} must be a finite (min, max) with {low} <= min <= max, "
                         f"got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TaskConfig:
    """What the vehicle is asked to do.

    Attributes:
        kind: ``"nav"`` (reach a goal) or ``"velocity"`` (track a commanded speed and yaw rate).
        goal_distance: range of the spawn-to-goal distance [m] (nav).
        goal_radius: the goal counts as reached within this distance [m] (nav).
        spawn_margin: spawns and goals keep this far from the map border [m].
        start_heading_spread: None (default): a start's heading is uniform, independent of the
            goal; ``s`` in ``[0, pi]`` [rad]: the goal's bearing plus U(-s, s) (nav; 0: facing it).
        command_speed, command_yaw_rate: ranges of the commands [m/s], [rad/s] (velocity).
        weights: reward weights.
        tip_rule: ``"force_angle"`` (default): tip-over is a roll or pitch past the static
            limits (:func:`~offroad_env.task.task.static_tip_limits`), lost support, or the
            force-angle stability margin negative for ``tip_hold_time`` [s] (the time a body
            needs to start rolling over: a one-step spike of a kinematic model's speed change
            is no tip-over); the margin takes gravity and the driving's inertial force, as far
            as friction transmits them, about the true contact points
            (:mod:`offroad_env.physics.stability`). ``"limits"``: the static limits and lost
            support only (driving never tips a vehicle then).
        stuck_time: end an episode as ``stuck`` (a truncation) after this long [s] without the
            goal coming ``stuck_progress`` [m] nearer than its closest yet (nav; None: never).
        stuck_speed: None (default): that rule; a speed [m/s]: Verti-Bench's rule instead,
            ``stuck_time`` of consecutive steps slower than this (``hypot`` of ``vel_b``'s
            first two; a faster step starts the count again).
        max_start_slope_deg: None (default): spawns and goals wherever they fit; a number in
            ``(0, 90]`` [deg], or a tuple of one per map of the stack: drawn spawns and goals lie
            where the plane fitted to the ground within 1 m is at most this steep, as
            OffroadBench's tasks do (:func:`~offroad_env.core.spawn.spawn_with_redraws`).
    """

    kind: str = "nav"
    goal_distance: tuple[float, float] = (4.0, 12.0)
    goal_radius: float = 0.5
    spawn_margin: float = 3.0
    start_heading_spread: float | None = None
    command_speed: tuple[float, float] = (0.0, 1.0)
    command_yaw_rate: tuple[float, float] = (-0.5, 0.5)
    weights: tasks.RewardWeights = field(default_factory=tasks.RewardWeights)
    tip_rule: str = "force_angle"
    tip_hold_time: float = 0.2
    stuck_time: float | None = None
    stuck_progress: float = 0.1
    stuck_speed: float | None = None
    max_start_slope_deg: float | tuple[float, ...] | None = None

    def __post_init__(self):
        if self.kind not in ("nav", "velocity"):
            raise ValueError(f"task kind must be 'nav' or 'velocity', got {self.kind!r}")
        if self.tip_rule not in tasks.TIP_RULES:
            raise ValueError(f"tip_rule must be one of {tasks.TIP_RULES}, got {self.tip_rule!r}")
        if not (_finite(self.tip_hold_time) and self.tip_hold_time >= 0):
            raise ValueError(f"tip_hold_time must be a finite number >= 0 [s], got "
                             f"{self.tip_hold_time!r}")
        t, p, s = self.stuck_time, self.stuck_progress, self.start_heading_spread
        if t is not None and not (_finite(t) and t > 0):
            raise ValueError(f"stuck_time must be a number > 0 [s] or None, got {t!r}")
        if not (_finite(p) and p >= 0):
            raise ValueError(f"stuck_progress must be a finite number >= 0 [m], got {p!r}")
        if (v := self.stuck_speed) is not None and not (_finite(v) and v > 0):
            raise ValueError(f"stuck_speed must be None or a number > 0 [m/s], got {v!r}")
        if v is not None and t is None:
            raise ValueError(f"stuck_speed ({v!r} m/s) needs stuck_time (how long below it)")
        if s is not None and not (_finite(s) and 0 <= s <= math.pi):
            raise ValueError(f"start_heading_spread must be None or a number in [0, pi] [rad], "
                             f"got {s!r}")
        lim = self.max_start_slope_deg
        if isinstance(lim, list):  # from JSON
            object.__setattr__(self, "max_start_slope_deg", lim := tuple(lim))
        vals = lim if isinstance(lim, tuple) else () if lim is None else (lim,)
        if lim == () or not all(_finite(v) and 0 < v <= 90 for v in vals):
            raise ValueError(f"max_start_slope_deg must be None, a number in (0, 90] [deg] or a "
                             f"non-empty tuple of such, got {lim!r}")
        for name in ("stuck_time", "start_heading_spread"):  # both need a goal
            if getattr(self, name) is not None and self.kind != "nav":
                raise ValueError(f"{name} needs task kind 'nav' (a goal), got kind {self.kind!r}")
        _check_range("goal_distance", self.goal_distance, 0.0)
        _check_range("command_speed", self.command_speed)
        _check_range("command_yaw_rate", self.command_yaw_rate)
        if not (self.goal_radius > 0 and self.spawn_margin >= 0):
            raise ValueError("goal_radius must be > 0 and spawn_margin >= 0")


@dataclass(frozen=True, kw_only=True)
class ImuConfig:
    """The IMU: accelerometer (specific force) and gyro, in a sensor frame parallel to base_link
    at ``offset`` [m] from its origin.

    Attributes:
        offset: sensor position in base_link [m].
        accel_noise, gyro_noise: white-noise standard deviation [m/s^2], [rad/s].
        accel_bias_walk, gyro_bias_walk: bias random-walk intensity [unit / sqrt(s)].
    """

    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    accel_noise: float = 0.0
    gyro_noise: float = 0.0
    accel_bias_walk: float = 0.0
    gyro_bias_walk: float = 0.0

    def __post_init__(self):
        for f in fields(self):
            if f.name == "offset":
                if len(self.offset) != 3 or not all(math.isfinite(v) for v in self.offset):
                    raise ValueError(f"imu offset must be 3 finite numbers, got {self.offset!r}")
            elif not (math.isfinite(getattr(self, f.name)) and getattr(self, f.name) >= 0):
                raise ValueError(f"{f.name} must be finite and >= 0, got {getattr(self, f.name)}")


@dataclass(frozen=True, kw_only=True)
class HeightScanConfig:
    """A yaw-aligned grid of terrain heights around base_link, relative to its height.

    Attributes:
        size: ``(length, width)`` of the grid [m], centred ``forward_offset`` ahead.
        resolution: spacing [m].
        forward_offset: [m].
        clip: heights are clipped to +-clip [m] (the observation bound).
    """

    size: tuple[float, float] = (1.6, 1.0)
    resolution: float = 0.2
    forward_offset: float = 0.3
    clip: float = 2.0

    def __post_init__(self):
        if (len(self.size) != 2 or not all(_finite(v) and v >= 0 for v in self.size)):
            raise ValueError(f"height_scan size must be two finite lengths >= 0 [m], got "
                             f"{self.size!r}")
        for name in ("resolution", "clip"):
            v = getattr(self, name)
            if not (_finite(v) and v > 0):
                raise ValueError(f"height_scan {name} must be a finite number > 0, got {v!r}")
        if not _finite(self.forward_offset):
            raise ValueError(f"height_scan forward_offset must be finite, got "
                             f"{self.forward_offset!r}")

    @property
    def shape(self) -> tuple[int, int]:
        return (int(round(self.size[0] / self.resolution)) + 1,
                int(round(self.size[1] / self.resolution)) + 1)


def check_obs_terms(terms) -> None:
    """ValueError unless ``terms`` are distinct names of :data:`~offroad_env.task.observations.TERM_NAMES`."""
    unknown = [t for t in terms if t not in OBS_TERMS]
    if unknown or len(set(terms)) != len(terms):
        raise ValueError(f"obs_terms must be distinct names from {OBS_TERMS}, got {terms!r}")


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    """The whole simulator. Frozen: build a new one (``dataclasses.replace``) to change it.

    Attributes:
        vehicle: preset name (``husky``, ``six_wheel_rover``, ``eight_wheel_rover``).
        dt: control step [s].
        dynamics: the vehicle model: ``"unicycle"``, ``"ackermann"``, ``"skid_steer"`` or any
            registered one (:data:`offroad_env.physics.models.MODELS`).
        dynamics_params: the vehicle model's parameters, of its ``Params`` type (None: its
            defaults): :class:`~offroad_env.physics.dynamics.UnicycleParams` (the integrator,
            the ground's friction), :class:`~offroad_env.physics.dynamics.AckermannParams`,
            :class:`~offroad_env.physics.skid.SkidSteerParams` (substeps included),
            :class:`~offroad_env.physics.rigid_params.RigidBodyParams`.
        max_speed: speed at action 1 [m/s]; max_yaw_rate: yaw rate at action 1 (unicycle)
            [rad/s].
        ground: ``"four_wheel"`` or ``"rigid_contact"``; d_eps: contact threshold [m], >= 0.
        terrain: generator config of the maps; num_maps: maps in the stack (one drawn per
            episode); terrain_seed: the maps' seed (the env seed draws spawns, not maps). A
            :class:`terrain.LevelsConfig` gives every map of its families and levels
            (``num_maps`` is then not used).
        heightmap: use this map (or stack) instead of generating.
        task, imu, height_scan: see their classes; height_scan None: no scan.
        obs_terms: observation terms, in order (see
            :data:`~offroad_env.task.observations.TERM_NAMES`); "height_scan" is added (last)
            when ``height_scan`` is set, and refused without it.
        nan_action: ``"raise"`` (ValueError naming the env indices) or ``"zero"`` (replaced by 0
            and reported in ``info["bad_action"]``).
        gravity: [m/s^2], the one gravity every model reads (ground loads, skid-steer slopes,
            IMU).
        action_repeat: physics steps of ``dt`` per control step, each with the same action;
            the rewards add up, and an environment that terminates stops there (its state is
            frozen for the rest of the control step). The time limit counts control steps;
            the IMU reads the last physics step.
        rewards, terminations, observations, events: your own terms, ``{name:
            RewardTerm | TerminationTerm | ObservationTerm | EventTerm}``, beside the built-in
            ones (:mod:`offroad_env.task.terms`; a name may not be a built-in one).
    """

    vehicle: str = "husky"
    dt: float = 0.05
    dynamics: str = "unicycle"
    dynamics_params: object | None = None
    max_speed: float = 1.0
    max_yaw_rate: float = 1.0
    ground: str = "four_wheel"
    d_eps: float = 0.01
    terrain: terrain_pkg.TerrainConfig = field(default_factory=lambda: terrain_pkg.PerlinConfig(
        size=(40.0, 40.0), resolution=(0.1, 0.1), octaves=4, frequency=0.08, amplitude=0.6))
    num_maps: int = 4
    terrain_seed: int = 0
    heightmap: HeightMap | None = field(default=None, compare=False, repr=False)
    task: TaskConfig = field(default_factory=TaskConfig)
    imu: ImuConfig = field(default_factory=ImuConfig)
    height_scan: HeightScanConfig | None = None
    obs_terms: tuple[str, ...] = ("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu",
                                  "goal", "prev_action")
    nan_action: str = "raise"
    gravity: float = GRAVITY
    action_repeat: int = 1
    rewards: dict = field(default_factory=dict)
    terminations: dict = field(default_factory=dict)
    observations: dict = field(default_factory=dict)
    events: dict = field(default_factory=dict)

    def __new__(cls, *args, **kwargs):
        removed = [k for k in REMOVED_FIELDS if k in kwargs]
        if removed:  # before the dataclass's own "unexpected keyword argument"
            raise RemovedFieldError(removed_fields_message(kwargs.get("dynamics", "unicycle"),
                                                           removed))
        return super().__new__(cls)

    def __post_init__(self):
        vehicle = preset(self.vehicle)  # raises on an unknown name
        model = model_class(self.dynamics)  # ValueError naming the registered models
        if (vehicle.casters is not None and self.ground == "four_wheel"
                and issubclass(model, GroundFollowing)):
            raise ValueError(f"vehicle {vehicle.name!r} stands on casters: ground='four_wheel' "
                             "places a wheel base x track rectangle, which it has not; use "
                             "ground='rigid_contact' (its contacts as they are)")
        if self.dynamics_params is not None and (
                model.Params is None or not isinstance(self.dynamics_params, model.Params)):
            want = "none" if model.Params is None else f"a {model.Params.__name__}"
            raise ValueError(f"dynamics_params of model {self.dynamics!r} must be {want}, got "
                             f"{self.dynamics_params!r}")
        if self.ground not in GROUND_METHODS:
            raise ValueError(f"ground must be one of {GROUND_METHODS}, got {self.ground!r}")
        for name in ("dt", "max_speed", "max_yaw_rate", "gravity"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if not (_finite(self.d_eps) and self.d_eps >= 0):
            raise ValueError(f"d_eps must be a finite number >= 0 [m], got {self.d_eps!r}")
        if int(self.action_repeat) != self.action_repeat or self.action_repeat < 1:
            raise ValueError(f"action_repeat must be an int >= 1, got {self.action_repeat!r}")
        seed = self.terrain_seed
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"terrain_seed must be an int >= 0, got {seed!r}")
        if int(self.num_maps) != self.num_maps or self.num_maps < 1:
            raise ValueError(f"num_maps must be an int >= 1, got {self.num_maps!r}")
        if self.heightmap is not None and not isinstance(self.heightmap, HeightMap):
            raise ValueError(f"heightmap must be a terrain.HeightMap, got "
                             f"{type(self.heightmap).__name__}; wrap an array as "
                             "terrain.HeightMap(heights, resolution)")
        if not self.terms:
            raise ValueError("obs_terms is empty (and no height_scan): give at least one of "
                             f"{OBS_TERMS}")
        check_obs_terms(self.obs_terms)
        if "height_scan" in self.obs_terms and self.height_scan is None:
            raise ValueError("obs_terms names 'height_scan', which needs the scan's config: "
                             "give height_scan=HeightScanConfig(...) (its size, resolution and "
                             "offset; the term then comes last), or drop the name")
        for kind, builtin in (("rewards", tuple(RewardWeights.__dataclass_fields__)),
                              ("terminations", tuple(REASONS.values())),
                              ("observations", OBS_TERMS), ("events", ())):
            object.__setattr__(self, kind, user_terms(kind, getattr(self, kind), builtin))
        check_event_params(self.events, model)
        if self.nan_action not in ("raise", "zero"):
            raise ValueError(f"nan_action must be 'raise' or 'zero', got {self.nan_action!r}")

    @property
    def ground_mu(self) -> float:
        """The ground's friction coefficient where no per-environment value is set: the
        model's parameters' ``ground_mu`` (skid-steer: ``mu`` on hard ground, ``mu_peak`` on
        soft soil) or ``mu``, else :data:`DEFAULT_GROUND_MU`."""
        p = self.dynamics_params
        if p is None:
            P = model_class(self.dynamics).Params
            p = None if P is None else P()
        mu = getattr(p, "ground_mu", getattr(p, "mu", None))
        return DEFAULT_GROUND_MU if mu is None else float(mu)

    @property
    def terms(self) -> tuple[str, ...]:
        """The observation terms in order, ``height_scan`` last when configured."""
        t = tuple(x for x in self.obs_terms if x != "height_scan")
        return t + ("height_scan",) if self.height_scan is not None else t


TASKS = ("nav", "velocity", "nav_rough", "traverse")


#: the versions of the registered ids: 0 is 0.1's reward, where falling into a hole or off the
#: map cost nothing; 1 adds the ``fall`` cost (``RewardWeights.fall``, -10 as a tip-over)
ID_VERSIONS = (0, 1)


def make_config(task: str | TaskConfig = "nav", config: SimConfig | None = None, *,
                base_task: str | None = None, version: int = 1, **overrides) -> SimConfig:
    """The :class:`SimConfig` of a task, with fields overridden by keyword.

    ``task="nav"``: reach a goal (observations include the goal in the body frame; reward:
    progress, goal bonus, tilt, rates, tip-over). ``task="velocity"``: track a commanded forward
    speed and yaw rate (the command replaces the goal in the observations; reward: tracking).
    ``task="nav_rough"``: nav on :func:`rough_terrain` with a height scan in the observations.
    ``task="traverse"``: nav across the terrain families' levels (:func:`traverse_terrain`,
    scaled for the configured vehicle), the rigid-contact rest (the Husky has no suspension),
    tip-over by the force-angle rule, the stability margin observed and rewarded, and a height
    scan.
    ``config``: start from this config instead of the task's default. ``terrain=`` may also be
    a map file path, a generator name, a :class:`terrain.HeightMap`, or ``(heights (ny, nx)
    array, resolution)``. A :class:`TaskConfig`
    as ``task`` overrides the config's ``task`` field; the rest of the config is that of the
    named ``base_task`` (the registered ids set it to their own task, so that
    ``gym.make("offroad_env/OffroadTraverse-v1", task=TaskConfig(...))`` keeps the traverse
    terrain and observations), or of the TaskConfig's ``kind`` where none is named.
    ``version``: the registered id's version (:data:`ID_VERSIONS`); 0 sets the named task's
    ``fall`` weight to 0, the reward of the ``-v0`` ids (a TaskConfig or ``config`` you pass is
    used as given).
    """
    if version not in ID_VERSIONS:
        raise ValueError(f"version must be one of {ID_VERSIONS}, got {version!r}")
    if config is not None and not isinstance(config, SimConfig):
        raise ValueError(f"config must be a SimConfig, got {config!r}; name a task with task="
                         f"{TASKS}")
    if base_task is not None and base_task not in TASKS:
        raise ValueError(f"unknown base_task {base_task!r}; known: {TASKS}")
    if isinstance(task, TaskConfig):  # a TaskConfig given as the ``task`` field override
        overrides["task"] = task
        if base_task is not None:
            kind = make_config(base_task).task.kind
            if task.kind != kind:
                raise ValueError(f"a TaskConfig of kind {task.kind!r} cannot replace the task of "
                                 f"{base_task!r} (kind {kind!r}); pass task={task.kind!r} or a "
                                 f"TaskConfig of kind {kind!r}")
        task = base_task or task.kind
    if config is not None:
        base = config
    elif task == "nav":
        base = SimConfig()
    elif task == "velocity":
        base = SimConfig(
            task=TaskConfig(kind="velocity", weights=RewardWeights(
                progress=0.0, goal_reached=0.0, tracking=1.0)),
            obs_terms=("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu", "command",
                       "prev_action"))
    elif task == "traverse":
        base = SimConfig(
            terrain=traverse_terrain(overrides.get("vehicle", "husky")), ground="rigid_contact",
            task=TaskConfig(goal_distance=(8.0, 12.0), spawn_margin=2.0, tip_rule="force_angle",
                            weights=RewardWeights(stability=-0.25, time=-0.5)),
            height_scan=HeightScanConfig(size=(2.4, 1.6), resolution=0.2, forward_offset=0.8),
            obs_terms=("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu", "goal",
                       "prev_action", "stability"))
    elif task == "nav_rough":
        base = SimConfig(terrain=rough_terrain(), height_scan=HeightScanConfig(
            size=(2.4, 1.6), resolution=0.2, forward_offset=0.8))
    else:
        raise ValueError(f"unknown task {task!r}; known: {TASKS}")
    if version == 0 and config is None:  # the 0.1 reward: falling cost nothing
        base = dataclasses.replace(base, task=dataclasses.replace(
            base.task, weights=dataclasses.replace(base.task.weights, fall=0.0)))
    terrain_arg = overrides.get("terrain")
    if isinstance(terrain_arg, HeightMap):
        overrides["heightmap"] = overrides.pop("terrain")
    elif (isinstance(terrain_arg, tuple) and len(terrain_arg) == 2
          and hasattr(terrain_arg[0], "shape")):  # (2-D heights array, resolution)
        overrides.pop("terrain")
        overrides["heightmap"] = HeightMap(terrain_arg[0], terrain_arg[1])
    elif isinstance(terrain_arg, (str, os.PathLike)):  # a generator name or a map file
        if str(terrain_arg) in terrain_pkg.GENERATORS:
            overrides["terrain"] = terrain_pkg.GENERATORS[str(terrain_arg)][0]()
        else:
            path = Path(terrain_arg)
            if not path.exists():
                raise terrain_pkg.TerrainFileError(
                    f"terrain {str(terrain_arg)!r} is neither a map file (no such file) nor a "
                    f"generator; generators: {sorted(terrain_pkg.GENERATORS)}")
            if path.is_dir():
                raise terrain_pkg.TerrainFileError(
                    f"terrain {str(terrain_arg)!r} is a directory; give a map file (GeoTIFF, "
                    "PNG, .npy) or a generator name")
            overrides.pop("terrain")
            overrides["heightmap"] = terrain_pkg.load(terrain_arg)
    removed = [k for k in REMOVED_FIELDS if k in overrides]
    if removed:
        raise RemovedFieldError(removed_fields_message(overrides.get("dynamics", base.dynamics),
                                                       removed))
    names = {f.name for f in dataclasses.fields(SimConfig)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        # a TypeError in Python's own words, as any callable gives (TorchRL's GymEnv retries
        # without its frameskip keyword on exactly this)
        raise TypeError(f"make_config() got an unexpected keyword argument {unknown[0]!r} "
                        f"(unknown config field(s) {unknown}; known: {sorted(names)})")
    return dataclasses.replace(base, **overrides) if overrides else base
