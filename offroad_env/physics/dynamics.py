"""Planar vehicle dynamics, batched over N environments (first dimension).

* :func:`unicycle_step` -- the unicycle-odometry seed's contract, exactly: forward Euler with the
  heading held at its start-of-step value, heading raw and never wrapped::

      x += v Ts cos(theta),   y += v Ts sin(theta),   theta += omega Ts

  :func:`wheel_speeds_to_body` gives ``v = r/2 (wL + wR)``, ``omega = r/b (wR - wL)``.
* :func:`ackermann_step` -- kinematic bicycle (the four-wheel seed's example drives its Husky
  with it): ``theta' = v tan(psi) / L``, steering angle ``psi`` with angle and rate limits.
* :func:`skid_steer_step` -- a planar rigid body on K wheels with wheel spin dynamics and slip:
  ``I_w w' = T - R F_x - b_w w``; slip ratio and angle per wheel; hard ground: linear forces on
  the friction ellipse ``mu F_z``; soft ground: the seed's traction surrogate plus extra motion
  resistance; rolling resistance; gravity along the slope from roll and pitch. ``F_z`` per wheel
  comes from ground following (:mod:`offroad_env.ground`), so a wheel in the air has no traction.

Frames: world z up; body x forward, y left. Poses ``(x, y, yaw)`` are the rear-axle frame's (as
in ground following). Skid-steer velocities are those of the centre of mass in the body frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

from .constants import GRAVITY
from .slip import (friction_ellipse, rolling_resistance, slip_angle, slip_ratio, smooth_sign,
                   soft_soil_traction)
from .vehicle import Vehicle

__all__ = ["INTEGRATORS", "EXACT_SUBSTEPS", "CONTROLLERS", "braked_body_forces", "unicycle_step", "wheel_speeds_to_body",
           "AckermannParams", "ackermann_step",
           "SkidSteerParams", "SkidSteerState", "skid_steer_step", "side_targets",
           "speed_controller"]


#: the kinematic models' integrators: ``"euler"`` (the unicycle seed's contract) or ``"exact"``
INTEGRATORS = ("euler", "exact")

#: substeps of the exact Ackermann step (the steering angle moves within a step; 4 already give
#: the four-wheel seed's example to its printed digits)
EXACT_SUBSTEPS = 8


# ----------------------------------------------------------------------------- unicycle
def unicycle_step(x, y, theta, v, omega, dt: float, integrator: str = "euler"):
    """One step of the unicycle. All ``(N,)`` tensors; returns the new ``(x, y, theta)``;
    ``theta`` is not wrapped.

    ``integrator="euler"``: forward Euler, the seed's recursion. ``"exact"``: the circular arc
    of constant ``v`` and ``omega``, exact for any ``dt``: the chord ``v dt sinc(omega dt / 2)``
    along ``theta + omega dt / 2``."""
    if integrator == "euler":
        return x + v * dt * torch.cos(theta), y + v * dt * torch.sin(theta), theta + omega * dt
    if integrator != "exact":
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    half = 0.5 * omega * dt
    chord = v * dt * torch.sinc(half / math.pi)  # torch.sinc(u) = sin(pi u) / (pi u)
    mid = theta + half
    return x + chord * torch.cos(mid), y + chord * torch.sin(mid), theta + omega * dt


def wheel_speeds_to_body(w_left, w_right, wheel_radius: float, track: float):
    """Differential drive: ``v = r/2 (wL + wR)``, ``omega = r/b (wR - wL)``.

    Raises ValueError for a non-positive or non-finite radius or track (the seed requires a
    non-zero track in this mode)."""
    for name, val in (("wheel_radius", wheel_radius), ("track", track)):
        if not isinstance(val, (int, float)) or not math.isfinite(val) or val <= 0:
            raise ValueError(f"wheel-speed mode needs {name} > 0, got {val!r}")
    return 0.5 * wheel_radius * (w_left + w_right), wheel_radius / track * (w_right - w_left)


# ----------------------------------------------------------------------------- Ackermann
@dataclass(frozen=True, kw_only=True)
class AckermannParams:
    """Kinematic bicycle model.

    Attributes:
        wheel_base: [m] > 0.
        max_steer: steering angle limit [rad], in (0, pi/2).
        max_steer_rate: steering rate limit [rad/s], > 0.
    """

    wheel_base: float = 0.512
    max_steer: float = 0.6
    max_steer_rate: float = 2.0

    def __post_init__(self):
        if not (math.isfinite(self.wheel_base) and self.wheel_base > 0):
            raise ValueError(f"wheel_base must be > 0, got {self.wheel_base}")
        if not (0 < self.max_steer < math.pi / 2):
            raise ValueError(f"max_steer must be in (0, pi/2), got {self.max_steer}")
        if not (math.isfinite(self.max_steer_rate) and self.max_steer_rate > 0):
            raise ValueError(f"max_steer_rate must be > 0, got {self.max_steer_rate}")


def ackermann_step(params: AckermannParams, x, y, theta, steer, v, steer_input, dt: float,
                   mode: str = "rate", integrator: str = "euler"):
    """One step of the kinematic bicycle, all ``(N,)``.

    ``mode="rate"``: ``steer_input`` is the steering rate [rad/s] (clipped to the rate limit);
    ``mode="angle"``: it is the commanded angle [rad], reached at the rate limit. The steering
    angle holds at its limit while the rate pushes it on (no wind-up). ``integrator="euler"``:
    the heading uses the start-of-step steering angle, as :func:`unicycle_step` uses the
    start-of-step heading. ``"exact"``: the steering angle moves linearly through the step (at
    the constant rate, clipped), and the pose follows :data:`EXACT_SUBSTEPS` exact arcs, each at
    its substep's mean steering angle. Returns ``(x, y, theta, steer)``.
    """
    if integrator == "exact":
        rate = _steer_rate(params, steer, steer_input, dt, mode)
        h = dt / EXACT_SUBSTEPS
        for _ in range(EXACT_SUBSTEPS):
            s1 = (steer + rate * h).clamp(-params.max_steer, params.max_steer)
            omega = v * torch.tan(0.5 * (steer + s1)) / params.wheel_base
            x, y, theta = unicycle_step(x, y, theta, v, omega, h, "exact")
            steer = s1
        return x, y, theta, steer
    if integrator != "euler":
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    omega = v * torch.tan(steer) / params.wheel_base
    x1, y1, th1 = unicycle_step(x, y, theta, v, omega, dt)
    rate = _steer_rate(params, steer, steer_input, dt, mode)
    steer1 = (steer + rate * dt).clamp(-params.max_steer, params.max_steer)
    return x1, y1, th1, steer1


def _steer_rate(params: AckermannParams, steer, steer_input, dt: float, mode: str):
    """The step's steering rate [rad/s] from a rate or angle command, within the rate limit."""
    if mode == "rate":
        rate = steer_input.clamp(-params.max_steer_rate, params.max_steer_rate)
    elif mode == "angle":
        rate = ((steer_input.clamp(-params.max_steer, params.max_steer) - steer) / dt).clamp(
            -params.max_steer_rate, params.max_steer_rate)
    else:
        raise ValueError(f"mode must be 'rate' or 'angle', got {mode!r}")
    return rate


