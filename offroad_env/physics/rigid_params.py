"""Parameters of the physical vehicle model (:mod:`.rigid_body`) and what follows from them:
the suspension's figures, the longest stable substep and the chassis' contact points.

Units: m, s, kg, N, rad. Frames: the rear-axle frame (x forward, y left, z up; hubs at z = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .constants import GRAVITY
from .vehicle import Vehicle

__all__ = ["RigidBodyParams", "Suspension", "suspension", "stable_substep", "chassis_points",
           "inertia_tensor"]


@dataclass(frozen=True, kw_only=True)
class RigidBodyParams:
    """Parameters of the physical model. Defaults are derived from the vehicle where it lacks
    them (each default's source in its line).

    Attributes:
        sag: static sag of the suspension under the vehicle's weight [m] > 0 (default 3 cm,
            "a few cm"); gives the stiffness ``k = m g / (K sag)`` where ``stiffness`` is None.
        stiffness: suspension stiffness per wheel [N/m] > 0, or None (from ``sag``).
        damping_ratio: the heave mode's damping ratio (default 0.8, near critical); gives
            ``c = 2 zeta sqrt(k m / K)`` where ``damping`` is None.
        damping: suspension damping per wheel [N s/m] >= 0, or None.
        travel: compression beyond the static sag before the bump stop [m] > 0 (default
            2 sag).
        bump_ratio: the bump stop's stiffness over the spring's (default 10).
        steering: ``"skid"`` (left/right wheel speeds) or ``"ackermann"`` (speed and front
            steering angle; the front wheels: those ahead of the centre of mass).
        max_steer: Ackermann steering limit [rad] in (0, pi/2) (default 30 deg).
        wheel_inertia, wheel_damping, max_torque: as :class:`~.skid.SkidSteerParams`
            (``max_torque`` where the vehicle gives no ``wheel_torque``).
        mu, c_kappa, c_alpha, c_rr, slip_eps, v_eps: the tyre: friction, slip stiffnesses
            [N, N/rad], rolling resistance, the slip laws' speed floors [m/s] (the skid
            model's defaults).
        max_substep: the longest substep [s]; a step of dt runs ``ceil(dt / max_substep)``.
        clearance: the belly's height above flat ground at rest [m]; None: ``0.8 r``.
        body_height: the roof's height above the belly [m]; None: ``2 r``.
        chassis_sink: how far the loaded chassis sinks into the ground when it carries the
            whole weight on four points [m] > 0 (gives its contact stiffness; default 1 cm).
        inertia: the 3 x 3 inertia tensor about the centre of mass in body axes [kg m^2];
            None: ``diag(inertia_roll, inertia_pitch, m (L^2 + T^2) / 12)`` from the vehicle.
        contact_spacing: spacing of the rim samples [m]; None: the map's finer spacing.
    """

    sag: float = 0.03
    stiffness: float | None = None
    damping_ratio: float = 0.8
    damping: float | None = None
    travel: float | None = None
    bump_ratio: float = 10.0
    steering: str = "skid"
    max_steer: float = math.radians(30.0)
    wheel_inertia: float = 0.05
    wheel_damping: float = 0.02
    max_torque: float = 12.0
    mu: float = 0.8
    c_kappa: float = 15000.0
    c_alpha: float = 12000.0
    c_rr: float = 0.02
    slip_eps: float = 1e-6
    v_eps: float = 0.01
    max_substep: float = 0.01
    clearance: float | None = None
    body_height: float | None = None
    chassis_sink: float = 0.01
    inertia: tuple | None = None
    contact_spacing: float | None = None

    def __post_init__(self):
        positive = ("sag", "bump_ratio", "max_steer", "wheel_inertia", "max_torque", "c_kappa",
                    "c_alpha", "slip_eps", "v_eps", "max_substep", "chassis_sink")
        nonneg = ("damping_ratio", "wheel_damping", "mu", "c_rr")
        optional_pos = ("stiffness", "travel", "clearance", "body_height", "contact_spacing")
        for f in fields(self):
            v = getattr(self, f.name)
            ok_num = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if f.name in positive and not (ok_num and v > 0):
                raise ValueError(f"{f.name} must be a finite number > 0, got {v!r}")
            if f.name in nonneg and not (ok_num and v >= 0):
                raise ValueError(f"{f.name} must be a finite number >= 0, got {v!r}")
            if f.name in optional_pos and v is not None and not (ok_num and v > 0):
                raise ValueError(f"{f.name} must be a finite number > 0 or None, got {v!r}")
        if self.damping is not None and not (isinstance(self.damping, (int, float))
                                             and math.isfinite(self.damping)
                                             and self.damping >= 0):
            raise ValueError(f"damping must be a finite number >= 0 or None, got "
                             f"{self.damping!r}")
        if self.steering not in ("skid", "ackermann"):
            raise ValueError(f"steering must be 'skid' or 'ackermann', got {self.steering!r}")
        if self.max_steer >= math.pi / 2:
            raise ValueError(f"max_steer must be in (0, pi/2) rad, got {self.max_steer!r}")
        if self.inertia is not None:
            import numpy as np
            J = np.asarray(self.inertia, dtype=float)
            if J.shape != (3, 3) or not np.isfinite(J).all() or not np.allclose(J, J.T) \
                    or np.linalg.eigvalsh(J).min() <= 0:
                raise ValueError("inertia must be a symmetric positive definite 3 x 3 matrix "
                                 f"[kg m^2], got {self.inertia!r}")


@dataclass(frozen=True)
class Suspension:
    """Per-wheel suspension figures: stiffness ``k`` [N/m], damping ``c`` [N s/m], static sag
    ``s0`` and bump-stop compression ``s_max`` [m], bump-stop stiffness ``k_b`` [N/m]."""

    k: float
    c: float
    s0: float
    s_max: float
    k_b: float


def suspension(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY) -> Suspension:
    """The suspension of ``vehicle`` under ``p``: ``k = m g / (K s0)`` unless given; ``c = 2
    zeta sqrt(k m / K)`` unless given; the static sag ``s0 = m g / (K k)``."""
    K, m = vehicle.num_wheels, vehicle.mass
    k = p.stiffness if p.stiffness is not None else m * gravity / (K * p.sag)
    c = p.damping if p.damping is not None else 2.0 * p.damping_ratio * math.sqrt(k * m / K)
    s0 = m * gravity / (K * k)
    travel = p.travel if p.travel is not None else 2.0 * s0
    return Suspension(k=k, c=c, s0=s0, s_max=s0 + travel, k_b=p.bump_ratio * k)


def stable_substep(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY) -> float:
    """The longest stable substep [s] of the stiffest contact mode: semi-implicit Euler on a
    damped oscillator ``x'' = -w^2 x - 2 zeta w x'`` is stable for ``w h < 2 (sqrt(1 + zeta^2)
    - zeta)`` (``zeta`` < 1 here). The stiffest modes: a wheel on its bump stop, ``w^2 = K (k +
    k_b) / m`` with the suspension's damping, and the chassis on four points,
    ``w^2 = g / chassis_sink`` with damping ratio 0.5."""
    sus = suspension(vehicle, p, gravity)
    K, m = vehicle.num_wheels, vehicle.mass
    w_bump = math.sqrt(K * (sus.k + sus.k_b) / m)
    zeta_b = min(sus.c * K / (2.0 * math.sqrt((sus.k + sus.k_b) * K * m)) , 0.99)
    w_chassis = math.sqrt(gravity / p.chassis_sink)
    bound = lambda w, z: 2.0 * (math.sqrt(1.0 + z * z) - z) / w  # noqa: E731
    return min(bound(w_bump, zeta_b), bound(w_chassis, 0.5))


def chassis_points(vehicle: Vehicle, p: RigidBodyParams) -> tuple:
    """Body points that meet the terrain, rear-axle frame [m], as ``(xs, ys, zs, roof)``: a
    3 x 2 grid on the belly, the front and rear bumpers at hub height, and the roof's four
    corners (``roof`` marks them: a roof on the ground is a vehicle on its back)."""
    r = vehicle.wheel_radius
    xs_w = [q[0] for q in vehicle.wheel_positions]
    ys_w = [q[1] for q in vehicle.wheel_positions]
    x0, x1 = min(xs_w), max(xs_w)
    half = 0.5 * (max(ys_w) - min(ys_w))
    yc = 0.5 * (max(ys_w) + min(ys_w))
    clearance = p.clearance if p.clearance is not None else 0.8 * r
    z_belly = clearance - r  # hub height is 0; the ground at rest is at -r
    z_roof = z_belly + (p.body_height if p.body_height is not None else 2.0 * r)
    pts = []
    for x in (x0, 0.5 * (x0 + x1), x1):
        for y in (yc - 0.6 * half, yc + 0.6 * half):
            pts.append((x, y, z_belly, False))
    pts += [(x0 - r, yc, 0.0, False), (x1 + r, yc, 0.0, False)]
    for x in (x0 - 0.5 * r, x1 + 0.5 * r):
        for y in (yc - half, yc + half):
            pts.append((x, y, z_roof, True))
    return tuple(tuple(q[i] for q in pts) for i in range(4))


def inertia_tensor(vehicle: Vehicle, p: RigidBodyParams) -> tuple:
    """``(J, J^-1)``, 3 x 3 tuples of floats [kg m^2]: ``p.inertia``, or ``diag(inertia_roll,
    inertia_pitch, m (L^2 + T^2) / 12)`` (the yaw moment of a uniform box over the wheel base
    and track, as the skid-steer model's) about the centre of mass, body axes."""
    import numpy as np
    if p.inertia is not None:
        J = np.asarray(p.inertia, dtype=float)
    else:
        L, T = vehicle.wheel_base, vehicle.track_width
        J = np.diag([vehicle.inertia_roll, vehicle.inertia_pitch,
                     vehicle.mass * (L * L + T * T) / 12.0])
    as_tuple = lambda M: tuple(tuple(float(v) for v in row) for row in M)  # noqa: E731
    return as_tuple(J), as_tuple(np.linalg.inv(J))
