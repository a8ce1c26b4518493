"""The observation terms: one registry of name -> (size and bounds, compute);
``SimConfig.obs_terms`` picks and orders them, and ``SimConfig.observations`` adds your own
after them (:class:`offroad_env.task.terms.ObservationTerm`, the same ``spec``/``compute`` pair).

==============  ===  ==============================================  ===================
term            dim  meaning (frame, unit)                           bounds
==============  ===  ==============================================  ===================
z_rel           1    base_link height above the ground [m]           [-2, 2]
roll_pitch      2    roll, pitch [rad]                               [-pi/2, pi/2]
yaw_sincos      2    sin, cos of yaw                                 [-1, 1]
body_velocity   3    forward, left speed [m/s]; yaw rate [rad/s]     2x the maxima
imu             6    specific force [m/s^2], rate [rad/s], sensor    +-10 g, +-20 rad/s
goal            2    goal in the yaw-aligned body frame [m]          +-map diagonal
goal_polar      3    the same goal as distance [m] and the           [0, map diagonal],
                     cos, sin of its bearing (1, 0: dead ahead;      [-1, 1]
                     at the goal itself (1, 0))
command         2    commanded speed [m/s], yaw rate [rad/s]         the command ranges
prev_action     A    the previous (clipped) action                   [-1, 1]
height_scan     nxy  terrain around base_link, relative [m]          +-clip
stability       1    force-angle stability margin [rad]              [-pi/2, pi]
traction        1    share of the friction cone demanded             [0, 10]
soil            2K   each wheel's rut depth [m], then its slip       [0, r], [-2, 2]
                     ratio (last step; 0 on hard ground / for
                     kinematic models)
steering        1    the physical model's Ackermann steering         [-pi/2, pi/2]
                     angle [rad] (0 for other models and skid
                     steering)
energy_margin   1    the physical model's energy stability           [-2, 2]
                     margin [m]: the rise left to tip over the
                     nearest edge, less the rolling energy
                     toward it over m g; < 0 tips (static or
                     dynamic); rigid_body only
==============  ===  ==============================================  ===================

``soil`` for sim-to-real: a wheel's rut depth is its sinkage below the undisturbed surface, as a
wheel-mounted ranging sensor or a track-height estimate would measure it; its slip ratio is
``(omega r - v) / max(|v|, |omega r|)`` from wheel odometry against a ground-speed estimate
(visual odometry, GNSS), ``1 - v / (omega r)`` for a driven wheel (Wong's slip).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np
import torch

from offroad_env.physics.batch import merge_rows
from offroad_env.core.sensors import height_scan
from offroad_env.core.state import wheel_ruts
from offroad_env.task.terms import check_term_output

__all__ = ["ObsTerm", "TERMS", "TERM_NAMES", "Observer"]


class ObsTerm(NamedTuple):
    """``spec(cfg, vehicle, maps, action_dim) -> (dim, low, high)`` (bounds as floats or
    per-component lists) and ``compute(state, maps, cfg) -> (N, dim)``."""

    spec: Callable
    compute: Callable


def _fixed(dim, low, high):
    """The spec of a term with constant size and bounds."""
    def spec(cfg, vehicle, maps, action_dim):
        return dim, low, high
    return spec


def _velocity_spec(cfg, vehicle, maps, action_dim):
    vmax = 2.0 * cfg.max_speed
    wmax = 2.0 * max(cfg.max_yaw_rate, cfg.max_speed / max(vehicle.track_width, 1e-3))
    return 3, [-vmax, -vmax, -wmax], [vmax, vmax, wmax]


def _imu_spec(cfg, vehicle, maps, action_dim):
    g = cfg.gravity
    return 6, [-10 * g] * 3 + [-20.0] * 3, [10 * g] * 3 + [20.0] * 3


def _goal_spec(cfg, vehicle, maps, action_dim):
    far = math.hypot(*maps.size)
    return 2, -far, far


def _command_spec(cfg, vehicle, maps, action_dim):
    t = cfg.task
    return 2, [t.command_speed[0], t.command_yaw_rate[0]], [t.command_speed[1],
                                                           t.command_yaw_rate[1]]


def _action_spec(cfg, vehicle, maps, action_dim):
    return action_dim, -1.0, 1.0


def _scan_spec(cfg, vehicle, maps, action_dim):
    nx, ny = cfg.height_scan.shape
    return nx * ny, -cfg.height_scan.clip, cfg.height_scan.clip


def _z_rel(state, maps, cfg):
    bp = state.contact.base_position
    h = maps.height(bp[:, 0], bp[:, 1], state.map_index)
    return torch.nan_to_num(bp[:, 2] - h, nan=0.0).unsqueeze(1)


def _roll_pitch(state, maps, cfg):
    return torch.stack((state.contact.roll, state.contact.pitch), 1)


def _yaw_sincos(state, maps, cfg):
    return torch.stack((torch.sin(state.yaw), torch.cos(state.yaw)), 1)


def _body_velocity(state, maps, cfg):
    return state.vel_b


def _imu(state, maps, cfg):
    return torch.cat((state.accel_s, state.gyro_s), 1)


def _goal(state, maps, cfg):
    bp = state.contact.base_position
    dx = state.goal_w[:, 0] - bp[:, 0]
    dy = state.goal_w[:, 1] - bp[:, 1]
    c, s = torch.cos(state.yaw), torch.sin(state.yaw)
    return torch.stack((c * dx + s * dy, -s * dx + c * dy), 1)


def _goal_polar_spec(cfg, vehicle, maps, action_dim):
    return 3, [0.0, -1.0, -1.0], [math.hypot(*maps.size), 1.0, 1.0]


def _goal_polar(state, maps, cfg):
    """Distance and bearing of the goal: its direction is a unit vector whatever the distance,
    so a policy steers as precisely at 0.5 m as at 10 m (from ``goal``'s ``(dx, dy)`` a
    network must divide by the distance itself)."""
    g = _goal(state, maps, cfg)
    d = torch.linalg.vector_norm(g, dim=1)
    safe = d.clamp_min(1e-9)
    near = d < 1e-9
    c = torch.where(near, torch.ones_like(d), g[:, 0] / safe)
    s = torch.where(near, torch.zeros_like(d), g[:, 1] / safe)
    return torch.stack((d, c, s), 1)


def _command(state, maps, cfg):
    return state.command


def _prev_action(state, maps, cfg):
    return state.prev_action


def _height_scan(state, maps, cfg):
    return height_scan(maps, state.map_index, state.contact.base_position, state.yaw,
                       cfg.height_scan)


def _soil_spec(cfg, vehicle, maps, action_dim):
    K = vehicle.num_wheels
    return 2 * K, [0.0] * K + [-2.0] * K, [vehicle.wheel_radius] * K + [2.0] * K


def _soil(state, maps, cfg):
    return torch.cat((wheel_ruts(state), state.wheel_slip), 1)


def _steering(state, maps, cfg):
    angle = getattr(state, "steer_angle", None)
    return (torch.zeros_like(state.x) if angle is None else angle).unsqueeze(1)


def _stability(state, maps, cfg):
    return state.margin.unsqueeze(1)


def _energy_spec(cfg, vehicle, maps, action_dim):
    if cfg.dynamics != "rigid_body":
        raise ValueError(f"the energy_margin observation is the physical model's "
                         f"(dynamics='rigid_body'), not {cfg.dynamics!r}'s")
    return 1, -2.0, 2.0


def _energy_margin(state, maps, cfg):
    return state.energy_margin.unsqueeze(1)


def _traction(state, maps, cfg):
    return state.traction.unsqueeze(1)


#: every observation term, in the default order of the spec sheet
TERMS: dict[str, ObsTerm] = {
    "z_rel": ObsTerm(_fixed(1, -2.0, 2.0), _z_rel),
    "roll_pitch": ObsTerm(_fixed(2, -math.pi / 2, math.pi / 2), _roll_pitch),
    "yaw_sincos": ObsTerm(_fixed(2, -1.0, 1.0), _yaw_sincos),
    "body_velocity": ObsTerm(_velocity_spec, _body_velocity),
    "imu": ObsTerm(_imu_spec, _imu),
    "goal": ObsTerm(_goal_spec, _goal),
    "goal_polar": ObsTerm(_goal_polar_spec, _goal_polar),
    "command": ObsTerm(_command_spec, _command),
    "prev_action": ObsTerm(_action_spec, _prev_action),
    "height_scan": ObsTerm(_scan_spec, _height_scan),
    # force-angle stability margin [rad] (offroad_env.physics.stability): < 0 tips
    "stability": ObsTerm(_fixed(1, -math.pi / 2, math.pi), _stability),
    # the share of the friction cone the motion demands (1: at the limit; offroad_env.task.task)
    "traction": ObsTerm(_fixed(1, 0.0, 10.0), _traction),
    # each wheel's rut depth [m] on soil, then its slip ratio (sim-to-real: module docstring)
    "soil": ObsTerm(_soil_spec, _soil),
    # the steering angle a steering-rate action moves (the physical model's Ackermann layouts)
    "steering": ObsTerm(_fixed(1, -math.pi / 2, math.pi / 2), _steering),
    # the physical model's energy stability margin [m] (offroad_env.physics.stability)
    "energy_margin": ObsTerm(_energy_spec, _energy_margin),
}
#: the names of the built-in observation terms, in the registry's order
TERM_NAMES = tuple(TERMS)


class Observer:
    """The observation vector of a configuration: its layout, bounds and values.

    Args:
        cfg: the :class:`~offroad_env.sim.config.SimConfig` (its ``terms`` in order).
        vehicle: the preset vehicle; maps: the height maps (bounds of ``goal``);
        action_dim: A; dtype, device: of the bounds and observations.
    """

    def __init__(self, cfg, vehicle, maps, action_dim: int, dtype, device):
        self.cfg = cfg
        self.terms = []
        chosen = [(name, TERMS[name]) for name in cfg.terms] + list(cfg.observations.items())
        for name, term in chosen:
            d, lo, hi = term.spec(cfg, vehicle, maps, action_dim)
            lo = np.broadcast_to(np.asarray(lo, dtype=np.float32), (d,)).copy()
            hi = np.broadcast_to(np.asarray(hi, dtype=np.float32), (d,)).copy()
            self.terms.append((name, d, lo, hi))
        self.dim = sum(d for _, d, _, _ in self.terms)
        self._bounds_t = [(torch.as_tensor(lo, dtype=dtype, device=device),
                           torch.as_tensor(hi, dtype=dtype, device=device))
                          for _, _, lo, hi in self.terms]
        self._compute = [term.compute for _, term in chosen]
        #: per term: clipped to its bounds (the config's own terms may say not), and checked
        #: (the config's own terms: shape, dtype, finite values, eagerly)
        self._clip = [getattr(term, "clip", True) for _, term in chosen]
        self._user = [name in cfg.observations for name, _ in chosen]
        self.dtype, self.device = dtype, device

    @property
    def layout(self) -> list[tuple[str, int, int]]:
        """``[(term, start, stop)]`` slices of the observation vector."""
        out, i = [], 0
        for name, d, _, _ in self.terms:
            out.append((name, i, i + d))
            i += d
        return out

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float32 ``(D,)`` each."""
        return (np.concatenate([lo for _, _, lo, _ in self.terms]),
                np.concatenate([hi for _, _, _, hi in self.terms]))

    def check_obs(self, obs: torch.Tensor | None, n: int) -> None:
        """ValueError unless ``obs`` is None or an ``(n, D)`` tensor (what :meth:`refresh`
        takes)."""
        if obs is not None and (not isinstance(obs, torch.Tensor)
                                or tuple(obs.shape) != (n, self.dim)):
            raise ValueError(f"obs must be the ({n}, {self.dim}) observations of the state, "
                             f"got {tuple(getattr(obs, 'shape', ())) or type(obs).__name__}")

    def refresh(self, obs: torch.Tensor | None, state, maps, idx: torch.Tensor | None
                ) -> torch.Tensor:
        """``(N, D)`` observations of ``state`` where only the rows ``idx`` ``(M,)`` changed
        since ``obs`` ``(N, D)`` were observed (a reset): ``obs`` with those rows observed
        again. Each built-in term is a function of its own row, so the result is what observing
        every row gives (to the last bit where no vectorised kernel rounds a row by where it
        falls in the batch). ``obs`` or ``idx`` None, or the config's own terms (which may read
        across rows): every row is observed."""
        if obs is None or idx is None or any(self._user):
            return self(state, maps)
        return merge_rows(obs, self(state.rows(idx), maps), idx=idx)

    def __call__(self, state, maps) -> torch.Tensor:
        """``(N, D)`` observations of ``state`` on ``maps``, clipped to the bounds."""
        parts = []
        for compute, (lo_t, hi_t), clip, user, (name, d, _, _) in zip(
                self._compute, self._bounds_t, self._clip, self._user, self.terms):
            t = compute(state, maps, self.cfg)
            if user:
                check_term_output("observation", name, t, state.x.shape[0], self.device, (d,),
                                  dtype=self.dtype)
            parts.append(torch.maximum(torch.minimum(t.to(self.dtype), hi_t), lo_t) if clip
                         else t.to(self.dtype))
        return torch.cat(parts, 1)