# ----------------------------------------------------------------------------- skid steer
#: the wheel-speed controllers of :class:`SkidSteerParams`
CONTROLLERS = ("servo", "proportional")


@dataclass(frozen=True, kw_only=True)
class SkidSteerParams:
    """Skid-steer dynamics with wheel slip. Defaults: the slip seed's small robot.

    Attributes:
        wheel_inertia: ``I_w`` [kg m^2] > 0 (wheel and gear).
        wheel_damping: ``b_w`` [N m s/rad] >= 0.
        max_torque: motor torque limit per wheel [N m] > 0.
        soil: ``"hard"`` (linear forces on the friction ellipse) or ``"soft"`` (traction surrogate).
        mu: friction coefficient on hard ground (may be overridden per env/wheel in the step).
        c_kappa, c_alpha: longitudinal [N] and lateral [N/rad] slip stiffness.
        mu_peak, k_shape: soft-soil surrogate ``mu_peak (1 - exp(-k |kappa|))``.
        soft_resistance: extra motion resistance on soft soil, fraction of ``F_z``.
        c_rr: rolling resistance coefficient.
        yaw_inertia: ``I_z`` about the centre of mass [kg m^2]; None: a uniform box over the
            wheel base and track, ``m (L^2 + T^2) / 12``.
        controller: the wheel-speed controller of ``speed_targets``: ``"servo"`` (default) a
            stiff speed servo, the torque that brings the wheel to its target within the
            substep against the ground's force, limited to the drive's torque; or
            ``"proportional"``, ``speed_gain (target - w)`` limited the same way (the slip
            seed's; soft: its 2 N m s/rad gave 2.4 N m at a stalled 0.2 m/s wheel).
        speed_gain: proportional gain of the ``"proportional"`` controller [N m s/rad].
        slip_eps: ``eps`` of the slip ratio and angle [m/s].
        v_eps: speed scale of the smooth sign in rolling and soil resistance [m/s].
        slip_limiter: cap each wheel's linear force at the force that would bring its slip
            velocity to zero within the substep (wheel inertia and the wheel's share ``m / K`` of
            the mass). The linear laws are stiff (``C_kappa R^2 / (I_w v)`` is thousands per
            second): without the cap explicit Euler chatters between the friction limits above
            ~0.1 ms on hard ground; with it the force is the seed's wherever the seed's relaxation
            is slower than one substep, and sticks otherwise. False: the plain explicit law.
    """

    wheel_inertia: float = 0.05
    wheel_damping: float = 0.02
    max_torque: float = 12.0
    soil: str = "hard"
    mu: float = 0.8
    c_kappa: float = 15000.0
    c_alpha: float = 12000.0
    mu_peak: float = 0.55
    k_shape: float = 10.0
    soft_resistance: float = 0.015
    c_rr: float = 0.02
    yaw_inertia: float | None = None
    controller: str = "servo"
    speed_gain: float = 2.0
    slip_eps: float = 1e-6
    v_eps: float = 0.01
    slip_limiter: bool = True

    def __post_init__(self):
        if self.soil not in ("hard", "soft"):
            raise ValueError(f"soil must be 'hard' or 'soft', got {self.soil!r}")
        if self.controller not in CONTROLLERS:
            raise ValueError(f"controller must be one of {CONTROLLERS}, got {self.controller!r}")
        positive = ("wheel_inertia", "max_torque", "c_kappa", "c_alpha", "k_shape", "slip_eps",
                    "v_eps", "speed_gain")
        nonneg = ("wheel_damping", "mu", "mu_peak", "soft_resistance", "c_rr")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in positive and not (isinstance(v, (int, float)) and math.isfinite(v)
                                           and v > 0):
                raise ValueError(f"{f.name} must be a finite number > 0, got {v!r}")
            if f.name in nonneg and not (isinstance(v, (int, float)) and math.isfinite(v)
                                         and v >= 0):
                raise ValueError(f"{f.name} must be a finite number >= 0, got {v!r}")
        if self.yaw_inertia is not None and not (math.isfinite(self.yaw_inertia)
                                                 and self.yaw_inertia > 0):
            raise ValueError(f"yaw_inertia must be > 0 or None, got {self.yaw_inertia!r}")

    @property
    def ground_mu(self) -> float:
        """The friction coefficient of the ground: ``mu`` on hard ground, ``mu_peak`` on soft
        soil (what a per-environment ``friction`` parameter replaces)."""
        return self.mu if self.soil == "hard" else self.mu_peak

    def yaw_inertia_for(self, vehicle: Vehicle) -> float:
        if self.yaw_inertia is not None:
            return self.yaw_inertia
        return vehicle.mass * (vehicle.wheel_base ** 2 + vehicle.track_width ** 2) / 12.0


