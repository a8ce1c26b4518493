"""The simulated sensors: the IMU (specific force and angular rate at a mounting offset, with
white noise and random-walk biases) and the height scan around the vehicle.

Pure functions of the state and the ground placement, and the registry :data:`SENSORS` through
which the simulator runs the stateful ones: a :class:`Sensor` declares its state fields, the
values it starts an episode with, and its step. A new sensor is one entry there (and an
observation term in :mod:`offroad_env.task.observations` that reads its fields); the simulator has no
line per sensor. The height scan keeps no state: its observation term computes it from the map.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch

from terrain import HeightMap

from offroad_env.core import rng as rngmod
from offroad_env.physics.imu import angular_rate, specific_force
from offroad_env.physics.models import Field
from offroad_env.physics.rotations import matvec3, place_points

__all__ = ["ImuReading", "sensor_pose", "imu_at_rest", "imu_step", "height_scan", "scan_points",
           "Sensor", "SENSORS"]


class ImuReading(NamedTuple):
    """The IMU's part of the state after a step, ``(N, 3)`` each unless noted: sensor position
    ``pos_w`` [m] and velocity ``vel_w`` [m/s] (world), sensor-to-world rotation ``rot_sw``
    ``(N, 3, 3)``, the readings ``accel_s`` [m/s^2] and ``gyro_s`` [rad/s] and their biases
    (sensor frame), and the random-stream ``counters`` ``(N,)``."""

    pos_w: torch.Tensor
    vel_w: torch.Tensor
    rot_sw: torch.Tensor
    accel_s: torch.Tensor
    gyro_s: torch.Tensor
    accel_bias_s: torch.Tensor
    gyro_bias_s: torch.Tensor
    counters: torch.Tensor


def sensor_pose(contact, offset) -> tuple[torch.Tensor, torch.Tensor]:
    """IMU position, world ``(N, 3)`` [m], and sensor-to-world rotation ``(N, 3, 3)`` of a
    sensor parallel to base_link at ``offset`` (3 floats, base_link frame [m])."""
    R = contact.base_rotation
    off = torch.tensor(offset, dtype=R.dtype, device=R.device)
    return contact.base_position + matvec3(R, off), R


def imu_at_rest(R: torch.Tensor, gravity: float) -> torch.Tensor:
    """``(N, 3)`` specific force of a sensor at rest with rotation ``R`` ``(N, 3, 3)``."""
    return specific_force(torch.zeros(R.shape[:-1], dtype=R.dtype, device=R.device), R, gravity)


def imu_step(state, contact, cfg, noise, dt: float) -> ImuReading:
    """The IMU after a step of ``dt`` [s], by differencing the sensor's world trajectory:
    ``v = dp / dt``, ``a = dv / dt``, ``f = R^T (a - g_w)``; the gyro is ``log(R_prev^T R) / dt``.

    Args:
        state: the :class:`~offroad_env.core.state.SimState` before the step (its sensor fields,
            biases, keys and counters).
        contact: the new ground placement.
        cfg: the :class:`~offroad_env.sim.config.SimConfig` (``imu``, ``gravity``).
        noise: ``(accel_noise, gyro_noise)``: per-environment ``(N,)`` tensors, or None for
            ``cfg.imu``'s levels.
    """
    p, R = sensor_pose(contact, cfg.imu.offset)
    v = (p - state.sensor_pos_w) / dt
    f = specific_force((v - state.sensor_vel_w) / dt, R, cfg.gravity)
    gyro = angular_rate(state.prev_rot_sw, R, dt)
    imu = cfg.imu
    if noise is not None:  # per-environment noise levels
        a_noise, g_noise = noise[0].unsqueeze(1), noise[1].unsqueeze(1)
    else:
        a_noise, g_noise = imu.accel_noise, imu.gyro_noise
    a_bias, g_bias, counters = state.accel_bias_s, state.gyro_bias_s, state.counters
    if (noise is not None or imu.accel_noise or imu.gyro_noise or imu.accel_bias_walk
            or imu.gyro_bias_walk):
        nz = rngmod.normal(state.keys, counters, 12, f.dtype)
        counters = counters + 1
        sq = math.sqrt(dt)
        a_bias = a_bias + imu.accel_bias_walk * sq * nz[:, 6:9]
        g_bias = g_bias + imu.gyro_bias_walk * sq * nz[:, 9:12]
        f = f + a_bias + a_noise * nz[:, 0:3]
        gyro = gyro + g_bias + g_noise * nz[:, 3:6]
    return ImuReading(p, v, R, f, gyro, a_bias, g_bias, counters)


def scan_points(scan, dtype=torch.float32, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(1, nx * ny)`` each: the forward and left offsets [m] of the points of ``scan`` (a
    :class:`~offroad_env.sim.config.HeightScanConfig`) in the yaw-aligned frame of base_link,
    ``nx`` along the heading (the outer order), ``ny`` across, centred ``forward_offset``
    ahead."""
    nx, ny = scan.shape
    kw = dict(dtype=dtype, device=device)
    gx = scan.forward_offset + (torch.arange(nx, **kw) - 0.5 * (nx - 1)) * scan.resolution
    gy = (torch.arange(ny, **kw) - 0.5 * (ny - 1)) * scan.resolution
    GX, GY = torch.meshgrid(gx, gy, indexing="ij")
    return GX.reshape(1, -1), GY.reshape(1, -1)


