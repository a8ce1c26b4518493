"""The batched simulator: the orchestrator of one step and one reset of N environments, with the
compile plumbing. No per-environment Python loop, and no line per vehicle model, sensor or
reward term.

One step (:meth:`Simulator.step`): actuate and place (the vehicle model,
:data:`~offroad_env.physics.models.MODELS`) -> sense (:data:`~offroad_env.core.sensors.SENSORS`) ->
judge (the :class:`~offroad_env.task.task.Task`: reward terms, reward, end reasons) -> observe
(:mod:`offroad_env.task.observations`), over the state declared in :mod:`.state`. A reset draws
spawns (:mod:`.spawn`) and places the vehicles at rest. The Gymnasium classes
(:mod:`.vector_env`, :mod:`.env`) own a :class:`Simulator` and add the Gymnasium contract.
On the CPU an eager step or reset of few rows runs on one thread
(:class:`~offroad_env.core.devices.batch_threads`): two threads only wait on each other there.
"""

from __future__ import annotations

import numbers

from typing import Callable

import numpy as np
import torch

from terrain import HeightMap

from offroad_env.core import rng as rngmod
from offroad_env.core.actions import ActionCheck
from offroad_env.sim.config import SimConfig
from offroad_env.core.devices import batch_threaded, check_device
from offroad_env.core.devices import compile as compile_fn
from offroad_env.task.terms import EVENT_MODES, run_events, term_fields
from offroad_env.core.frames import build_maps, local_origin, localize, to_local
from offroad_env.core.next_starts import NextStarts, start_rows
from offroad_env.task.observations import Observer
from offroad_env.core.params import nominal_params, update_params
from offroad_env.physics.models import model_class
from offroad_env.physics.vehicle import VehicleBatch, preset
from offroad_env.core.sensors import SENSORS
from offroad_env.core.spawn import (check_goal_range, check_map_range, check_on_map, check_rows,
                    slope_limits, spawn_with_redraws, start_at_rest)
from offroad_env.core.state import CORE_FIELDS, SimState, join_fields
from offroad_env.task.task import Task, contain_divergence

__all__ = ["Simulator", "check_device"]


def _check_new_terrain(sim, maps: HeightMap) -> None:
    """ValueError unless ``maps`` can replace ``sim``'s (:meth:`Simulator.set_terrain`)."""
    if maps.size != sim.world_maps.size or maps.bounds != sim.world_maps.bounds:
        raise ValueError(f"terrain {maps!r} must cover the env's map: size "
                         f"{sim.world_maps.size}, bounds {sim.world_maps.bounds}")
    _check_maps(sim.model, maps, sim.cfg.task)
    if sim.map_range is not None and bool((sum(sim.map_range) > len(maps)).any()):
        raise ValueError(f"terrain {maps!r} has fewer maps than the env's map range needs")


def _check_maps(model, maps: HeightMap, task) -> None:
    """ValueError where ``maps`` cannot hold the task's goals or the model cannot drive them."""
    check_goal_range(maps, task)
    slope_limits(maps, task)  # one limit, or one per map
    model.check_maps(maps)


def _check_num_envs(num_envs) -> None:
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Real) \
            or int(num_envs) != num_envs or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")