@dataclass
class SkidSteerState:
    """Batched skid-steer state.

    Attributes:
        x, y, yaw: ``(N,)`` rear-axle pose, world frame [m, m, rad] (yaw raw, unwrapped).
        vx, vy: ``(N,)`` centre-of-mass velocity in the body frame [m/s].
        yaw_rate: ``(N,)`` [rad/s].
        wheel_omega: ``(N, K)`` wheel spin [rad/s] (the step keeps it as a transposed view of
            wheel-major ``(K, N)`` storage).
    """

    x: torch.Tensor
    y: torch.Tensor
    yaw: torch.Tensor
    vx: torch.Tensor
    vy: torch.Tensor
    yaw_rate: torch.Tensor
    wheel_omega: torch.Tensor

    @classmethod
    def zeros(cls, n: int, num_wheels: int, dtype=torch.float32, device=None):
        z = torch.zeros(n, dtype=dtype, device=device)
        return cls(z, z.clone(), z.clone(), z.clone(), z.clone(), z.clone(),
                   torch.zeros(num_wheels, n, dtype=dtype, device=device).T)


def side_targets(vehicle: Vehicle, left, right) -> torch.Tensor:
    """``(N, K)`` per-wheel values from left/right ``(N,)`` values (left: wheels with y > 0)."""
    is_left = torch.tensor([p[1] > 0 for p in vehicle.wheel_positions], device=left.device)
    return torch.where(is_left, left.unsqueeze(1), right.unsqueeze(1))


