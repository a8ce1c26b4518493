"""The seams: what the two Gymnasium classes share, and the public methods through which
wrappers and training reach the simulator (they use nothing else).

* :class:`SimulatorSeams`: the public seams over ``self.sim`` (state view, parameters, terrain,
  map ranges, reset hooks, episode steps, salted draws);
* :class:`SimulatorEnvBase`: the constructor checks, seeding and reset options both faces share;
* :func:`episode_ends`, :func:`reset_mask`, :func:`autoreset_mode`: how a step's episodes end
  (terminated, or truncated: the time limit, stuck), the ``options["reset_mask"]`` of a vector
  reset and the autoreset mode of a (wrapped) vector env, for the faces and the wrappers alike.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from terrain import HeightMap

from offroad_env.core import rng as rngmod
from offroad_env.sim.config import SimConfig, make_config
from offroad_env.core.params import PARAMS
from offroad_env.physics.vehicle import Vehicle
from offroad_env.drawing.render import Renderer
from offroad_env.sim.rest_probe import rest_shares
from offroad_env.sim.simulator import Simulator
from offroad_env.snapshot import Snapshot, face_state, restore_face
from offroad_env.lookahead import Lookahead
from offroad_env.state_view import StateView, view_of
from offroad_env.task.task import REWARD_TERMS

__all__ = ["reset_mask", "autoreset_mode", "StateView", "SimulatorSeams",
           "SimulatorEnvBase"]


def reset_mask(options: dict | None, n: int, device, check: bool = False) -> torch.Tensor:
    """``(n,)`` bool: the sub-environments a vector reset restarts (``options["reset_mask"]``;
    all without one). ``check``: ValueError unless it is an ``(n,)`` bool array selecting at
    least one (the env checks; wrappers read what the env accepted)."""
    m = (options or {}).get("reset_mask")
    if m is None:
        return torch.ones(n, dtype=torch.bool, device=device)
    m = torch.as_tensor(m, device=device)
    if check:
        if m.dtype != torch.bool or m.shape != (n,):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({n},), got "
                             f"{m.dtype} {tuple(m.shape)}")
        if not bool(m.any()):
            raise ValueError("options['reset_mask'] selects no sub-environment")
    return m


def autoreset_mode(env) -> AutoresetMode:
    """The autoreset mode of a (wrapped) vector env: its own attribute, else its metadata's
    (Gymnasium's default, NEXT_STEP, where neither says)."""
    mode = getattr(getattr(env, "unwrapped", env), "autoreset_mode", None)
    if mode is None:
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return AutoresetMode(mode)


class SimulatorSeams:
    """Public methods of :class:`~offroad_env.OffroadVectorEnv` and
    :class:`~offroad_env.OffroadEnv` over their simulator (``self.sim``) and renderer
    (``self._renderer``). Tensors have the environment index first (N = 1 for the single env).
    """

    sim = None
    _renderer = None

    @property
    def vehicle(self) -> Vehicle:
        """The nominal (preset) vehicle."""
        return self.sim.vehicle

    def use_compiled(self, on: bool = True) -> None:
        """Run the step ``torch.compile``d (``on``) or eager from now on, as ``compile=`` at
        construction would (the compile happens at the next step): training starts eager and
        switches at a fixed iteration (``train.ppo --compile-after``)."""
        self.sim.use_compiled(on)

    @property
    def obs_layout(self) -> list[tuple[str, int, int]]:
        """``[(term, start, stop)]`` slices of the observation vector."""
        return self.sim.obs_layout

    @property
    def reward_terms(self) -> tuple[str, ...]:
        """The reward term names, in the order of ``info["reward/<term>"]``: the built-in
        ones, then the config's own (``SimConfig.rewards``)."""
        return tuple(REWARD_TERMS) + tuple(self.sim.cfg.rewards)

    @property
    def end_labels(self) -> dict[int, str]:
        """``{code: label}`` of ``info["end_reason"]``: :class:`~offroad_env.task.task.EndReason`
        and the config's termination terms (``SimConfig.terminations``)."""
        return dict(self.sim.task.end_labels)

    _view_contact = None  # (the state's placement, it with loads): computed once per step

    def state_view(self) -> StateView:
        """The current state (:class:`~offroad_env.state_view.StateView`); it reads the
        simulator and writes nothing (per-wheel loads a step did not need are computed for
        the view and kept with it)."""
        st = self.sim.state
        gc = st.contact
        if gc is None:
            raise RuntimeError("the environment has not been reset yet")
        if gc.loads is None:  # once per step, not once per call (a recorder calls it)
            cached = self._view_contact
            if cached is None or cached[0] is not gc:
                cached = self._view_contact = (gc, gc.with_loads())
            gc = cached[1]
        return view_of(self.sim, gc)

    def get_state(self) -> Snapshot:
        """A snapshot of everything a step reads (:mod:`offroad_env.snapshot`); for an env
        built by ``gymnasium.make`` use :func:`offroad_env.get_state`, which keeps its
        ``TimeLimit`` too."""
        return face_state(self)

    def set_state(self, snapshot: Snapshot) -> None:
        """Put a snapshot of this env, or of another of the same config and maps, back;
        ValueError naming what differs where it does not fit (the env is then unchanged)."""
        restore_face(self, snapshot)

    _lookaheads = None

    def lookahead(self, snapshot: Snapshot, actions, horizon: int | None = None):
        """Step ``actions`` ``(H, M, A)`` from ``snapshot`` (M rows of this env's snapshot,
        selected or repeated) on a second simulator that shares this env's maps; the live
        environments are untouched. No autoreset: a row that ended stays ended. Returns a
        :class:`~offroad_env.lookahead.Rollout` of ``(H, M, ...)`` tensors.

        ``actions`` may instead be a policy ``act(obs (M, D)) -> (M, A)``, run closed loop
        for at most ``horizon`` steps and stopped once every row has ended; a privileged one
        (``reads_state = True``) is called ``act(obs, view)`` with the rows' own
        :class:`~offroad_env.state_view.StateView` (:class:`offroad_env.lookahead.Lookahead`)."""
        if self._lookaheads is None:
            self._lookaheads = {}
        m = len(snapshot)
        if m not in self._lookaheads:
            self._lookaheads[m] = Lookahead(self.sim, m, self.max_episode_steps)
        return self._lookaheads[m](snapshot, actions, horizon)

    def check_action(self, action) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate an ``(N, 2)`` action tensor as a step would: ``(clipped, bad-row mask)``;
        raises ValueError naming the bad environments (``nan_action="raise"``)."""
        return self.sim.check_action(action)

    def add_reset_hook(self, hook: Callable[[torch.Tensor], None]) -> None:
        """Call ``hook(mask)`` (``(N,)`` bool) at the start of every reset, autoresets
        included, before the spawns are drawn."""
        self.sim.add_reset_hook(hook)

    @property
    def params(self) -> dict | None:
        """The per-environment parameters (:meth:`set_params`), or None when nominal."""
        return self.sim.params

    @property
    def param_names(self) -> tuple[str, ...]:
        """The per-environment parameters :meth:`set_params` takes for this env's model on its
        maps."""
        refused = self.sim.model.param_refusals(PARAMS, self.sim.maps)
        return tuple(n for n in PARAMS if n not in refused)

    def set_params(self, mask: torch.Tensor, **values) -> None:
        """Per-environment physical parameters (see
        :meth:`offroad_env.sim.simulator.Simulator.set_params`)."""
        self.sim.set_params(mask, **values)

    @property
    def terrain(self) -> HeightMap:
        """The height maps the environments drive on (world frame, as given)."""
        return self.sim.world_maps

    def set_terrain(self, maps: HeightMap) -> None:
        """Drive on ``maps`` (same extent as the configured ones) from the next reset on."""
        self.sim.set_terrain(maps)
        self.invalidate_render_cache()

    def set_map_range(self, lo, count) -> None:
        """Draw each environment's map, from its next reset on, among maps ``lo .. lo + count -
        1`` of :attr:`terrain` (``(N,)`` ints); ``None, None``: the whole stack. A terrain
        curriculum gives each environment its level's maps this way."""
        self.sim.set_map_range(lo, count)

    def rest_shares(self, samples: int = 32, seed: int = 0) -> torch.Tensor:
        """``(M,)`` float64: per map of :attr:`terrain`, the share of ``samples`` spawns drawn
        on it (fixed streams of ``seed``) that are a stable rest for the nominal vehicle, by
        the reset's own code and judgement (:func:`offroad_env.sim.rest_probe.rest_shares`); the
        env's state and streams are not touched. A map range whose share is near 0 stops a
        reset (its redraws run out)."""
        return rest_shares(self.sim, samples, seed)

    def set_episode_steps(self, steps) -> None:
        """Set every environment's elapsed steps in its episode (``(N,)`` ints >= 0): the time
        limit counts on from there. Training spreads them at its first reset so that episodes
        do not all end together."""
        st = self.sim.state
        s = torch.as_tensor(steps, device=st.steps.device)
        if s.shape != st.steps.shape or s.is_floating_point() or bool((s < 0).any()):
            raise ValueError(f"steps must be {tuple(st.steps.shape)} integers >= 0, got "
                             f"{s.dtype} {tuple(s.shape)}")
        st.steps = s.to(torch.int64).clone()

    def draw_uniform(self, n: int, salt: int) -> torch.Tensor:
        """``(N, n)`` uniforms from each environment's own random stream, salted (so they are
        independent of the env's own draws) and without advancing it: the same seed gives the
        same numbers, and sub-env i of a vector env those of a single env seeded ``s + i``."""
        st = self.sim.state
        return rngmod.uniform(st.keys ^ salt, st.counters, n, self.sim.dtype)

    def invalidate_render_cache(self) -> None:
        """Forget cached renderings of the maps."""
        if self._renderer is not None:
            self._renderer.invalidate()

    def render_extent(self, env: int = 0) -> tuple[float, float, float, float]:
        """World ``(x0, x1, y0, y1)`` [m] that ``render()``'s frame of sub-environment ``env``
        shows now (to draw it on axes in metres); ValueError without ``render_mode``."""
        if self._renderer is None:
            raise ValueError("render_extent needs render_mode='rgb_array'")
        return self._renderer.extent(env)


class SimulatorEnvBase(SimulatorSeams):
    """What :class:`~offroad_env.OffroadEnv` and :class:`~offroad_env.OffroadVectorEnv` share:
    the constructor's checks, the seeding of the per-environment streams and the reset
    options. A face calls ``_build`` in its constructor, ``_seed`` and
    ``_start_options`` in its ``reset``."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def _build(self, task, config: SimConfig | None, num_envs: int, max_episode_steps,
               render_mode, device, dtype, compile: bool, overrides: dict) -> None:
        render_view = overrides.pop("render_view", "auto")
        render_window = overrides.pop("render_window", 40.0)
        cfg = make_config(task, config, **overrides)
        if max_episode_steps is not None and (int(max_episode_steps) != max_episode_steps
                                              or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be an int >= 1 or None, got "
                             f"{max_episode_steps!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.sim = Simulator(cfg, num_envs, device=device, dtype=dtype, compile=compile)
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self._renderer = Renderer(self.sim, view=render_view, window=render_window)
        if not render_mode:
            self._renderer = None
        self._seeded = False

    @property
    def config(self) -> SimConfig:
        return self.sim.cfg

    def _seed(self, seed, mask: torch.Tensor, reset_np_random: Callable) -> None:
        """Seed the streams of the masked sub-environments: an int ``s`` gives sub-env i the
        seed ``s + i``; a list gives one seed (or None) per sub-env; None continues each
        stream (the first reset draws keys from ``np_random``). ``reset_np_random(seed)`` is
        the Gymnasium base class's ``reset`` (it seeds ``np_random``)."""
        sim, n = self.sim, self.sim.n
        dev = sim.device
        if isinstance(seed, (list, tuple)):
            if len(seed) != n:
                raise ValueError(f"a list of seeds needs {n} entries, got {len(seed)}")
            given = torch.tensor([s is not None for s in seed], device=dev)
            reset_np_random(None)
            keys = rngmod.keys_from_seeds([s if s is not None else 0 for s in seed], dev)
            if not self._seeded:
                keys = torch.where(given, keys, rngmod.random_keys(self.np_random, n, dev))
                given = torch.ones_like(given)
            sim.set_keys(keys, mask & given)
        elif seed is not None:
            reset_np_random(int(seed))
            seeds = int(seed) + torch.arange(n, dtype=torch.int64)
            sim.set_keys(rngmod.keys_from_seeds(seeds, dev), mask)
        elif not self._seeded:
            reset_np_random(None)
            sim.set_keys(rngmod.random_keys(self.np_random, n, dev), torch.ones_like(mask))
        else:
            return
        self._seeded = True

    def _start_options(self, options: dict | None):
        """``(start_pose, goal)`` of ``options`` (world frame; None where not given), as
        ``(N, 3)`` and ``(N, 2)`` tensors for the simulator to check."""
        out = []
        for key in ("start_pose", "goal"):
            v = (options or {}).get(key)
            if v is not None and not isinstance(v, torch.Tensor):
                v = torch.as_tensor(np.asarray(v, dtype=np.float64))
                if self.sim.n == 1 and v.ndim == 1:
                    v = v.reshape(1, -1)
            out.append(v)
        return tuple(out)