class Simulator:
    """N environments as tensors on one device.

    Attributes: ``cfg``; ``n``; ``model`` (the vehicle model, ``MODELS[cfg.dynamics]``);
    ``task`` (the :class:`~offroad_env.task.task.Task`); ``state``
    (:class:`~offroad_env.core.state.SimState`: poses, goals, sensors, the last placement
    ``state.contact``); ``maps`` (the height-map stack, simulation frame); ``vehicle`` (the
    preset); ``params`` (per-environment parameters, None until :meth:`set_params`);
    ``obs_layout``.
    """

    def __init__(self, cfg: SimConfig, num_envs: int, device="cpu", dtype=torch.float32,
                 compile: bool = False):
        _check_num_envs(num_envs)
        self.cfg = cfg
        self.n = int(num_envs)
        self.device = check_device(device)
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
        self.dtype = dtype
        self.vehicle = preset(cfg.vehicle)
        self.model = model_class(cfg.dynamics)(cfg, self.vehicle)
        self.action_dim = self.model.action_dim
        self.actions = ActionCheck(self.n, self.action_dim, self.device, dtype, cfg.nan_action)
        world = build_maps(cfg)
        #: world ``(x, y, z)`` [m] of the simulation frame's origin (float64): the state, the
        #: contact and ``maps`` are in that frame (:func:`~offroad_env.core.frames.to_world`)
        self.origin = local_origin(world)
        #: the height maps as given (world frame), and in the simulation frame
        self.world_maps = world.to(device=self.device, dtype=dtype)
        self.maps = localize(world, self.origin, self.device, dtype)
        _check_maps(self.model, self.maps, cfg.task)
        self.observer = Observer(cfg, self.vehicle, self.maps, self.action_dim, dtype,
                                 self.device)
        self.obs_dim = self.observer.dim
        self.task = Task(cfg, self.vehicle, self.model, self.device)
        fields = join_fields(("the state", CORE_FIELDS), (f"model {cfg.dynamics!r}",
                                                          self.model.fields),
                             *((f"sensor {k!r}", s.fields) for k, s in SENSORS.items()),
                             ("the task", self.task.fields), *term_fields(cfg))
        self.state = SimState.zeros(self.n, self.vehicle.num_wheels, self.action_dim, dtype,
                                    self.device, fields)
        #: per-environment parameters (:meth:`set_params`); None: the nominal vehicle and sensors
        self.params: dict | None = None
        self._veh = self.vehicle  # the vehicle the physics uses (a VehicleBatch with params)
        self._reset_hooks: list[Callable] = []
        self._events = {m: {k: e for k, e in cfg.events.items() if e.mode == m}
                        for m in EVENT_MODES}  # the config's event terms by mode
        self._cold_chunk = min(self.n, 64)  # cold placements: fixed chunks (one compile)
        self.use_compiled(compile)
        #: partial resets compute only the reset rows (reading their indices on the host); off
        #: on accelerators, where every row is computed and the reset ones kept (no host sync)
        self.subset_resets = self.device.type == "cpu"
        #: ``(lo, count)`` ``(N,)`` per-env map ranges (:meth:`set_map_range`), or None
        self.map_range = None
        #: the next starts prepared in batches (:mod:`.next_starts`; None: off): on for the
        #: CPU, where a reset costs mostly per call
        self.next_starts = NextStarts(self)

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
        """Set per-environment physical parameters (:data:`~offroad_env.core.params.PARAMS`, shapes
        and units there) of the masked rows (values over all N; unset ones kept); the model, the
        tip limits and the IMU use them from the next placement on."""
        base = self.params if self.params is not None else nominal_params(
            self.vehicle, self.cfg, self.n, self.dtype, self.device)
        no = self.model.param_refusals(values, self.maps)  # what the model cannot vary here
        self.use_params(update_params(base, mask, values, no))

    def use_params(self, params: dict | None) -> None:
        """Take ``params`` (checked, all N rows; None: the nominal vehicle) as they are (a
        snapshot's restore)."""
        self.params = p = params
        self._veh = self.vehicle if p is None else VehicleBatch(self.vehicle, p["mass"],
                                                                 p["com"], p["wheel_radius"])
        self.task.set_vehicle(self._veh)

    def set_terrain(self, maps: HeightMap) -> None:
        """Drive on ``maps`` (one map or a stack, world frame) from the next reset on. They must
        cover the configured maps' extent (the observation bounds depend on it); they are
        simulated in the same frame (:attr:`origin`)."""
        _check_new_terrain(self, maps)
        self.world_maps = maps.to(device=self.device, dtype=self.dtype)
        self.maps = localize(maps, self.origin, self.device, self.dtype)

    def set_map_range(self, lo, count) -> None:
        """Draw each environment's map, from its next reset on, from maps ``lo .. lo + count -
        1`` of the stack (``(N,)`` ints; a terrain curriculum gives each env its level's
        maps); ``None, None``: from the whole stack."""
        if lo is None and count is None:
            self.map_range = None
            return
        self.map_range = check_map_range(lo, count, self.n, len(self.maps), self.device)

    def set_keys(self, keys: torch.Tensor, mask: torch.Tensor) -> None:
        """Give the masked environments new random streams (keys) and restart their counters."""
        st = self.state
        st.keys = torch.where(mask, keys.to(self.device), st.keys)
        st.counters = torch.where(mask, torch.zeros_like(st.counters), st.counters)

    def observe(self) -> torch.Tensor:
        """``(N, D)`` observations of the current state, clipped to the bounds."""
        return self.observer(self.state, self.maps)

    # ------------------------------------------------------------------ reset
    def _draw(self, n: int, idx: torch.Tensor | None, use: torch.Tensor) -> torch.Tensor:
        """``n`` counter-based uniforms for the environments ``idx`` (None: all N), advancing
        the counters where ``use`` (bool, one per selected environment) is set."""
        st = self.state
        if idx is None:
            u = rngmod.uniform(st.keys, st.counters, n, self.dtype)
            st.counters = st.counters + use.to(torch.int64)
            return u
        u = rngmod.uniform(st.keys[idx], st.counters[idx], n, self.dtype)
        st.counters = st.counters.index_add(0, idx, use.to(torch.int64))
        return u

    @batch_threaded(lambda self: (self.n, self.device, self.compiled))
    def reset(self, mask: torch.Tensor, start_pose: torch.Tensor | None = None,
              goal: torch.Tensor | None = None, obs: torch.Tensor | None = None
              ) -> torch.Tensor:
        """Start new episodes in the masked environments; returns all observations ``(N, D)``.

        ``start_pose``: optional ``(N, 3)`` planar rear-axle pose ``(x, y, yaw)`` [m, m, rad],
        world frame, used instead of the random spawn (the goal and command are still drawn).
        ``goal``: optional ``(N, 2)`` world goal [m] used instead of the drawn one. ``obs``: the
        ``(N, D)`` observations the step just returned: given, only the reset rows are observed
        again (:meth:`~offroad_env.task.observations.Observer.refresh`).

        Every reset environment starts on a stable rest with its goal at ``goal_distance`` in
        the map less the margin: spawns that are not are drawn again from the environment's own
        stream (a ``start_pose`` is kept as given). On the CPU only the masked environments are
        computed (their indices are read on the host); on an accelerator (``subset_resets`` off)
        every environment is, and the masked rows are kept, with one host sync per check round
        (goals and holes, then the rest).
        """
        self.observer.check_obs(obs, self.n)  # before anything changes
        for hook in self._reset_hooks:
            hook(mask)
        if self._events["reset"]:
            run_events(self, self._events["reset"], mask)
        start = None
        if start_pose is not None:
            start = check_rows("start_pose", start_pose, self.n, 3, self.device)
            start = torch.cat((to_local(self.origin, start[:, :2], self.dtype, self.device),
                               start[:, 2:].to(self.dtype)), 1)
            check_on_map(self.maps, self.origin, start_pose, start, mask)
        if goal is not None:
            goal = to_local(self.origin, check_rows("goal", goal, self.n, 2, self.device),
                            self.dtype, self.device)
        st = self.state
        idx = None
        if st.contact is not None and self.subset_resets:
            idx = torch.nonzero(mask).squeeze(1)
            if idx.numel() == self.n:
                idx = None
        if idx is not None:
            start = None if start is None else start[idx]
            goal = None if goal is None else goal[idx]
        gc = start_rows(self, mask, idx, start, goal)
        for sensor in SENSORS.values():
            st.put(mask, idx, **sensor.start(gc, self.cfg))
        st.put(mask, idx, **self.task.start(st, gc, self.maps, self.params, idx))
        return self.observer.refresh(obs, st, self.maps, idx)

    def _start_episodes(self, mask: torch.Tensor, idx: torch.Tensor | None,
                        start: torch.Tensor | None, goal: torch.Tensor | None = None):
        """Draw spawns for the masked rows (``idx``: their indices, or None for all N rows),
        restart their state and place them; returns the placement of those rows (all N rows
        when ``idx`` is None). ``start``/``goal``: rows of given poses/goals (local frame)."""
        use = mask if idx is None else torch.ones_like(idx, dtype=torch.bool)
        rng = self.map_range
        if rng is not None and idx is not None:
            rng = (rng[0][idx], rng[1][idx])
        s = spawn_with_redraws(lambda k, adv: self._draw(k, idx, adv), use, self.maps,
                               self.vehicle, self.cfg.task, start, goal, rng)
        self.state.restart(mask, idx, x=s.x, y=s.y, yaw=s.yaw, map_index=s.map_index,
                           goal_w=torch.stack((s.goal_x, s.goal_y), 1),
                           command=torch.stack((s.cmd_speed, s.cmd_yaw_rate), 1))
        return start_at_rest(self, self._place_rows(mask, idx), mask, idx)

    def _place_rows(self, mask: torch.Tensor, idx: torch.Tensor | None):
        """Place the reset environments at rest and merge them into ``state.contact``; returns
        the placement of the reset rows (all N rows when ``idx`` is None)."""
        st = self.state
        if idx is None and self._cold_fn is not None and not self.subset_resets \
                and st.contact is not None:
            # accelerators: every reset places all rows; compiled, as the step (one graph)
            gc = self._cold_fn(None)
            st.contact = st.contact.merge_rows(gc, mask)
        elif idx is None:
            gc = self._place_cold(None)
            st.contact = gc if st.contact is None else st.contact.merge_rows(gc, mask)
        elif self._cold_fn is None:
            gc = self._place_cold(idx)
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

    def _place_cold(self, idx: torch.Tensor | None):
        """The model's placement at rest of the environments ``idx`` (None: all), with loads
        (the function :attr:`_cold_fn` compiles)."""
        veh = self._veh
        if idx is not None and self.params is not None:
            p = self.params
            veh = VehicleBatch(self.vehicle, p["mass"][idx], p["com"][idx],
                               p["wheel_radius"][idx])
        return self.model.place(self.state, veh, self.maps, idx)

    def use_compiled(self, on: bool = True) -> None:
        """The step (after the action checks) and the cold placement of reset rows compiled
        (``on``; at their next call) or eager from now on: the two agree to float rounding."""
        cfg, self.compiled = self.cfg, bool(on)
        own = [*cfg.rewards, *cfg.terminations, *cfg.observations]
        self._advance_fn = (compile_fn(self._advance, dynamic=False, graph_breaks=(
            f"user term(s) {own}" if own else None)) if on else self._advance)
        self._cold_fn = compile_fn(self._place_cold, dynamic=False) if on else None

    # ------------------------------------------------------------------ step
    def check_action(self, action) -> tuple[torch.Tensor, torch.Tensor]:
        """``(clipped action, bad-row mask)`` of an ``(N, A)`` action
        (:class:`~offroad_env.core.actions.ActionCheck`)."""
        return self.actions(action)

    @batch_threaded(lambda self: (self.n, self.device, self.compiled))
    def step(self, action):
        """Advance every environment one control step.

        Returns ``(obs (N, D), reward (N,), terminated (N,) bool, info)``; ``info`` holds
        ``reward/<term>`` ``(N,)``, ``end_reason`` (:class:`~offroad_env.task.task.EndReason`
        codes, int64 ``(N,)``) and ``bad_action`` ``(N,)`` bool."""
        return self.step_checked(*self.actions(action))

    def step_checked(self, a: torch.Tensor, bad: torch.Tensor):
        """:meth:`step` for a checked action ``a`` and its bad-row mask ``bad``."""
        if self._events["interval"]:  # eagerly, on the rows whose next step is a k-th one
            run_events(self, self._events["interval"], None)
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
        """One physics step of ``dt`` with the clipped action ``a`` ``(N, A)``: actuate and
        place -> sense -> judge -> observe. Updates :attr:`state`; returns ``(obs, reward,
        terminated, info)`` as :meth:`step`."""
        st = self.state
        motion = self.model.advance(st, self._veh, self.params, self.maps, a,
                                    want_loads=self.task.needs_loads)
        for sensor in SENSORS.values():
            for name, value in sensor.step(st, motion.contact, self.cfg, self.params).items():
                setattr(st, name, value)
        st.contact = motion.contact
        st.steps = st.steps + 1
        terms, reward, reason = self.task.step(st, motion, a, self.maps, self.params)
        st.vel_b, st.wheel_slip = motion.vel_b, motion.drive.kappa
        st.prev_action = a
        obs, reward, reason, terms = contain_divergence(self.observe(), reward, reason, terms)
        info = {**{f"reward/{name}": value for name, value in terms.items()},
                "end_reason": reason, "bad_action": bad}
        return obs, reward, reason > 0, info
