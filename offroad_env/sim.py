"""The batched simulator: state tensors and one step chaining dynamics, ground following, IMU,
observations, rewards and terminations for N environments. No per-environment Python loop.

The Gymnasium classes (:mod:`offroad_env.vector_env`, :mod:`offroad_env.env`) own a
:class:`Simulator` and add the Gymnasium contract (spaces, autoreset, time limit, numpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
import torch

import terrain as terrain_pkg
from terrain import HeightMap

from . import rng as rngmod
from . import tasks
from .dynamics import (AckermannParams, SkidSteerParams, SkidSteerState, ackermann_step,
                       side_targets, skid_steer_step, unicycle_step)
from .ground import merge_rows, place
from .imu import angular_rate, specific_force
from .rotations import matvec3
from .vehicle import VehicleBatch, preset

__all__ = ["SimConfig", "TaskConfig", "ImuConfig", "HeightScanConfig", "Simulator",
           "OBS_TERMS", "DYNAMICS", "GROUND_METHODS"]

DYNAMICS = ("unicycle", "ackermann", "skid_steer")
GROUND_METHODS = ("four_wheel", "rigid_contact")
OBS_TERMS = ("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu", "goal", "command",
             "prev_action", "height_scan")


def _check_range(name, value, low=-math.inf):
    lo, hi = value
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or lo < low:
        raise ValueError(f"{name} must be a finite (min, max) with {low} <= min <= max, "
                         f"got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TaskConfig:
    """What the vehicle is asked to do.

    Attributes:
        kind: ``"nav"`` (reach a goal across terrain) or ``"velocity"`` (track a commanded speed
            and yaw rate).
        goal_distance: range of the spawn-to-goal distance [m] (nav).
        goal_radius: the goal counts as reached within this distance [m] (nav).
        spawn_margin: spawns and goals keep this far from the map border [m].
        command_speed, command_yaw_rate: ranges of the commands [m/s], [rad/s] (velocity).
        weights: reward weights.
    """

    kind: str = "nav"
    goal_distance: tuple[float, float] = (4.0, 12.0)
    goal_radius: float = 0.5
    spawn_margin: float = 3.0
    command_speed: tuple[float, float] = (0.0, 1.0)
    command_yaw_rate: tuple[float, float] = (-0.5, 0.5)
    weights: tasks.RewardWeights = field(default_factory=tasks.RewardWeights)

    def __post_init__(self):
        if self.kind not in ("nav", "velocity"):
            raise ValueError(f"task kind must be 'nav' or 'velocity', got {self.kind!r}")
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

    @property
    def shape(self) -> tuple[int, int]:
        return (int(round(self.size[0] / self.resolution)) + 1,
                int(round(self.size[1] / self.resolution)) + 1)


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    """The whole simulator. Frozen: build a new one (``dataclasses.replace``) to change it.

    Attributes:
        vehicle: preset name (``husky``, ``six_wheel_rover``, ``eight_wheel_rover``).
        dt: control step [s].
        dynamics: ``"unicycle"``, ``"ackermann"`` or ``"skid_steer"``.
        max_speed: speed at action 1 [m/s]; max_yaw_rate: yaw rate at action 1 (unicycle)
            [rad/s].
        ackermann, skid: model parameters; substeps: skid-steer substeps per step (the model is
            stable up to 10 ms substeps, see BENCHMARKS.md).
        ground: ``"four_wheel"`` or ``"rigid_contact"``; d_eps: contact threshold [m].
        terrain: generator config of the maps; num_maps: maps in the stack (one drawn per
            episode); terrain_seed: the maps' seed (the env seed draws spawns, not maps).
        heightmap: use this map (or stack) instead of generating.
        task, imu, height_scan: see their classes; height_scan None: no scan.
        obs_terms: observation terms, in order (see ``OBS_TERMS``); "height_scan" is added
            when ``height_scan`` is set.
        nan_action: ``"raise"`` (ValueError naming the env indices) or ``"zero"`` (replaced by 0
            and reported in ``info["bad_action"]``).
        gravity: [m/s^2].
        action_repeat: physics steps of ``dt`` per control step, each with the same action;
            the rewards add up, and an environment that terminates stops there (its state is
            frozen for the rest of the control step). The time limit counts control steps;
            the IMU reads the last physics step.
    """

    vehicle: str = "husky"
    dt: float = 0.05
    dynamics: str = "unicycle"
    max_speed: float = 1.0
    max_yaw_rate: float = 1.0
    ackermann: AckermannParams = field(default_factory=AckermannParams)
    skid: SkidSteerParams = field(default_factory=SkidSteerParams)
    substeps: int = 5
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
    gravity: float = 9.81
    action_repeat: int = 1

    def __post_init__(self):
        preset(self.vehicle)  # raises on an unknown name
        if self.dynamics not in DYNAMICS:
            raise ValueError(f"dynamics must be one of {DYNAMICS}, got {self.dynamics!r}")
        if self.ground not in GROUND_METHODS:
            raise ValueError(f"ground must be one of {GROUND_METHODS}, got {self.ground!r}")
        for name in ("dt", "max_speed", "max_yaw_rate", "gravity"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if int(self.substeps) != self.substeps or self.substeps < 1:
            raise ValueError(f"substeps must be an int >= 1, got {self.substeps!r}")
        if int(self.action_repeat) != self.action_repeat or self.action_repeat < 1:
            raise ValueError(f"action_repeat must be an int >= 1, got {self.action_repeat!r}")
        if int(self.num_maps) != self.num_maps or self.num_maps < 1:
            raise ValueError(f"num_maps must be an int >= 1, got {self.num_maps!r}")
        unknown = [t for t in self.obs_terms if t not in OBS_TERMS]
        if unknown or len(set(self.obs_terms)) != len(self.obs_terms):
            raise ValueError(f"obs_terms must be distinct names from {OBS_TERMS}, got "
                             f"{self.obs_terms!r}")
        if self.nan_action not in ("raise", "zero"):
            raise ValueError(f"nan_action must be 'raise' or 'zero', got {self.nan_action!r}")

    @property
    def terms(self) -> tuple[str, ...]:
        t = tuple(x for x in self.obs_terms if x != "height_scan")
        return t + ("height_scan",) if self.height_scan is not None else t


def _wrap(a):
    return torch.remainder(a + math.pi, 2 * math.pi) - math.pi


class Simulator:
    """N environments as tensors on one device.

    Public state (``(N,)`` unless noted): ``x, y, yaw`` planar rear-axle pose [m, rad];
    ``contact`` the last :class:`~offroad_env.ground.GroundContact`; ``goal`` ``(N, 2)``;
    ``command`` ``(N, 2)``; ``steps`` steps in the episode; ``map_index``.
    """

    def __init__(self, cfg: SimConfig, num_envs: int, device="cpu", dtype=torch.float32,
                 compile: bool = False):
        if int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.cfg = cfg
        self.n = int(num_envs)
        self.device = torch.device(device)
        self.dtype = dtype
        self.vehicle = preset(cfg.vehicle)
        self.K = self.vehicle.num_wheels
        if cfg.heightmap is not None:
            maps = cfg.heightmap
        else:
            gen = np.random.default_rng(cfg.terrain_seed)
            maps = HeightMap.stack([terrain_pkg.make_heightmap(cfg.terrain, gen)
                                    for _ in range(cfg.num_maps)])
        self.maps = maps.to(device=self.device, dtype=dtype)
        self.roll_limit, self.pitch_limit = tasks.static_tip_limits(self.vehicle)
        self.action_dim = 2
        self._layout = self._build_layout()
        self.obs_dim = sum(d for _, d, _, _ in self._layout)
        self._bounds_t = [(torch.as_tensor(lo, dtype=dtype, device=self.device),
                           torch.as_tensor(hi, dtype=dtype, device=self.device))
                          for _, _, lo, hi in self._layout]
        z = lambda *s: torch.zeros(*((self.n,) + s), dtype=dtype, device=self.device)  # noqa
        self.x, self.y, self.yaw = z(), z(), z()
        self.steer = z()
        self.v, self.w = z(), z()  # commanded body rates of the kinematic models
        self.skid = SkidSteerState.zeros(self.n, self.K, dtype, self.device)
        self.goal, self.command = z(2), z(2)
        self.prev_action = z(self.action_dim)
        self.prev_distance = z()
        self.keys = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        self.counters = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        self.map_index = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        self.steps = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        self.sensor_pos, self.sensor_vel = z(3), z(3)
        self.prev_rot = torch.eye(3, dtype=dtype, device=self.device).expand(self.n, 3, 3).clone()
        self.accel, self.gyro = z(3), z(3)
        self.accel_bias, self.gyro_bias = z(3), z(3)
        self.contact = None
        #: per-environment parameters (``set_params``); None: the nominal vehicle and sensors
        self.params: dict | None = None
        self._veh = self.vehicle
        #: functions called as ``hook(mask)`` at the start of every reset, autoresets included
        #: (domain randomization draws its values there)
        self.reset_hooks: list = []
        #: the step after action checks; ``torch.compile``d with ``compile=True`` (the eager
        #: and compiled steps are tested to agree)
        self.compiled = bool(compile)
        self._advance_fn = (torch.compile(self._advance, dynamic=False) if compile
                            else self._advance)
        #: compiled: the cold placement of reset environments, in chunks of a fixed size
        #: (fixed shapes: one compile; eager, a cold rigid placement of a few environments is
        #: mostly per-op overhead, ~2 ms)
        self._cold_chunk = min(self.n, 64)
        #: partial resets compute only the reset rows (reading their indices on the host); off
        #: on accelerators, where every row is computed and the reset ones kept (no host sync)
        self.subset_resets = self.device.type == "cpu"
        self._cold_fn = (torch.compile(self._place_cold, dynamic=False) if compile else None)

    # ------------------------------------------------------------------ observation layout
    def _build_layout(self):
        """``[(name, dim, low, high)]`` from the configured terms: the one place sizes live."""
        cfg = self.cfg
        sx, sy = self.maps.size
        far = math.hypot(sx, sy)
        vmax = 2.0 * cfg.max_speed
        wmax = 2.0 * max(cfg.max_yaw_rate, cfg.max_speed / max(self.vehicle.track_width, 1e-3))
        g = cfg.gravity
        spec = {
            "z_rel": (1, -2.0, 2.0),
            "roll_pitch": (2, -math.pi / 2, math.pi / 2),
            "yaw_sincos": (2, -1.0, 1.0),
            "body_velocity": (3, [-vmax, -vmax, -wmax], [vmax, vmax, wmax]),
            "imu": (6, [-10 * g] * 3 + [-20.0] * 3, [10 * g] * 3 + [20.0] * 3),
            "goal": (2, -far, far),
            "command": (2, [cfg.task.command_speed[0], cfg.task.command_yaw_rate[0]],
                        [cfg.task.command_speed[1], cfg.task.command_yaw_rate[1]]),
            "prev_action": (self.action_dim, -1.0, 1.0),
        }
        if cfg.height_scan is not None:
            nx, ny = cfg.height_scan.shape
            c = cfg.height_scan.clip
            spec["height_scan"] = (nx * ny, -c, c)
        out = []
        for name in cfg.terms:
            d, lo, hi = spec[name]
            lo = np.broadcast_to(np.asarray(lo, dtype=np.float32), (d,)).copy()
            hi = np.broadcast_to(np.asarray(hi, dtype=np.float32), (d,)).copy()
            out.append((name, d, lo, hi))
        return out

    @property
    def obs_layout(self):
        """``[(term, start, stop)]`` slices of the observation vector."""
        out, i = [], 0
        for name, d, _, _ in self._layout:
            out.append((name, i, i + d))
            i += d
        return out

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.concatenate([lo for _, _, lo, _ in self._layout]),
                np.concatenate([hi for _, _, _, hi in self._layout]))

    # ------------------------------------------------------------------ per-env parameters
    PARAMS = ("mass", "com", "wheel_radius", "friction", "accel_noise", "gyro_noise")

    def set_params(self, mask: torch.Tensor, **values) -> None:
        """Set per-environment physical parameters of the masked environments.

        Keywords (tensors over all N environments; only masked rows are used): ``mass`` ``(N,)``
        [kg]; ``com`` ``(N, 3)`` centre of mass in the rear-axle frame [m]; ``wheel_radius``
        ``(N,)`` [m]; ``friction`` ``(N,)`` (the skid-steer ``mu`` on hard ground, ``mu_peak``
        on soft soil); ``accel_noise`` / ``gyro_noise`` ``(N,)`` white-noise standard deviations
        [m/s^2], [rad/s]. Unset parameters keep their value (at first, the nominal vehicle's
        and ``cfg``'s). Ground following, loads, tip-over limits, skid-steer dynamics and the
        IMU use them from the next placement on.
        """
        unknown = sorted(set(values) - set(self.PARAMS))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; known: {self.PARAMS}")
        if self.params is None:
            v, cfg = self.vehicle, self.cfg
            full = lambda x: torch.full((self.n,), float(x), dtype=self.dtype,  # noqa: E731
                                        device=self.device)
            soil_mu = cfg.skid.mu if cfg.skid.soil == "hard" else cfg.skid.mu_peak
            self.params = {"mass": full(v.mass), "wheel_radius": full(v.wheel_radius),
                           "com": torch.tensor(v.com, dtype=self.dtype,
                                               device=self.device).expand(self.n, 3).clone(),
                           "friction": full(soil_mu), "accel_noise": full(cfg.imu.accel_noise),
                           "gyro_noise": full(cfg.imu.gyro_noise)}
        mask = torch.as_tensor(mask, device=self.device)
        for name, val in values.items():
            if val is None:
                continue
            val = torch.as_tensor(val, dtype=self.dtype, device=self.device)
            shape = (self.n, 3) if name == "com" else (self.n,)
            if val.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {tuple(val.shape)}")
            sel = val[mask]
            low = 0.0 if name != "com" else -math.inf
            if not bool(torch.isfinite(sel).all()) or bool((sel < low).any()) or (
                    name == "mass" and bool((sel <= 0).any())):
                raise ValueError(f"{name} must be finite and {'> 0' if name == 'mass' else '>= 0'}"
                                 f" in every environment, got {sel.tolist()[:8]}")
            m = mask.view(-1, 1) if name == "com" else mask
            self.params[name] = torch.where(m, val, self.params[name])
        p = self.params
        self._veh = VehicleBatch(self.vehicle, p["mass"], p["com"], p["wheel_radius"])
        self.roll_limit, self.pitch_limit = tasks.static_tip_limits(self._veh)

    # ------------------------------------------------------------------ reset
    def set_keys(self, keys: torch.Tensor, mask: torch.Tensor):
        """Give the masked environments new random streams (keys) and restart their counters."""
        self.keys = torch.where(mask, keys.to(self.device), self.keys)
        self.counters = torch.where(mask, torch.zeros_like(self.counters), self.counters)

    def _draw(self, n: int, idx: torch.Tensor | None, use: torch.Tensor) -> torch.Tensor:
        """``n`` uniforms for each selected environment (``idx``; None: all N), advancing the
        counters of those where ``use`` (bool, one per selected environment) is set. The draws
        are counter-based, so a selection gives the same numbers as the full batch's rows."""
        if idx is None:
            u = rngmod.uniform(self.keys, self.counters, n, self.dtype)
            self.counters = self.counters + use.to(torch.int64)
            return u
        u = rngmod.uniform(self.keys[idx], self.counters[idx], n, self.dtype)
        self.counters = self.counters.index_add(0, idx, use.to(torch.int64))
        return u

    def reset(self, mask: torch.Tensor, start_pose: torch.Tensor | None = None) -> torch.Tensor:
        """Start new episodes in the masked environments; returns all observations ``(N, D)``.

        ``start_pose``: optional ``(N, 3)`` planar rear-axle pose ``(x, y, yaw)`` [m, m, rad]
        used instead of the random spawn (the goal and command are still drawn).

        On the CPU only the masked environments are computed (their indices are read on the
        host); on an accelerator (``subset_resets`` off) every environment is, and the masked
        rows are kept: no host sync, except one per redraw round on maps with holes.
        """
        for hook in self.reset_hooks:
            hook(mask)
        sp = None
        if start_pose is not None:
            sp = torch.as_tensor(start_pose, dtype=self.dtype, device=self.device)
            if sp.shape != (self.n, 3) or not bool(torch.isfinite(sp).all()):
                raise ValueError(f"start_pose must be a finite ({self.n}, 3) tensor of "
                                 f"(x, y, yaw), got shape {tuple(sp.shape)}")
        idx = None
        if self.contact is not None and self.subset_resets:
            idx = torch.nonzero(mask).squeeze(1)
            if idx.numel() == self.n:
                idx = None
        sel = (lambda t: t) if idx is None else (lambda t: t[idx])  # noqa: E731
        use = mask if idx is None else torch.ones_like(idx, dtype=torch.bool)
        if sp is not None:
            sp = sel(sp)
        spawn = self._spawn(self._draw(8, idx, use), sp)
        if self.maps.has_holes:
            # a spawn with a wheel over a hole, or a goal in one, is drawn again (up to 16
            # times, from the environment's own stream, so sub-env i still equals a single env)
            for _ in range(16):
                sx, sy, syaw, gx, gy, _, _, mi = spawn
                bad = use & self._in_hole(sx, sy, syaw, gx, gy, mi, sp is None)
                if not bool(bad.any()):
                    break
                new = self._spawn(self._draw(8, idx, bad), sp)
                spawn = tuple(torch.where(bad, a, b) for a, b in zip(new, spawn))
        sx, sy, syaw, gx, gy, cmd_v, cmd_w, mi = spawn

        def put(old, new):
            return merge_rows(old, new, mask, idx)
        self.x, self.y, self.yaw = put(self.x, sx), put(self.y, sy), put(self.yaw, syaw)
        self.map_index = put(self.map_index, mi)
        self.goal = put(self.goal, torch.stack((gx, gy), 1))
        self.command = put(self.command, torch.stack((cmd_v, cmd_w), 1))
        zero = torch.zeros_like(sx)
        zero3 = torch.zeros_like(sx).unsqueeze(1).expand(-1, 3)
        self.steer, self.v, self.w = put(self.steer, zero), put(self.v, zero), put(self.w, zero)
        s = self.skid
        self.skid = SkidSteerState(
            x=self.x, y=self.y, yaw=self.yaw, vx=put(s.vx, zero), vy=put(s.vy, zero),
            yaw_rate=put(s.yaw_rate, zero),
            wheel_omega=put(s.wheel_omega, zero.unsqueeze(1).expand(-1, self.K)))
        self.prev_action = put(self.prev_action,
                               zero.unsqueeze(1).expand(-1, self.action_dim))
        self.steps = put(self.steps, torch.zeros_like(sx, dtype=self.steps.dtype))
        self.accel_bias, self.gyro_bias = put(self.accel_bias, zero3), put(self.gyro_bias, zero3)
        # place the vehicle; the sensor starts at rest there
        if idx is None and self._cold_fn is not None and not self.subset_resets \
                and self.contact is not None:
            # accelerators: every reset places all rows; compiled, as the step (one graph)
            gc = self._cold_fn(None)
            self.contact = gc.where(mask, self.contact)
        elif idx is None:
            gc = self._place(warm=False)
            gc._wheels()  # the state a step leaves has them too (one compiled graph, not two)
            self.contact = gc if self.contact is None else gc.where(mask, self.contact)
        elif self._cold_fn is None:
            gc = self._place(warm=False, idx=idx)
            self.contact = self.contact.index_copy(idx, gc)
        else:
            B = self._cold_chunk
            for start in range(0, idx.numel(), B):
                part = idx[start:start + B]
                m = part.numel()
                if m < B:  # pad with copies of the last index; only the first m rows are kept
                    part = torch.cat((part, part[-1:].expand(B - m)))
                g = self._cold_fn(part)
                self.contact = self.contact.index_copy(part[:m], g if m == B else g[:m])
            gc = self.contact[idx]
        p, R = self._sensor(gc)
        self.sensor_pos, self.sensor_vel = put(self.sensor_pos, p), put(self.sensor_vel, zero3)
        self.prev_rot = put(self.prev_rot, R)
        self.accel = put(self.accel, specific_force(torch.zeros_like(p), R, self.cfg.gravity))
        self.gyro = put(self.gyro, zero3)
        dist = torch.linalg.vector_norm(sel(self.goal) - gc.base_position[:, :2], dim=1)
        self.prev_distance = put(self.prev_distance, dist)
        return self.observe()

    def _spawn(self, u: torch.Tensor, start_pose: torch.Tensor | None):
        """Spawn pose, goal, command and map index ``(N,)`` each from 8 uniforms per env."""
        task = self.cfg.task
        x0, x1, y0, y1 = self.maps.bounds
        m = min(task.spawn_margin, 0.45 * (x1 - x0), 0.45 * (y1 - y0))
        sx = x0 + m + u[:, 0] * (x1 - x0 - 2 * m)
        sy = y0 + m + u[:, 1] * (y1 - y0 - 2 * m)
        syaw = (2 * u[:, 2] - 1) * math.pi
        if start_pose is not None:
            sx, sy, syaw = start_pose[:, 0], start_pose[:, 1], start_pose[:, 2]
        d = task.goal_distance[0] + u[:, 3] * (task.goal_distance[1] - task.goal_distance[0])
        ang = (2 * u[:, 4] - 1) * math.pi
        gx = (sx + d * torch.cos(ang)).clamp(x0 + m, x1 - m)
        gy = (sy + d * torch.sin(ang)).clamp(y0 + m, y1 - m)
        cmd_v = task.command_speed[0] + u[:, 5] * (task.command_speed[1] - task.command_speed[0])
        cmd_w = task.command_yaw_rate[0] + u[:, 6] * (task.command_yaw_rate[1]
                                                      - task.command_yaw_rate[0])
        mi = (u[:, 7] * len(self.maps)).to(torch.int64).clamp_max(len(self.maps) - 1)
        return sx, sy, syaw, gx, gy, cmd_v, cmd_w, mi

    def _in_hole(self, sx, sy, syaw, gx, gy, mi, check_spawn: bool) -> torch.Tensor:
        """``(N,)``: the goal, or (``check_spawn``) a wheel of the level vehicle at the spawn
        or of its footprint grown by 25 % about the centre, lies over a hole."""
        bad = torch.isnan(self.maps.height(gx, gy, mi))
        if check_spawn:
            wx = torch.tensor([p[0] for p in self.vehicle.wheel_positions], dtype=self.dtype,
                              device=self.device)
            wy = torch.tensor([p[1] for p in self.vehicle.wheel_positions], dtype=self.dtype,
                              device=self.device)
            cx, cy = wx.mean(), wy.mean()
            px = torch.cat((wx, cx + 1.25 * (wx - cx)))
            py = torch.cat((wy, cy + 1.25 * (wy - cy)))
            c, s = torch.cos(syaw).unsqueeze(1), torch.sin(syaw).unsqueeze(1)
            hx = sx.unsqueeze(1) + c * px - s * py
            hy = sy.unsqueeze(1) + s * px + c * py
            h = self.maps.height(hx, hy, mi.unsqueeze(1).expand_as(hx))
            bad = bad | torch.isnan(h).any(1)
        return bad

    # ------------------------------------------------------------------ pieces of a step
    def _place(self, warm: bool, idx: torch.Tensor | None = None):
        """Ground following of all environments, or of those in ``idx`` (cold start)."""
        kw = {"d_eps": self.cfg.d_eps, "gravity": self.cfg.gravity}
        if self.cfg.ground == "rigid_contact" and warm and self.contact is not None:
            kw.update(init_roll=self.contact.roll, init_pitch=self.contact.pitch, max_iter=4)
        if idx is None:
            return place(self.cfg.ground, self._veh, self.maps, self.x, self.y, self.yaw,
                         self.map_index, **kw)
        veh = self._veh
        if self.params is not None:
            p = self.params
            veh = VehicleBatch(self.vehicle, p["mass"][idx], p["com"][idx],
                               p["wheel_radius"][idx])
        return place(self.cfg.ground, veh, self.maps, self.x[idx], self.y[idx], self.yaw[idx],
                     self.map_index[idx], **kw)

    def _place_cold(self, idx: torch.Tensor | None):
        """Cold placement of the environments ``idx`` (None: all), per-wheel fields evaluated
        (the function :attr:`_cold_fn` compiles)."""
        gc = self._place(warm=False, idx=idx)
        gc._wheels()
        return gc

    def _sensor(self, gc):
        """IMU position (world) ``(N, 3)`` and sensor-to-world rotation ``(N, 3, 3)``."""
        Rb = gc.base_rotation
        off = torch.tensor(self.cfg.imu.offset, dtype=self.dtype, device=self.device)
        return gc.base_position + matvec3(Rb, off), Rb

    def _imu(self, gc, dt: float):
        """Specific force and angular rate in the sensor frame, by differencing the sensor's
        world trajectory: ``v = dp / dt``, ``a = dv / dt``, ``f = R^T (a - g_w)``; the gyro is
        ``log(R_prev^T R) / dt``."""
        p, R = self._sensor(gc)
        v = (p - self.sensor_pos) / dt
        f = specific_force((v - self.sensor_vel) / dt, R, self.cfg.gravity)
        gyro = angular_rate(self.prev_rot, R, dt)
        self.sensor_pos, self.sensor_vel, self.prev_rot = p, v, R
        imu = self.cfg.imu
        if self.params is not None:  # per-environment noise levels
            a_noise = self.params["accel_noise"].unsqueeze(1)
            g_noise = self.params["gyro_noise"].unsqueeze(1)
        else:
            a_noise, g_noise = imu.accel_noise, imu.gyro_noise
        if (self.params is not None or imu.accel_noise or imu.gyro_noise or imu.accel_bias_walk
                or imu.gyro_bias_walk):
            nz = rngmod.normal(self.keys, self.counters, 12, self.dtype)
            self.counters = self.counters + 1
            sq = math.sqrt(dt)
            self.accel_bias = self.accel_bias + imu.accel_bias_walk * sq * nz[:, 6:9]
            self.gyro_bias = self.gyro_bias + imu.gyro_bias_walk * sq * nz[:, 9:12]
            f = f + self.accel_bias + a_noise * nz[:, 0:3]
            gyro = gyro + self.gyro_bias + g_noise * nz[:, 3:6]
        self.accel, self.gyro = f, gyro

    def _height_scan(self, gc):
        hs = self.cfg.height_scan
        nx, ny = hs.shape
        gx = hs.forward_offset + (torch.arange(nx, dtype=self.dtype, device=self.device)
                                  - 0.5 * (nx - 1)) * hs.resolution
        gy = (torch.arange(ny, dtype=self.dtype, device=self.device) - 0.5 * (ny - 1)) \
            * hs.resolution
        GX, GY = torch.meshgrid(gx, gy, indexing="ij")
        GX, GY = GX.reshape(1, -1), GY.reshape(1, -1)
        c, s = torch.cos(self.yaw).unsqueeze(1), torch.sin(self.yaw).unsqueeze(1)
        bp = gc.base_position
        px = bp[:, 0:1] + c * GX - s * GY
        py = bp[:, 1:2] + s * GX + c * GY
        h = self.maps.height(px, py, self.map_index.unsqueeze(1)) - bp[:, 2:3]
        return torch.nan_to_num(h, nan=-hs.clip).clamp(-hs.clip, hs.clip)

    def body_velocity(self) -> torch.Tensor:
        """``(N, 3)`` forward and left speed [m/s] and yaw rate [rad/s] (CoM for skid-steer)."""
        if self.cfg.dynamics == "skid_steer":
            return torch.stack((self.skid.vx, self.skid.vy, self.skid.yaw_rate), 1)
        return torch.stack((self.v, torch.zeros_like(self.v), self.w), 1)

    def observe(self) -> torch.Tensor:
        """``(N, D)`` observations, built from the configured terms and clipped to the bounds."""
        gc = self.contact
        parts = []
        for (name, d, _, _), (lo_t, hi_t) in zip(self._layout, self._bounds_t):
            if name == "z_rel":
                bp = gc.base_position
                h = self.maps.height(bp[:, 0], bp[:, 1], self.map_index)
                t = torch.nan_to_num(bp[:, 2] - h, nan=0.0).unsqueeze(1)
            elif name == "roll_pitch":
                t = torch.stack((gc.roll, gc.pitch), 1)
            elif name == "yaw_sincos":
                t = torch.stack((torch.sin(self.yaw), torch.cos(self.yaw)), 1)
            elif name == "body_velocity":
                t = self.body_velocity()
            elif name == "imu":
                t = torch.cat((self.accel, self.gyro), 1)
            elif name == "goal":
                dx = self.goal[:, 0] - gc.base_position[:, 0]
                dy = self.goal[:, 1] - gc.base_position[:, 1]
                c, s = torch.cos(self.yaw), torch.sin(self.yaw)
                t = torch.stack((c * dx + s * dy, -s * dx + c * dy), 1)
            elif name == "command":
                t = self.command
            elif name == "prev_action":
                t = self.prev_action
            else:  # height_scan
                t = self._height_scan(gc)
            parts.append(torch.maximum(torch.minimum(t.to(self.dtype), hi_t), lo_t))
        return torch.cat(parts, 1)

    # ------------------------------------------------------------------ step
    def check_action(self, action) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate an ``(N, A)`` action; returns ``(clipped action, bad-row mask)``."""
        a = torch.as_tensor(action)
        if a.device != self.device:
            raise ValueError(f"action is on {a.device}, the environment on {self.device}")
        if a.shape != (self.n, self.action_dim):
            raise ValueError(f"action must have shape {(self.n, self.action_dim)}, got "
                             f"{tuple(a.shape)}")
        a = a.to(self.dtype)
        finite = torch.isfinite(a).all(1)
        bad = ~finite
        if self.cfg.nan_action == "raise":
            if not bool(finite.all()):
                idx = torch.nonzero(bad).flatten().tolist()
                raise ValueError(f"non-finite (NaN or inf) action in environment(s) {idx[:20]}"
                                 f"{' ...' if len(idx) > 20 else ''}; actions must be finite "
                                 "numbers in [-1, 1] (or set nan_action='zero')")
        else:
            a = torch.where(bad.unsqueeze(1), torch.zeros_like(a), a)
        return a.clamp(-1.0, 1.0), bad

    def step(self, action):
        """Advance every environment one control step.

        Returns ``(obs (N, D), reward (N,), terminated (N,) bool, info)``; ``info`` holds
        ``reward/<term>`` ``(N,)``, ``end_reason`` (codes of :data:`tasks.REASONS`), ``bad_action``.
        """
        return self.step_checked(*self.check_action(action))

    def step_checked(self, a: torch.Tensor, bad: torch.Tensor):
        """:meth:`step` for an action already validated and clipped (``(N, A)`` on the device,
        in the sim's dtype) with its bad-row mask ``(N,)`` bool."""
        k = self.cfg.action_repeat
        if k == 1:
            return self._advance_fn(a, bad)
        steps0 = self.steps
        obs, reward, term, info = self._advance_fn(a, bad)
        for _ in range(k - 1):
            snap = self._snapshot()
            obs2, r2, t2, info2 = self._advance_fn(a, bad)
            self._restore(term, snap)  # environments that ended stay as they ended
            live = ~term
            reward = reward + torch.where(live, r2, torch.zeros_like(r2))
            obs = torch.where(live.unsqueeze(1), obs2, obs)
            for key, val in info2.items():
                if key.startswith("reward/"):
                    info[key] = info[key] + torch.where(live, val, torch.zeros_like(val))
                elif key == "end_reason":
                    info[key] = torch.where(live, val, info[key])
            term = term | t2
        self.steps = steps0 + 1  # control steps
        return obs, reward, term, info

    _STATE = ("x", "y", "yaw", "steer", "v", "w", "skid", "goal", "command", "prev_action",
              "prev_distance", "keys", "counters", "map_index", "steps", "sensor_pos",
              "sensor_vel", "prev_rot", "accel", "gyro", "accel_bias", "gyro_bias", "contact")

    def _snapshot(self) -> dict:
        """References to the state tensors (a step replaces them, it never writes into them)."""
        return {name: getattr(self, name) for name in self._STATE}

    def _restore(self, mask: torch.Tensor, snap: dict) -> None:
        """Put the masked environments back to ``snap`` (the current tensors' memory layout is
        kept, so a compiled step sees the same strides)."""
        for name, old in snap.items():
            new = getattr(self, name)
            if name == "contact":
                setattr(self, name, old.where(mask, new))
            elif name == "skid":
                setattr(self, name, SkidSteerState(**{
                    f: merge_rows(getattr(new, f), getattr(old, f), mask)
                    for f in ("x", "y", "yaw", "vx", "vy", "yaw_rate", "wheel_omega")}))
            else:
                setattr(self, name, merge_rows(new, old, mask))

    def _advance(self, a: torch.Tensor, bad: torch.Tensor):
        cfg = self.cfg
        dt = cfg.dt
        power = torch.zeros_like(self.x)
        kappa = torch.zeros(self.n, self.K, dtype=self.dtype, device=self.device)
        if cfg.dynamics == "unicycle":
            self.v, self.w = a[:, 0] * cfg.max_speed, a[:, 1] * cfg.max_yaw_rate
            self.x, self.y, self.yaw = unicycle_step(self.x, self.y, self.yaw, self.v, self.w, dt)
        elif cfg.dynamics == "ackermann":
            v = a[:, 0] * cfg.max_speed
            self.v = v
            self.w = v * torch.tan(self.steer) / cfg.ackermann.wheel_base
            self.x, self.y, self.yaw, self.steer = ackermann_step(
                cfg.ackermann, self.x, self.y, self.yaw, self.steer, v,
                a[:, 1] * cfg.ackermann.max_steer_rate, dt)
        else:
            targets = side_targets(self.vehicle, a[:, 0], a[:, 1]) * (
                cfg.max_speed / max(self.vehicle.wheel_radius, 1e-3))
            gc = self.contact
            s0 = self.skid
            s0 = SkidSteerState(self.x, self.y, self.yaw, s0.vx, s0.vy, s0.yaw_rate,
                                s0.wheel_omega)
            self.skid, info_d = skid_steer_step(
                self._veh, cfg.skid, s0, None, gc.normal_force, gc.roll, gc.pitch,
                dt, substeps=cfg.substeps, speed_targets=targets,
                mu=None if self.params is None else self.params["friction"])
            self.x, self.y, self.yaw = self.skid.x, self.skid.y, self.skid.yaw
            kappa = info_d["kappa"]
            power = (info_d["torque"] * self.skid.wheel_omega).abs().sum(1)
        gc = self._place(warm=True)
        self.contact = gc
        self._imu(gc, dt)
        self.steps = self.steps + 1
        # rewards
        dist = torch.linalg.vector_norm(self.goal - gc.base_position[:, :2], dim=1)
        reached = (dist < cfg.task.goal_radius) if cfg.task.kind == "nav" else \
            torch.zeros_like(dist, dtype=torch.bool)
        tipped = tasks.tipped_over(gc.roll, gc.pitch, self.roll_limit, self.pitch_limit,
                                   gc.stable if cfg.ground == "rigid_contact" else None)
        vel = self.body_velocity()
        terms = {
            "progress": tasks.progress_to_goal(self.prev_distance, dist)
            if cfg.task.kind == "nav" else torch.zeros_like(dist),
            "goal_reached": tasks.goal_reached(reached, self.dtype),
            "tracking": tasks.velocity_tracking(vel[:, 0], vel[:, 2], self.command[:, 0],
                                                self.command[:, 1]),
            "tilt": tasks.tilt_l2(gc.roll, gc.pitch),
            "angular_rate": tasks.angular_rate_l2(self.gyro),
            "action_rate": tasks.action_rate_l2(a, self.prev_action),
            "slip": tasks.slip_l1(kappa),
            "energy": power,
            "tip_over": tasks.tip_over(tipped, self.dtype),
        }
        reward = torch.zeros_like(dist)
        info = {}
        for name, weight in cfg.task.weights.items():
            info[f"reward/{name}"] = terms[name]
            if weight:
                reward = reward + weight * terms[name]
        reason = torch.zeros_like(self.steps)
        for code, cond in ((4, reached), (3, gc.hole), (2, gc.off_map), (1, tipped)):
            reason = torch.where(cond, torch.full_like(reason, code), reason)
        terminated = reason > 0
        self.prev_distance = dist
        self.prev_action = a
        info["end_reason"] = reason
        info["bad_action"] = bad
        return self.observe(), reward, terminated, info
