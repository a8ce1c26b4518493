"""The observation terms: one registry of name -> (size and bounds, compute). A new term is one
entry of :data:`TERMS`; ``SimConfig.obs_terms`` picks and orders them.

==============  ===  ==========================================  ===================
term            dim  meaning (frame, unit)                       bounds
==============  ===  ==========================================  ===================
z_rel           1    base_link height above the ground [m]       [-2, 2]
roll_pitch      2    roll, pitch [rad]                           [-pi/2, pi/2]
yaw_sincos      2    sin, cos of yaw                             [-1, 1]
body_velocity   3    forward, left speed [m/s]; yaw rate [rad/s]  2x the maxima
imu             6    specific force [m/s^2], rate [rad/s], sensor  +-10 g, +-20 rad/s
goal            2    goal in the yaw-aligned body frame [m]      +-map diagonal
command         2    commanded speed [m/s], yaw rate [rad/s]     the command ranges
prev_action     A    the previous (clipped) action               [-1, 1]
height_scan     nxy  terrain around base_link, relative [m]      +-clip
==============  ===  ==========================================  ===================
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np
import torch

from .actuation import body_velocity
from .sensors import height_scan

__all__ = ["ObsTerm", "TERMS", "TERM_NAMES", "Observer"]


class ObsTerm(NamedTuple):
    """``spec(cfg, vehicle, maps, action_dim) -> (dim, low, high)`` (bounds as floats or
    per-component lists) and ``compute(state, maps, cfg) -> (N, dim)``."""

    spec: Callable
    compute: Callable


def _speeds(cfg, vehicle):
    vmax = 2.0 * cfg.max_speed
    wmax = 2.0 * max(cfg.max_yaw_rate, cfg.max_speed / max(vehicle.track_width, 1e-3))
    return (3, [-vmax, -vmax, -wmax], [vmax, vmax, wmax])


def _z_rel(state, maps, cfg):
    bp = state.contact.base_position
    h = maps.height(bp[:, 0], bp[:, 1], state.map_index)
    return torch.nan_to_num(bp[:, 2] - h, nan=0.0).unsqueeze(1)


def _goal(state, maps, cfg):
    bp = state.contact.base_position
    dx = state.goal_w[:, 0] - bp[:, 0]
    dy = state.goal_w[:, 1] - bp[:, 1]
    c, s = torch.cos(state.yaw), torch.sin(state.yaw)
    return torch.stack((c * dx + s * dy, -s * dx + c * dy), 1)


def _scan_spec(cfg, vehicle, maps, action_dim):
    nx, ny = cfg.height_scan.shape
    return (nx * ny, -cfg.height_scan.clip, cfg.height_scan.clip)


#: every observation term, in the default order of the spec sheet
TERMS: dict[str, ObsTerm] = {
    "z_rel": ObsTerm(lambda cfg, veh, maps, A: (1, -2.0, 2.0), _z_rel),
    "roll_pitch": ObsTerm(
        lambda cfg, veh, maps, A: (2, -math.pi / 2, math.pi / 2),
        lambda st, maps, cfg: torch.stack((st.contact.roll, st.contact.pitch), 1)),
    "yaw_sincos": ObsTerm(
        lambda cfg, veh, maps, A: (2, -1.0, 1.0),
        lambda st, maps, cfg: torch.stack((torch.sin(st.yaw), torch.cos(st.yaw)), 1)),
    "body_velocity": ObsTerm(lambda cfg, veh, maps, A: _speeds(cfg, veh),
                             lambda st, maps, cfg: body_velocity(st, cfg.dynamics)),
    "imu": ObsTerm(
        lambda cfg, veh, maps, A: (6, [-10 * cfg.gravity] * 3 + [-20.0] * 3,
                                   [10 * cfg.gravity] * 3 + [20.0] * 3),
        lambda st, maps, cfg: torch.cat((st.accel_s, st.gyro_s), 1)),
    "goal": ObsTerm(lambda cfg, veh, maps, A: (2, -math.hypot(*maps.size),
                                               math.hypot(*maps.size)), _goal),
    "command": ObsTerm(
        lambda cfg, veh, maps, A: (2, [cfg.task.command_speed[0], cfg.task.command_yaw_rate[0]],
                                   [cfg.task.command_speed[1], cfg.task.command_yaw_rate[1]]),
        lambda st, maps, cfg: st.command),
    "prev_action": ObsTerm(lambda cfg, veh, maps, A: (A, -1.0, 1.0),
                           lambda st, maps, cfg: st.prev_action),
    "height_scan": ObsTerm(
        _scan_spec, lambda st, maps, cfg: height_scan(maps, st.map_index,
                                                      st.contact.base_position, st.yaw,
                                                      cfg.height_scan)),
}
TERM_NAMES = tuple(TERMS)


class Observer:
    """The observation vector of a configuration: its layout, bounds and values.

    Args:
        cfg: the :class:`~offroad_env.config.SimConfig` (its ``terms`` in order).
        vehicle: the preset vehicle; maps: the height maps (bounds of ``goal``);
        action_dim: A; dtype, device: of the bounds and observations.
    """

    def __init__(self, cfg, vehicle, maps, action_dim: int, dtype, device):
        self.cfg = cfg
        self.terms = []
        for name in cfg.terms:
            d, lo, hi = TERMS[name].spec(cfg, vehicle, maps, action_dim)
            lo = np.broadcast_to(np.asarray(lo, dtype=np.float32), (d,)).copy()
            hi = np.broadcast_to(np.asarray(hi, dtype=np.float32), (d,)).copy()
            self.terms.append((name, d, lo, hi))
        self.dim = sum(d for _, d, _, _ in self.terms)
        self._bounds_t = [(torch.as_tensor(lo, dtype=dtype, device=device),
                           torch.as_tensor(hi, dtype=dtype, device=device))
                          for _, _, lo, hi in self.terms]
        self._compute = [TERMS[name].compute for name, _, _, _ in self.terms]
        self.dtype = dtype

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

    def __call__(self, state, maps) -> torch.Tensor:
        """``(N, D)`` observations of ``state`` on ``maps``, clipped to the bounds."""
        parts = []
        for compute, (lo_t, hi_t) in zip(self._compute, self._bounds_t):
            t = compute(state, maps, self.cfg)
            parts.append(torch.maximum(torch.minimum(t.to(self.dtype), hi_t), lo_t))
        return torch.cat(parts, 1)