def speed_controller(params: SkidSteerParams, omega, target, t_max=None) -> torch.Tensor:
    """The ``"proportional"`` controller's torque ``clamp(k (target - omega), +-T_max)`` [N m]
    (``t_max``: the limit; None: ``params.max_torque``)."""
    t_max = params.max_torque if t_max is None else t_max
    return (params.speed_gain * (target - omega)).clamp(-t_max, t_max)


def _wheel_major(v):
    """An ``(N, K)`` per-wheel tensor as a ``(K, N)`` view; ``(N,)`` tensors and floats are
    unchanged (they broadcast over the wheel axis as they are)."""
    return v.T if isinstance(v, torch.Tensor) and v.ndim == 2 else v


def braked_body_forces(s: SkidSteerState, m, Iz, fz, mu, dxj, dyj, fgx, fgy, dt: float):
    """The holding brake: the wheels are locked, and the ground holds the body by static
    friction or lets it slide with kinetic friction (a velocity-level Coulomb solve, no creep).

    The friction force that stops the body's planar motion within the substep ``dt``, against
    the other forces ``(fgx, fgy)`` (gravity along the ground) and the rotating frame's terms,
    is ``F = -(m v / dt + F_g) + m w (-v_y, v_x)``; the ground gives it while ``|F|`` is within
    the capacity ``sum_j mu_j F_z,j`` (the body stays exactly at rest), and that capacity,
    against the motion, beyond it (a locked wheel slides with kinetic friction ``mu F_z`` and
    no rolling resistance): ``F = F_req min(1, capacity / |F_req|)``. The yaw moment stops the
    yaw rate within the step up to the capacity times the wheels' mean lever arm. Body-frame,
    ``(N,)`` each: returns ``(F_x, F_y, M_z, each wheel's share F_z,j / sum F_z (K, N))``."""
    cap = (mu * fz).sum(0)
    req_x = -(m * s.vx / dt + fgx) - m * s.yaw_rate * s.vy
    req_y = -(m * s.vy / dt + fgy) + m * s.yaw_rate * s.vx
    need = torch.sqrt(req_x * req_x + req_y * req_y)
    scale = torch.where(need > cap, cap / need.clamp_min(1e-30), torch.ones_like(need))
    arm = torch.sqrt(dxj * dxj + dyj * dyj).mean(0)
    m_cap = cap * arm
    Mz = torch.maximum(torch.minimum(-Iz * s.yaw_rate / dt, m_cap), -m_cap)
    total = fz.sum(0)
    share = fz / torch.where(total > 0, total, torch.ones_like(total))
    return req_x * scale, req_y * scale, Mz, share


