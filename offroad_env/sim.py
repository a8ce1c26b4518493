"""The batched simulator: the orchestrator of one step and one reset of N environments, with the
compile plumbing. No per-environment Python loop.

One step (:meth:`Simulator.step`) chains the rooms of the package: actuation and dynamics
(:mod:`.actuation`), ground following (:mod:`.ground`), the sensors (:mod:`.sensors`), the
reward terms and end reasons (:mod:`.tasks`) and the observation terms (:mod:`.observations`),
over the state declared in :mod:`.state`. A reset draws spawns (:mod:`.spawn`) and places the
vehicles. The Gymnasium classes (:mod:`.vector_env`, :mod:`.env`) own a :class:`Simulator` and
add the Gymnasium contract (spaces, autoreset, time limit, numpy).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import torch

import terrain as terrain_pkg
from terrain import HeightMap

from . import rng as rngmod
from . import tasks
from .actuation import ACTUATORS, body_velocity, check_action
from .config import SimConfig
from .frames import local_origin, localize
from .physics.ground import GroundContact, place
from .observations import Observer
from .params import nominal_params, update_params
from .sensors import imu_at_rest, imu_step, sensor_pose
from .spawn import MAX_REDRAWS, check_goal_range, spawn_with_redraws
from .physics.stability import body_acceleration, contact_margin, edge_table, filter_acceleration
from .state import SimState
from .physics.vehicle import VehicleBatch, preset

__all__ = ["Simulator", "check_device"]

#: plane passes of the rigid placement in a step, warm-started at the last attitude. On rough
#: ground 94 % of poses reach the fixed point in 4, 98.4 % in 8, 99.3 % in 16 (float32); where
#: one has not (``GroundContact.settled``), its support is not judged that step (the tilt
#: limits still are) and the next step's warm start goes on from it. 4, not 8: a compiled step
#: runs every pass on every pose (skid-steer + rigid at N = 4096: 308 k env-steps/s with 4,
#: 204 k with 8), and the eager step must run the same passes to agree with it.
WARM_PASSES = 4


def check_device(device) -> torch.device:
    """``device`` as a torch.device; ValueError (naming it and what is accepted) for a name torch
    does not know or an accelerator this machine lacks."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device ({exc}); use 'cpu' or "
                         "'cuda[:i]'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available to this torch "
                         f"({torch.__version__}); use device='cpu'")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} "
                         "CUDA device(s)")
    return dev


@functools.lru_cache(maxsize=4)
def _level_stack(levels: terrain_pkg.LevelsConfig, seed: int) -> HeightMap:
    """The level stack of ``levels`` (maps are values: envs built alike share it)."""
    return HeightMap(np.stack(terrain_pkg.level_maps(levels, seed)), levels.resolution)


def _build_maps(cfg: SimConfig) -> HeightMap:
    if cfg.heightmap is not None:
        return cfg.heightmap
    if isinstance(cfg.terrain, terrain_pkg.LevelsConfig):  # every map of the levels, once
        return _level_stack(cfg.terrain, cfg.terrain_seed)
    gen = np.random.default_rng(cfg.terrain_seed)
    return HeightMap.stack([terrain_pkg.make_heightmap(cfg.terrain, gen)
                            for _ in range(cfg.num_maps)])


