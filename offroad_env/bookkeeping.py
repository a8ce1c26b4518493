"""What the two Gymnasium classes share: the time limit and end reasons of a step, and the
public seams through which wrappers and training reach the simulator (they use nothing else).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch

from terrain import HeightMap

from . import rng as rngmod
from .physics.ground import GroundContact
from .tasks import REWARD_TERMS, EndReason
from .physics.vehicle import Vehicle

__all__ = ["time_limit", "StateView", "SimulatorSeams"]


def time_limit(steps: torch.Tensor, terminated: torch.Tensor, reason: torch.Tensor,
               max_episode_steps: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(truncated, reason)`` after a step: truncated ``(N,)`` bool where the episode reached
    ``max_episode_steps`` (never with None), and the end reasons with
    :attr:`EndReason.TIME_LIMIT` where an episode was truncated without terminating."""
    if max_episode_steps is None:
        return torch.zeros_like(terminated), reason
    truncated = steps >= max_episode_steps
    reason = torch.where(truncated & ~terminated,
                         torch.full_like(reason, int(EndReason.TIME_LIMIT)), reason)
    return truncated, reason


class StateView(NamedTuple):
    """A read-only view of the simulator state (references: do not write into them), N rows.

    Attributes:
        x, y, yaw: ``(N,)`` planar pose of the rear-axle frame, world [m, m, rad]; x and y
            in float64 (world coordinates can be UTM metres).
        base_position_w: ``(N, 3)`` base_link origin, world [m], float64.
        ypr: ``(N, 3)`` yaw, pitch, roll [rad]. roll, pitch: ``(N,)`` [rad].
        accel_s, gyro_s: ``(N, 3)`` IMU specific force [m/s^2] and angular rate [rad/s],
            sensor frame.
        body_velocity: ``(N, 3)`` forward, left speed [m/s], yaw rate [rad/s].
        goal_w: ``(N, 2)`` goal, world [m], float64. map_index, steps: ``(N,)`` int64.
        contact: the last :class:`~offroad_env.ground.GroundContact`, with its per-wheel loads
            (computed for the view where the step did not need them), in the simulation frame:
            its positions plus ``origin`` are world positions.
        origin: ``(3,)`` float64 world position [m] of the simulation frame's origin (the map
            centre, and a multiple of 64 m in z; zeros for maps centred at the origin).
    """

    x: torch.Tensor
    y: torch.Tensor
    yaw: torch.Tensor
    base_position_w: torch.Tensor
    ypr: torch.Tensor
    roll: torch.Tensor
    pitch: torch.Tensor
    accel_s: torch.Tensor
    gyro_s: torch.Tensor
    body_velocity: torch.Tensor
    goal_w: torch.Tensor
    map_index: torch.Tensor
    steps: torch.Tensor
    contact: GroundContact
    origin: torch.Tensor


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

    @property
    def obs_layout(self) -> list[tuple[str, int, int]]:
        """``[(term, start, stop)]`` slices of the observation vector."""
        return self.sim.obs_layout

    @property
    def reward_terms(self) -> tuple[str, ...]:
        """The reward term names, in the order of ``info["reward/<term>"]``."""
        return tuple(REWARD_TERMS)

    def state_view(self) -> StateView:
        """The current state (:class:`StateView`)."""
        st = self.sim.state
        gc = st.contact
        if gc is None:
            raise RuntimeError("the environment has not been reset yet")
        if gc.loads is None:  # computed once per step, not once per call (a recorder calls it)
            gc = st.contact = gc.with_loads()
        sim = self.sim
        xy = sim.to_world(torch.stack((st.x, st.y), 1))
        return StateView(x=xy[:, 0], y=xy[:, 1], yaw=st.yaw,
                         base_position_w=sim.to_world(gc.base_position), ypr=gc.ypr,
                         roll=gc.roll, pitch=gc.pitch, accel_s=st.accel_s, gyro_s=st.gyro_s,
                         body_velocity=st.vel_b, goal_w=sim.to_world(st.goal_w),
                         map_index=st.map_index, steps=st.steps, contact=gc,
                         origin=torch.tensor(sim.origin, dtype=torch.float64,
                                             device=st.x.device))

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

    def set_params(self, mask: torch.Tensor, **values) -> None:
        """Per-environment physical parameters (see
        :meth:`offroad_env.sim.Simulator.set_params`)."""
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