def _substep_kn(vehicle: Vehicle, params: SkidSteerParams, s: SkidSteerState, omega, torque, fz,
                roll, pitch, dt: float, mu, gravity: float, brake=None, servo_targets=None,
                t_max=None):
    """One explicit-Euler substep of :func:`skid_steer_step` on wheel-major ``(K, N)`` arrays
    (``omega``, ``torque``, ``fz``, a per-wheel ``mu``; ``s.wheel_omega`` is ignored): the
    environment index innermost, so compiled kernels vectorize over it (an inner axis of K = 4
    they run as scalar loops). ``brake``: ``(N,)`` bool, the holding brake is on
    (:func:`braked_body_forces`). ``servo_targets``: ``(K, N)`` wheel speeds the stiff servo
    drives to (then ``torque`` is ignored); ``t_max``: the torque limit [N m] (None:
    ``params.max_torque``). Returns ``(new state (its wheel_omega unchanged), new omega (K, N),
    info of (K, N) arrays)``."""
    dtype = s.vx.dtype
    dev = s.vx.device
    wx = torch.tensor([[p[0]] for p in vehicle.wheel_positions], dtype=dtype, device=dev)
    wy = torch.tensor([[p[1]] for p in vehicle.wheel_positions], dtype=dtype, device=dev)
    cx, cy = vehicle.com[0], vehicle.com[1]
    # per-environment parameters (a VehicleBatch) are (N,) and broadcast over the wheels
    dxj, dyj = wx - cx, wy - cy  # (K, 1) or (K, N) lever arms from the CoM
    r_w = vehicle.wheel_radius
    m, g = vehicle.mass, gravity
    vxj = s.vx - s.yaw_rate * dyj
    vyj = s.vy + s.yaw_rate * dxj
    kappa = slip_ratio(vxj, omega, r_w, params.slip_eps)
    alpha = slip_angle(vxj, vyj, params.slip_eps)
    fz = fz.clamp_min(0.0)
    mu_w = params.ground_mu if mu is None else mu
    if params.soil == "hard":
        fx_lin = params.c_kappa * kappa
    else:
        fx_lin = soft_soil_traction(kappa, fz, mu_w, params.k_shape)
    fy_lin = -params.c_alpha * alpha
    m_share = m / omega.shape[0]

    def ground_forces(give):
        """The wheel forces on the friction ellipse; ``give``: how the wheel's spin yields to
        its ground force (``R^2 / I_w``; 0 for a wheel the servo holds at its speed)."""
        fxl, fyl = fx_lin, fy_lin
        if params.slip_limiter:
            fx_stick = (r_w * omega - vxj) / (dt * (give + 1.0 / m_share))
            fy_stick = -vyj * (m_share / dt)
            fxl = torch.where(fxl.abs() > fx_stick.abs(), fx_stick, fxl)
            fyl = torch.where(fyl.abs() > fy_stick.abs(), fy_stick, fyl)
        fx_, fy_ = friction_ellipse(fxl, fyl, mu_w * fz)
        if params.soil == "soft":
            fx_ = fx_ - params.soft_resistance * fz * smooth_sign(vxj, params.v_eps)
        return fx_, fy_

    fx, fy = ground_forces(r_w * r_w / params.wheel_inertia)
    frr = rolling_resistance(vxj, fz, params.c_rr, params.v_eps)
    t_max = params.max_torque if t_max is None else t_max
    if servo_targets is not None:
        # the torque that brings the wheel to its target within the substep; where it is within
        # the drive's limit the wheel holds its speed (its ground force is that of a wheel that
        # does not give way), else the limit drives a wheel that does
        fx_h, fy_h = ground_forces(0.0)
        held = (params.wheel_inertia * (servo_targets - omega) / dt + r_w * fx_h
                + params.wheel_damping * omega)
        within = held.abs() <= t_max
        fx, fy = torch.where(within, fx_h, fx), torch.where(within, fy_h, fy)
        torque = torch.where(within, held, torch.sign(held) * t_max)
    T = torque.clamp(-t_max, t_max)
    fx_body = fx + frr
    sin_p, cos_p = torch.sin(pitch), torch.cos(pitch)
    sin_r = torch.sin(roll)
    Fx = fx_body.sum(0) + m * g * sin_p          # positive pitch (nose down) pulls forward
    Fy = fy.sum(0) - m * g * cos_p * sin_r          # positive roll (left up) pulls to the right
    Mz = (dxj * fy - dyj * fx_body).sum(0)
    Iz = params.yaw_inertia_for(vehicle)
    if brake is not None:
        Fbx, Fby, Mb, share = braked_body_forces(s, m, Iz, fz, mu_w, dxj, dyj,
                                                 m * g * sin_p, -m * g * cos_p * sin_r, dt)
        Fx = torch.where(brake, Fbx + m * g * sin_p, Fx)
        Fy = torch.where(brake, Fby - m * g * cos_p * sin_r, Fy)
        Mz = torch.where(brake, Mb, Mz)
        fx = torch.where(brake, share * Fbx, fx)
        fy = torch.where(brake, share * Fby, fy)
        frr = torch.where(brake, torch.zeros_like(frr), frr)
        T = torch.where(brake, torch.zeros_like(T), T)
    # time derivatives of the body velocities, the yaw rate and the wheel spins
    d_vx = Fx / m + s.yaw_rate * s.vy
    d_vy = Fy / m - s.yaw_rate * s.vx
    d_yaw_rate = Mz / Iz
    d_omega = (T - r_w * fx - params.wheel_damping * omega) / params.wheel_inertia
    # pose of the rear-axle origin: v_o = v_com - r x c  (body frame), rotated to the world
    vox = s.vx + s.yaw_rate * cy
    voy = s.vy - s.yaw_rate * cx
    c, sn = torch.cos(s.yaw), torch.sin(s.yaw)
    new = SkidSteerState(
        x=s.x + dt * (c * vox - sn * voy), y=s.y + dt * (sn * vox + c * voy),
        yaw=s.yaw + dt * s.yaw_rate, vx=s.vx + dt * d_vx, vy=s.vy + dt * d_vy,
        yaw_rate=s.yaw_rate + dt * d_yaw_rate, wheel_omega=s.wheel_omega)
    info = {"fx": fx, "fy": fy, "kappa": kappa, "alpha": alpha, "rolling": frr, "torque": T}
    omega = omega + dt * d_omega
    if brake is not None:  # locked wheels do not turn
        omega = torch.where(brake, torch.zeros_like(omega), omega)
    return new, omega, info