def height_scan(maps: HeightMap, map_index: torch.Tensor, base_position: torch.Tensor,
                yaw: torch.Tensor, scan) -> torch.Tensor:
    """``(N, nx * ny)`` terrain heights [m] on the yaw-aligned grid of ``scan`` (a
    :class:`~offroad_env.sim.config.HeightScanConfig`) around base_link ``(N, 3)``, relative to its
    height; holes read ``-clip``, and every value is clipped to ``+-clip``."""
    GX, GY = scan_points(scan, dtype=base_position.dtype, device=base_position.device)
    c, s = torch.cos(yaw).unsqueeze(1), torch.sin(yaw).unsqueeze(1)
    bp = base_position
    px, py = place_points(bp[:, 0:1], bp[:, 1:2], c, s, GX, GY)
    h = maps.height(px, py, map_index.unsqueeze(1)) - bp[:, 2:3]
    return torch.nan_to_num(h, nan=-scan.clip).clamp(-scan.clip, scan.clip)


# ----------------------------------------------------------------------------- the registry
class Sensor(NamedTuple):
    """A stateful simulated sensor.

    Attributes:
        fields: its state fields by name (:class:`~offroad_env.physics.models.Field`).
        start: ``start(contact, cfg) -> {field: (M, ...)}``: the fields of episodes starting at
            rest on ``contact`` (the rest of its fields restart at zero).
        step: ``step(state, contact, cfg, params) -> {field: (N, ...)}``: the fields after a
            step that placed the vehicle at ``contact`` (``state`` still holds the last step's
            values; ``params``: per-environment parameters or None). It may return the random
            stream's ``counters`` too.
    """

    fields: dict[str, Field]
    start: Callable
    step: Callable


def _imu_start(contact, cfg) -> dict[str, torch.Tensor]:
    p, R = sensor_pose(contact, cfg.imu.offset)
    return {"sensor_pos_w": p, "prev_rot_sw": R, "accel_s": imu_at_rest(R, cfg.gravity)}


def _imu_sensor_step(state, contact, cfg, params) -> dict[str, torch.Tensor]:
    noise = None if params is None else (params["accel_noise"], params["gyro_noise"])
    r = imu_step(state, contact, cfg, noise, cfg.dt)
    return {"sensor_pos_w": r.pos_w, "sensor_vel_w": r.vel_w, "prev_rot_sw": r.rot_sw,
            "counters": r.counters, "accel_bias_s": r.accel_bias_s,
            "gyro_bias_s": r.gyro_bias_s, "accel_s": r.accel_s, "gyro_s": r.gyro_s}


#: ``{name: Sensor}``, every stateful sensor the simulator runs, in order. The IMU's fields
#: (``(N, 3)``, frames in the suffixes: ``_w`` world, ``_s`` sensor, parallel to base_link):
#: ``sensor_pos_w`` [m], ``sensor_vel_w`` [m/s], ``prev_rot_sw`` ``(N, 3, 3)`` (sensor to world
#: after the last step), the readings ``accel_s`` [m/s^2] and ``gyro_s`` [rad/s], and their
#: random-walk biases ``accel_bias_s``, ``gyro_bias_s``.
SENSORS: dict[str, Sensor] = {
    "imu": Sensor(
        fields={"sensor_pos_w": Field((3,)), "sensor_vel_w": Field((3,)),
                "prev_rot_sw": Field((3, 3), init="eye"), "accel_s": Field((3,)),
                "gyro_s": Field((3,)), "accel_bias_s": Field((3,)),
                "gyro_bias_s": Field((3,))},
        start=_imu_start, step=_imu_sensor_step),
}

