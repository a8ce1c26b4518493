"""Skid-steer dynamics: a planar rigid body on K wheels with wheel spin and slip, and its drive.

:func:`skid_steer_step` -- ``I_w w' = T - R F_x - b_w w`` per wheel; slip ratio and angle per
wheel; hard ground: linear forces on the friction ellipse ``mu F_z``; soft ground: the slip
seed's traction surrogate plus extra motion resistance; rolling resistance; gravity along the
slope from roll and pitch. ``F_z`` per wheel are normal loads from ground following, so a wheel
in the air has no traction. The drive: a wheel-speed controller (:func:`speed_servo`, the stiff
servo; :func:`speed_controller`, the slip seed's proportional one) within the drive's torque
limit, and a holding brake at zero command (:func:`braked_body_forces`).

Frames: world z up; body x forward, y left. Poses ``(x, y, yaw)`` are the rear-axle frame's;
velocities are those of the centre of mass in the body frame. Re-exported by
:mod:`offroad_env.physics.dynamics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .checks import check_numbers
from .constants import GRAVITY
from .slip import (friction_ellipse, rolling_resistance, slip_angle, slip_ratio, smooth_sign,
                   soft_soil_traction)
from .drive import (braked_body_forces, caster_mask, driven_mask, side_targets, speed_controller,
                    group_sum, speed_servo, wheel_spin_rate)
from .vehicle import Vehicle

__all__ = ["CONTROLLERS", "SkidSteerParams", "SkidSteerState", "skid_steer_step",
           "side_targets", "speed_controller", "speed_servo", "braked_body_forces"]


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
        substeps: the model's substeps per control step (the env's ``dt``; stable up to 10 ms
            substeps with the slip limiter).
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
    substeps: int = 5

    def __post_init__(self):
        if self.soil not in ("hard", "soft"):
            raise ValueError(f"soil must be 'hard' or 'soft', got {self.soil!r}")
        if self.controller not in CONTROLLERS:
            raise ValueError(f"controller must be one of {CONTROLLERS}, got {self.controller!r}")
        if isinstance(self.substeps, bool) or not isinstance(self.substeps, int) \
                or self.substeps < 1:
            raise ValueError(f"substeps must be an int >= 1, got {self.substeps!r}")
        check_numbers(self, positive=("wheel_inertia", "max_torque", "c_kappa", "c_alpha",
                                      "k_shape", "slip_eps", "v_eps", "speed_gain"),
                      nonneg=("wheel_damping", "mu", "mu_peak", "soft_resistance", "c_rr"),
                      optional_positive=("yaw_inertia",))

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


def _wheel_major(v):
    """An ``(N, K)`` per-wheel tensor as a ``(K, N)`` view; ``(N,)`` tensors and floats are
    unchanged (they broadcast over the wheel axis as they are)."""
    return v.T if isinstance(v, torch.Tensor) and v.ndim == 2 else v


def _substep_kn(vehicle: Vehicle, params: SkidSteerParams, s: SkidSteerState, omega, torque, fz,
                roll, pitch, dt: float, mu, gravity: float, brake=None, servo_targets=None,
                t_max=None, driven=None, coupling=None):
    """One explicit-Euler substep of :func:`skid_steer_step` on wheel-major ``(K, N)`` arrays
    (``omega``, ``torque``, ``fz``, a per-wheel ``mu``; ``s.wheel_omega`` is ignored): the
    environment index innermost, so compiled kernels vectorize over it (an inner axis of K = 4
    they run as scalar loops). ``brake``: ``(N,)`` bool, the holding brake is on
    (:func:`braked_body_forces`). ``servo_targets``: ``(K, N)`` wheel speeds the stiff servo
    drives to (then ``torque`` is ignored); ``t_max``: the torque limit [N m] (None:
    ``params.max_torque``). Returns ``(new state (its wheel_omega unchanged), new omega (K, N),
    info of (K, N) arrays)``. ``driven``: ``(K, 1)`` bool, the wheels the motors drive
    (None: all; an undriven wheel rolls free). ``coupling``: the ``(K, K)``
    :func:`~offroad_env.physics.drive.coupling_matrix` (None: every wheel on its own)."""
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

    group = 1.0 if coupling is None else coupling.sum(1, keepdim=True)  # wheels turning together
    fx, fy = ground_forces(r_w * r_w / (group * params.wheel_inertia))
    frr = rolling_resistance(vxj, fz, params.c_rr, params.v_eps)
    t_max = params.max_torque if t_max is None else t_max
    if servo_targets is not None:
        # the torque that brings the wheel to its target within the substep; where it is within
        # the drive's limit the wheel holds its speed (its ground force is that of a wheel that
        # does not give way), else the limit drives a wheel that does
        fx_h, fy_h = ground_forces(0.0)
        torque, within = speed_servo(params, omega, servo_targets, r_w * fx_h, dt, t_max,
                                     coupling)
        if driven is not None:  # an undriven wheel is not held: it rolls free
            within = within & driven
        fx, fy = torch.where(within, fx_h, fx), torch.where(within, fy_h, fy)
    T = torque.clamp(-t_max, t_max)
    if driven is not None:  # no motor on an undriven wheel
        T = torch.where(driven, T, torch.zeros_like(T))
    caster = caster_mask(vehicle, dev)
    if caster is not None:  # a caster turns to follow the motion: no force across it
        fy = torch.where(caster, torch.zeros_like(fy), fy)
    fx_body = fx + frr
    sin_p, cos_p = torch.sin(pitch), torch.cos(pitch)
    sin_r = torch.sin(roll)
    Fx = fx_body.sum(0) + m * g * sin_p          # positive pitch (nose down) pulls forward
    Fy = fy.sum(0) - m * g * cos_p * sin_r          # positive roll (left up) pulls to the right
    Mz = (dxj * fy - dyj * fx_body).sum(0)
    Iz = params.yaw_inertia_for(vehicle)
    if brake is not None:
        # the brake holds on the braked wheels' loads (a caster rolls and swivels free)
        fz_b = fz if caster is None else torch.where(caster, torch.zeros_like(fz), fz)
        Fbx, Fby, Mb, share = braked_body_forces(s, m, Iz, fz_b, mu_w, dxj, dyj,
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
    if coupling is None:
        d_omega = (T - r_w * fx - params.wheel_damping * omega) / params.wheel_inertia
    else:  # one spin rate a group; T: the torque the gearing hands each wheel
        d_omega, T = wheel_spin_rate(params, T, r_w * fx, omega, coupling)
    # pose of the rear-axle origin: v_o = v_com - r x c  (body frame, in the ground's plane),
    # its horizontal part (R = Rz Ry Rx: Ry(pitch) Rx(roll) (v_x, v_y, 0) has the horizontal
    # components cos(p) v_x + sin(p) sin(r) v_y and cos(r) v_y) rotated by the yaw: a body
    # sliding at v down a slope covers v cos(beta) of the plane (the placement then puts it
    # on the slope), not v
    vox = s.vx + s.yaw_rate * cy
    voy = s.vy - s.yaw_rate * cx
    hx = cos_p * vox + sin_p * sin_r * voy
    hy = torch.cos(roll) * voy
    c, sn = torch.cos(s.yaw), torch.sin(s.yaw)
    new = SkidSteerState(
        x=s.x + dt * (c * hx - sn * hy), y=s.y + dt * (sn * hx + c * hy),
        yaw=s.yaw + dt * s.yaw_rate, vx=s.vx + dt * d_vx, vy=s.vy + dt * d_vy,
        yaw_rate=s.yaw_rate + dt * d_yaw_rate, wheel_omega=s.wheel_omega)
    info = {"fx": fx, "fy": fy, "kappa": kappa, "alpha": alpha, "rolling": frr, "torque": T}
    omega = omega + dt * d_omega
    if brake is not None:  # locked wheels do not turn
        omega = torch.where(brake, torch.zeros_like(omega), omega)
    return new, omega, info


def skid_steer_step(vehicle: Vehicle, params: SkidSteerParams, s: SkidSteerState, torque, fz,
                    roll, pitch, dt: float, substeps: int = 1, mu=None, speed_targets=None,
                    gravity: float = GRAVITY, max_torque: float | None = None,
                    driven=None, coupling=None):
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
        driven: K bools, the wheels the motors drive (a vehicle's ``driven``); None: all. An
            undriven wheel has no motor torque and rolls free.
        coupling: ``(K, K)`` :func:`~offroad_env.physics.drive.coupling_matrix` of the
            vehicle (None: a motor per wheel): coupled wheels share one speed and their
            motors' summed torque.

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
    driven = driven_mask(driven, s.vx.device)
    if coupling is not None:  # coupled wheels turn at one speed: their mean to start with
        omega = group_sum(coupling, omega) / coupling.sum(1, keepdim=True)
    t_max = params.max_torque if max_torque is None else max_torque
    for _ in range(int(substeps)):
        tq = torque if targets is None or servo else speed_controller(params, omega, targets,
                                                                      t_max)
        s, omega, info = _substep_kn(vehicle, params, s, omega, tq, fz, roll, pitch, h, mu,
                                     gravity, brake, targets if servo else None, t_max,
                                     driven, coupling)
    s = SkidSteerState(s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, omega.T)
    return s, {k: v.T for k, v in info.items()}