def skid_steer_step(vehicle: Vehicle, params: SkidSteerParams, s: SkidSteerState, torque, fz,
                    roll, pitch, dt: float, substeps: int = 1, mu=None, speed_targets=None,
                    gravity: float = GRAVITY, max_torque: float | None = None):
    """``substeps`` explicit-Euler substeps of ``dt / substeps``; returns ``(state, info of the
    last substep)``.

    Args:
        torque: ``(N, K)`` motor torques [N m] (clipped to ``max_torque``), or None with
            ``speed_targets``.
        fz: ``(N, K)`` normal loads [N]: the contact forces along the ground's normal (on a
            slope of angle beta they sum to ``m g cos(beta)``), which cap the friction.
        roll, pitch: ``(N,)`` attitude [rad] for gravity along the slope.
        mu: optional friction override, ``(N,)`` per environment or ``(N, K)`` per wheel.
        speed_targets: ``(N, K)`` wheel-speed targets [rad/s] of the wheel-speed controller
            (``params.controller``), re-evaluated every substep (instead of ``torque``). Where
            every target of an environment is zero, its holding brake is on instead
            (:func:`braked_body_forces`: the wheels lock; static friction holds the body,
            kinetic friction slides it).
        gravity: [m/s^2].
        max_torque: the drive's torque limit at each wheel [N m] (a vehicle's
            ``wheel_torque``); None: ``params.max_torque``.

    ``info``: ``fx, fy, kappa, alpha, rolling, torque`` ``(N, K)`` in the wheel (= body) axes
    [N, -, rad, N, N m].

    The arithmetic runs wheel-major: the returned ``wheel_omega`` and the ``(N, K)`` info arrays
    are transposed views of ``(K, N)`` storage (pass them back in as they are; a contiguous
    ``(N, K)`` input works too).
    """
    if int(substeps) != substeps or substeps < 1:
        raise ValueError(f"substeps must be an int >= 1, got {substeps!r}")
    h = dt / substeps
    omega = _wheel_major(s.wheel_omega)
    torque, fz, mu = _wheel_major(torque), _wheel_major(fz), _wheel_major(mu)
    targets = _wheel_major(speed_targets)
    # the holding brake: on where every wheel's target speed is zero (a stopped command)
    brake = None if targets is None else (targets == 0).all(0)
    info = {}
    servo = targets is not None and params.controller == "servo"
    t_max = params.max_torque if max_torque is None else max_torque
    for _ in range(int(substeps)):
        tq = torque if targets is None or servo else speed_controller(params, omega, targets,
                                                                      t_max)
        s, omega, info = _substep_kn(vehicle, params, s, omega, tq, fz, roll, pitch, h, mu,
                                     gravity, brake, targets if servo else None, t_max)
    s = SkidSteerState(s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, omega.T)
    return s, {k: v.T for k, v in info.items()}