class Simulator:
    """N environments as tensors on one device.

    Attributes: ``cfg``; ``n``; ``state`` (:class:`~offroad_env.state.SimState`: poses, goals,
    sensors, the last ground placement ``state.contact``); ``maps`` (the height-map stack);
    ``vehicle`` (the preset); ``params`` (per-environment parameters, None until
    :meth:`set_params`); ``obs_layout``; ``roll_limit``/``pitch_limit`` [rad] (static
    tip-over limits, floats or ``(N,)``).
    """

    action_dim = 2

    def __init__(self, cfg: SimConfig, num_envs: int, device="cpu", dtype=torch.float32,
                 compile: bool = False):
        if int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.cfg = cfg
        self.n = int(num_envs)
        self.device = check_device(device)
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
        self.dtype = dtype
        self.vehicle = preset(cfg.vehicle)
        world = _build_maps(cfg)
        #: world ``(x, y, z)`` [m] of the simulation frame's origin (float64): the state, the
        #: contact and :attr:`maps` are in that frame; :meth:`world_pose` adds it back
        self.origin = local_origin(world)
        #: the height maps as given (world frame), and in the simulation frame
        self.world_maps = world.to(device=self.device, dtype=dtype)
        self.maps = localize(world, self.origin, self.device, dtype)
        check_goal_range(self.maps, cfg.task)
        self.observer = Observer(cfg, self.vehicle, self.maps, self.action_dim, dtype,
                                 self.device)
        self.obs_dim = self.observer.dim
        self.state = SimState.zeros(self.n, self.vehicle.num_wheels, self.action_dim, dtype,
                                    self.device)
        #: per-environment parameters (:meth:`set_params`); None: the nominal vehicle and sensors
        self.params: dict | None = None
        self._veh = self.vehicle  # the vehicle the physics uses (a VehicleBatch with params)
        self.roll_limit, self.pitch_limit = tasks.static_tip_limits(self.vehicle)
        self._reset_hooks: list[Callable] = []
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
        #: ``(lo, count)`` ``(N,)`` per-env map ranges (:meth:`set_map_range`), or None
        self.map_range = None
        t = cfg.task
        #: the step computes the force-angle margin (for the tip rule, an observation or a
        #: reward term)
        self.needs_margin = (t.tip_rule == "force_angle" or "stability" in cfg.terms
                             or t.weights.stability != 0)
        #: consecutive steps of negative margin that tip (force_angle rule), >= 1
        self.tip_hold_steps = max(1, int(round(t.tip_hold_time / cfg.dt)))
        self._edges = edge_table(self.vehicle, self.device)
        self._cold_fn = (torch.compile(self._place_cold, dynamic=False) if compile else None)

    # ------------------------------------------------------------------ configuration seams
    @property
    def obs_layout(self) -> list[tuple[str, int, int]]:
        """``[(term, start, stop)]`` slices of the observation vector."""
        return self.observer.layout

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float32 ``(D,)`` observation bounds."""
        return self.observer.bounds()

    def add_reset_hook(self, hook: Callable[[torch.Tensor], None]) -> None:
        """Call ``hook(mask)`` (``(N,)`` bool) at the start of every reset, autoresets included
        (domain randomization draws its values there)."""
        self._reset_hooks.append(hook)

    def set_params(self, mask: torch.Tensor, **values) -> None:
        """Set per-environment physical parameters of the masked environments
        (:data:`~offroad_env.params.PARAMS`): ``mass`` ``(N,)`` [kg]; ``com`` ``(N, 3)`` centre
        of mass in the rear-axle frame [m]; ``wheel_radius`` ``(N,)`` [m]; ``friction`` ``(N,)``
        (the skid-steer ``mu`` on hard ground, ``mu_peak`` on soft soil); ``accel_noise`` /
        ``gyro_noise`` ``(N,)`` [m/s^2], [rad/s]. Values are tensors over all N environments;
        only masked rows are used. Unset parameters keep their value (at first, the nominal
        vehicle's and ``cfg``'s). Ground following, loads, tip-over limits, skid-steer dynamics
        and the IMU use them from the next placement on."""
        base = self.params if self.params is not None else nominal_params(
            self.vehicle, self.cfg, self.n, self.dtype, self.device)
        self.params = p = update_params(base, mask, values)
        self._veh = VehicleBatch(self.vehicle, p["mass"], p["com"], p["wheel_radius"])
        self.roll_limit, self.pitch_limit = tasks.static_tip_limits(self._veh)

    def set_terrain(self, maps: HeightMap) -> None:
        """Drive on ``maps`` (one map or a stack, world frame) from the next reset on. They must
        cover the configured maps' extent (the observation bounds depend on it); they are
        simulated in the same frame (:attr:`origin`)."""
        if maps.size != self.world_maps.size or maps.bounds != self.world_maps.bounds:
            raise ValueError(f"terrain {maps!r} must cover the env's map: size "
                             f"{self.world_maps.size}, bounds {self.world_maps.bounds}")
        check_goal_range(maps, self.cfg.task)
        if self.map_range is not None and bool((sum(self.map_range) > len(maps)).any()):
            raise ValueError(f"terrain {maps!r} has fewer maps than the env's map range needs")
        self.world_maps = maps.to(device=self.device, dtype=self.dtype)
        self.maps = localize(maps, self.origin, self.device, self.dtype)

    def to_local(self, xy: torch.Tensor) -> torch.Tensor:
        """World ``(..., 2)`` points [m] (any float dtype; float64 keeps UTM digits) in the
        simulation frame, in the sim's dtype."""
        ox, oy, _ = self.origin
        xy = torch.as_tensor(xy, device=self.device).to(torch.float64)
        return (xy - xy.new_tensor((ox, oy))).to(self.dtype)

    def to_world(self, p: torch.Tensor) -> torch.Tensor:
        """Simulation-frame ``(..., 2)`` or ``(..., 3)`` points [m] in the world frame,
        float64."""
        o = torch.tensor(self.origin[:p.shape[-1]], dtype=torch.float64, device=p.device)
        return p.to(torch.float64) + o

    def set_map_range(self, lo, count) -> None:
        """Draw each environment's map, from its next reset on, from maps ``lo .. lo + count -
        1`` of the stack (``(N,)`` ints; a terrain curriculum gives each env its level's
        maps); ``None, None``: from the whole stack."""
        if lo is None and count is None:
            self.map_range = None
            return
        lo = torch.as_tensor(lo, device=self.device)
        count = torch.as_tensor(count, device=self.device)
        M = len(self.maps)
        if (lo.shape != (self.n,) or count.shape != (self.n,) or lo.is_floating_point()
                or count.is_floating_point() or bool((lo < 0).any()) or bool((count < 1).any())
                or bool((lo + count > M).any())):
            raise ValueError(f"map range must be two ({self.n},) int tensors with lo >= 0, "
                             f"count >= 1 and lo + count <= {M} (the maps), got {lo!r}, "
                             f"{count!r}")
        self.map_range = (lo.to(torch.int64).clone(), count.to(torch.int64).clone())

    def set_keys(self, keys: torch.Tensor, mask: torch.Tensor) -> None:
        """Give the masked environments new random streams (keys) and restart their counters."""
        st = self.state
        st.keys = torch.where(mask, keys.to(self.device), st.keys)
        st.counters = torch.where(mask, torch.zeros_like(st.counters), st.counters)

    def body_velocity(self) -> torch.Tensor:
        """``(N, 3)`` forward and left speed [m/s] and yaw rate [rad/s] (CoM for skid-steer)."""
        return body_velocity(self.state, self.cfg.dynamics)

    def observe(self) -> torch.Tensor:
        """``(N, D)`` observations of the current state, clipped to the bounds."""
        return self.observer(self.state, self.maps)

    # ------------------------------------------------------------------ reset
    def _draw(self, n: int, idx: torch.Tensor | None, use: torch.Tensor) -> torch.Tensor:
        """``n`` uniforms for each selected environment (``idx``; None: all N), advancing the
        counters of those where ``use`` (bool, one per selected environment) is set. The draws
        are counter-based, so a selection gives the same numbers as the full batch's rows."""
        st = self.state
        if idx is None:
            u = rngmod.uniform(st.keys, st.counters, n, self.dtype)
            st.counters = st.counters + use.to(torch.int64)
            return u
        u = rngmod.uniform(st.keys[idx], st.counters[idx], n, self.dtype)
        st.counters = st.counters.index_add(0, idx, use.to(torch.int64))
        return u

    def reset(self, mask: torch.Tensor, start_pose: torch.Tensor | None = None,
              goal: torch.Tensor | None = None) -> torch.Tensor:
        """Start new episodes in the masked environments; returns all observations ``(N, D)``.

        ``start_pose``: optional ``(N, 3)`` planar rear-axle pose ``(x, y, yaw)`` [m, m, rad],
        world frame, used instead of the random spawn (the goal and command are still drawn).
        ``goal``: optional ``(N, 2)`` world goal [m] used instead of the drawn one.

        Every reset environment starts on a stable rest with its goal at ``goal_distance`` in
        the map less the margin: spawns that are not are drawn again from the environment's own
        stream (a ``start_pose`` is kept as given). On the CPU only the masked environments are
        computed (their indices are read on the host); on an accelerator (``subset_resets`` off)
        every environment is, and the masked rows are kept, with one host sync per check round
        (goals and holes, then the rest).
        """
        for hook in self._reset_hooks:
            hook(mask)
        start = None
        if start_pose is not None:
            start = torch.as_tensor(start_pose, device=self.device)
            if (start.shape != (self.n, 3) or start.dtype == torch.bool or start.is_complex()
                    or not bool(torch.isfinite(start).all())):
                raise ValueError(f"start_pose must be a finite real ({self.n}, 3) tensor of "
                                 f"world (x, y, yaw), got {start.dtype} {tuple(start.shape)}")
            start = torch.cat((self.to_local(start[:, :2]), start[:, 2:].to(self.dtype)), 1)
        if goal is not None:
            g = torch.as_tensor(goal, device=self.device)
            if (g.shape != (self.n, 2) or g.dtype == torch.bool or g.is_complex()
                    or not bool(torch.isfinite(g).all())):
                raise ValueError(f"goal must be a finite real ({self.n}, 2) tensor of world "
                                 f"(x, y), got {g.dtype} {tuple(g.shape)}")
            goal = self.to_local(g)
        st = self.state
        idx = None
        if st.contact is not None and self.subset_resets:
            idx = torch.nonzero(mask).squeeze(1)
            if idx.numel() == self.n:
                idx = None
        if idx is not None:
            start = None if start is None else start[idx]
            goal = None if goal is None else goal[idx]
        gc = self._start_episodes(mask, idx, start, goal)
        if start is None:  # a spawn off a stable rest is drawn again from its own stream
            for _ in range(MAX_REDRAWS):
                bad = self._unrestful(gc, idx) & (mask if idx is None else True)
                if not bool(bad.any()):
                    break
                if idx is None:
                    self._start_episodes(bad, None, None, goal)
                else:
                    rows = idx[bad]
                    self._start_episodes(torch.zeros_like(mask).index_fill_(0, rows, True),
                                         rows, None, None if goal is None else goal[bad])
                gc = st.contact if idx is None else st.contact[idx]
            else:
                raise RuntimeError(f"no stable spawn in {MAX_REDRAWS} draws for environment "
                                   f"rows {torch.nonzero(bad).flatten().tolist()[:20]}: the "
                                   "terrain is too steep for the vehicle")
        p, R = sensor_pose(gc, self.cfg.imu.offset)
        goal = st.goal_w if idx is None else st.goal_w[idx]
        rest = {"margin": self._margin(gc, None, idx)} if self.needs_margin else {}
        st.put(mask, idx, sensor_pos_w=p, prev_rot_sw=R, accel_s=imu_at_rest(R, self.cfg.gravity),
               prev_distance=torch.linalg.vector_norm(goal - gc.base_position[:, :2], dim=1),
               **rest)
        return self.observe()

    def _start_episodes(self, mask: torch.Tensor, idx: torch.Tensor | None,
                        start: torch.Tensor | None, goal: torch.Tensor | None = None
                        ) -> GroundContact:
        """Draw spawns for the masked rows (``idx``: their indices, or None for all N rows),
        restart their state and place them; returns the placement of those rows (all N rows
        when ``idx`` is None). ``start``/``goal``: rows of given poses/goals (local frame)."""
        use = mask if idx is None else torch.ones_like(idx, dtype=torch.bool)
        rng = self.map_range
        if rng is not None and idx is not None:
            rng = (rng[0][idx], rng[1][idx])
        s = spawn_with_redraws(lambda k, adv: self._draw(k, idx, adv), use, self.maps,
                               self.vehicle, self.cfg.task, start, goal, rng)
        self.state.restart(mask, idx, later=("sensor_pos_w", "prev_rot_sw", "accel_s",
                                             "prev_distance", "margin"),
                           x=s.x, y=s.y, yaw=s.yaw, map_index=s.map_index,
                           goal_w=torch.stack((s.goal_x, s.goal_y), 1),
                           command=torch.stack((s.cmd_speed, s.cmd_yaw_rate), 1))
        return self._place_rows(mask, idx)

    def _unrestful(self, gc: GroundContact, idx: torch.Tensor | None) -> torch.Tensor:
        """``(M,)`` bool: the placed rows (``idx``, or all) are not at a stable rest: past the
        static tip limits, or (rigid contact) not converged or not held by their wheels."""
        def rows(v):
            return v if idx is None or not isinstance(v, torch.Tensor) else v[idx]
        bad = tasks.tipped_over(gc.roll, gc.pitch, rows(self.roll_limit), rows(self.pitch_limit))
        if self.cfg.ground == "rigid_contact":
            bad = bad | ~gc.converged | ~gc.stable
        return bad

    def _place_rows(self, mask: torch.Tensor, idx: torch.Tensor | None) -> GroundContact:
        """Place the reset environments cold and merge them into ``state.contact``; returns
        the placement of the reset rows (all N rows when ``idx`` is None)."""
        st = self.state
        if idx is None and self._cold_fn is not None and not self.subset_resets \
                and st.contact is not None:
            # accelerators: every reset places all rows; compiled, as the step (one graph)
            gc = self._cold_fn(None)
            st.contact = st.contact.merge_rows(gc, mask)
        elif idx is None:
            gc = self._place(warm=False).with_loads()  # as a step leaves it: one graph, not two
            st.contact = gc if st.contact is None else st.contact.merge_rows(gc, mask)
        elif self._cold_fn is None:
            gc = self._place(warm=False, idx=idx).with_loads()
            st.contact = st.contact.merge_rows(gc, idx=idx)
        else:
            B = self._cold_chunk
            for start in range(0, idx.numel(), B):
                part = idx[start:start + B]
                m = part.numel()
                if m < B:  # pad with copies of the last index; only the first m rows are kept
                    part = torch.cat((part, part[-1:].expand(B - m)))
                g = self._cold_fn(part)
                st.contact = st.contact.merge_rows(g if m == B else g[:m], idx=part[:m])
            gc = st.contact[idx]
        return gc

    # ------------------------------------------------------------------ ground following
    def _place(self, warm: bool, idx: torch.Tensor | None = None) -> GroundContact:
        """Ground following of all environments, or of those in ``idx`` (cold start), without
        the per-wheel loads (:meth:`GroundContact.with_loads`)."""
        st, cfg = self.state, self.cfg
        kw = {"d_eps": cfg.d_eps, "gravity": cfg.gravity, "loads": False}
        if cfg.ground == "rigid_contact" and warm and st.contact is not None:
            kw.update(init_roll=st.contact.roll, init_pitch=st.contact.pitch,
                      max_iter=WARM_PASSES)
        if idx is None:
            return place(cfg.ground, self._veh, self.maps, st.x, st.y, st.yaw, st.map_index,
                         **kw)
        veh = self._veh
        if self.params is not None:
            p = self.params
            veh = VehicleBatch(self.vehicle, p["mass"][idx], p["com"][idx],
                               p["wheel_radius"][idx])
        return place(cfg.ground, veh, self.maps, st.x[idx], st.y[idx], st.yaw[idx],
                     st.map_index[idx], **kw)

    def _place_cold(self, idx: torch.Tensor | None) -> GroundContact:
        """Cold placement of the environments ``idx`` (None: all) with loads (the function
        :attr:`_cold_fn` compiles)."""
        return self._place(warm=False, idx=idx).with_loads()

    def _margin(self, gc: GroundContact, accel_b: torch.Tensor | None,
                idx: torch.Tensor | None = None) -> torch.Tensor:
        """``(M,)`` force-angle stability margin [rad] of placed rows (``idx``; None: all N)
        under the body-frame acceleration ``accel_b`` ``(M, 3)`` (None: at rest)
        (:func:`~offroad_env.stability.contact_margin`)."""
        return contact_margin(gc, self._veh, self.cfg.ground == "rigid_contact", accel_b,
                              self.cfg.gravity, self._edges, idx)

    # ------------------------------------------------------------------ step
    def check_action(self, action) -> tuple[torch.Tensor, torch.Tensor]:
        """``(clipped action, bad-row mask)`` of an ``(N, A)`` action
        (:func:`~offroad_env.actuation.check_action`)."""
        return check_action(action, self.n, self.action_dim, self.device, self.dtype,
                            self.cfg.nan_action)

    def step(self, action):
        """Advance every environment one control step.

        Returns ``(obs (N, D), reward (N,), terminated (N,) bool, info)``; ``info`` holds
        ``reward/<term>`` ``(N,)``, ``end_reason`` (:class:`~offroad_env.tasks.EndReason`
        codes, int64 ``(N,)``) and ``bad_action`` ``(N,)`` bool.
        """
        return self.step_checked(*self.check_action(action))

    def step_checked(self, a: torch.Tensor, bad: torch.Tensor):
        """:meth:`step` for an action already validated and clipped (``(N, A)`` on the device,
        in the sim's dtype) with its bad-row mask ``(N,)`` bool."""
        k = self.cfg.action_repeat
        if k == 1:
            return self._advance_fn(a, bad)
        steps0 = self.state.steps
        obs, reward, term, info = self._advance_fn(a, bad)
        for _ in range(k - 1):
            snap = self.state.copy()
            obs2, r2, t2, info2 = self._advance_fn(a, bad)
            self.state.restore(term, snap)  # environments that ended stay as they ended
            live = ~term
            reward = reward + torch.where(live, r2, torch.zeros_like(r2))
            obs = torch.where(live.unsqueeze(1), obs2, obs)
            for key, val in info2.items():
                if key.startswith("reward/"):
                    info[key] = info[key] + torch.where(live, val, torch.zeros_like(val))
                elif key == "end_reason":
                    info[key] = torch.where(live, val, info[key])
            term = term | t2
        self.state.steps = steps0 + 1  # control steps
        return obs, reward, term, info

    def _advance(self, a: torch.Tensor, bad: torch.Tensor):
        """One physics step of ``dt`` with the clipped action ``a`` ``(N, A)``: actuation and
        dynamics, ground following, IMU, rewards and end reasons, observations. Updates
        :attr:`state`; returns ``(obs, reward, terminated, info)`` as :meth:`step`."""
        cfg, st = self.cfg, self.state
        nav = cfg.task.kind == "nav"
        drive = ACTUATORS[cfg.dynamics](cfg, self.vehicle, self._veh, self.params, st, a)
        gc = self._place(warm=True)
        if cfg.dynamics == "skid_steer" or cfg.ground == "rigid_contact" or self.needs_margin:
            gc = gc.with_loads()  # the next step's wheel loads / this step's stability
        noise = None if self.params is None else (self.params["accel_noise"],
                                                  self.params["gyro_noise"])
        imu = imu_step(st, gc, cfg, noise, cfg.dt)
        st.contact = gc
        st.sensor_pos_w, st.sensor_vel_w, st.prev_rot_sw = imu.pos_w, imu.vel_w, imu.rot_sw
        st.counters, st.accel_bias_s, st.gyro_bias_s = imu.counters, imu.accel_bias_s, \
            imu.gyro_bias_s
        st.accel_s, st.gyro_s = imu.accel_s, imu.gyro_s
        st.steps = st.steps + 1
        dist = torch.linalg.vector_norm(st.goal_w - gc.base_position[:, :2], dim=1)
        reached = (dist < cfg.task.goal_radius) if nav else torch.zeros_like(dist, dtype=torch.bool)
        # lost support is judged on a rest only: a pose the step's passes cut short is not one
        # (its loads are those of a passing attitude; the next step goes on from it)
        tipped = tasks.tipped_over(gc.roll, gc.pitch, self.roll_limit, self.pitch_limit,
                                   gc.stable | ~gc.settled if cfg.ground == "rigid_contact"
                                   else None)
        vel_b = body_velocity(st, cfg.dynamics)
        if self.needs_margin:
            st.accel_b = filter_acceleration(
                st.accel_b, body_acceleration(vel_b, st.prev_vel_b, cfg.dt), cfg.dt)
            st.margin = self._margin(gc, st.accel_b)
            st.unstable_steps = torch.where(st.margin < 0, st.unstable_steps + 1,
                                            torch.zeros_like(st.unstable_steps))
            if cfg.task.tip_rule == "force_angle":
                tipped = tipped | (st.unstable_steps >= self.tip_hold_steps)
        st.prev_vel_b = vel_b
        q = tasks.StepQuantities(
            distance=dist, prev_distance=st.prev_distance, reached=reached, nav=nav,
            body_velocity=vel_b, command=st.command, roll=gc.roll,
            pitch=gc.pitch, gyro_s=st.gyro_s, action=a, prev_action=st.prev_action,
            kappa=drive.kappa, torque=drive.torque, wheel_omega=drive.wheel_omega,
            tipped=tipped, margin=st.margin, dt=cfg.dt)
        terms = tasks.reward_terms(q)
        reward = tasks.weighted_reward(terms, cfg.task.weights)
        info = {f"reward/{name}": value for name, value in terms.items()}
        reason = tasks.end_reason(reached, gc.hole, gc.off_map, tipped)
        st.prev_distance = dist
        st.prev_action = a
        info["end_reason"] = reason
        info["bad_action"] = bad
        return self.observe(), reward, reason > 0, info
