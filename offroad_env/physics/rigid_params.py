"""Parameters of the physical vehicle model (:mod:`offroad_env.physics.rigid_body`) and what follows from them:
the suspension's figures, the longest stable substep and the chassis' contact points.

Units: m, s, kg, N, rad. Frames: the rear-axle frame (x forward, y left, z up; hubs at z = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .checks import check_inertia, check_numbers
from .constants import GRAVITY
from .vehicle import Vehicle

__all__ = ["RigidBodyParams", "STEERINGS", "for_vehicle", "Suspension", "suspension", "static_loads",
           "stable_substep", "chassis_points", "inertia_tensor", "check_stable", "substeps",
           "stable_default"]

BELLY_ROWS = 7  #: belly samples along x (two rows of them): the axles' span in 6 intervals


#: the physical model's steering and drive layouts (RigidBodyParams.steering)
STEERINGS = ("skid", "ackermann", "ackermann_rate")


@dataclass(frozen=True, kw_only=True)
class RigidBodyParams:
    """Parameters of the physical model. Defaults are derived from the vehicle where it lacks
    them (each default's source in its line).

    Attributes:
        sag: static sag of the suspension under the vehicle's weight [m] > 0, or None: 0.18
            wheel radii (3.0 cm for the Husky, "a few cm"; 1.0 cm for the rc_truck); gives
            each wheel's stiffness from its static load where ``stiffness`` is None.
        stiffness: suspension stiffness per wheel [N/m] > 0, or None (from ``sag``).
        damping_ratio: each corner's damping ratio (default 0.8, near critical); gives
            ``c = 2 zeta sqrt(k f / g)`` (f the wheel's static load) where ``damping`` is None.
        damping: suspension damping per wheel [N s/m] >= 0, or None.
        travel: compression beyond the static sag before the bump stop [m] > 0 (default
            2 sag).
        bump_ratio: the bump stop's stiffness over the spring's (default 10).
        steering: ``"skid"`` (left/right wheel speeds), ``"ackermann"`` (speed and front
            steering angle; the front wheels: those ahead of the centre of mass) or
            ``"ackermann_rate"`` (speed and the steering angle's rate: the angle is state).
        max_steer: Ackermann steering limit [rad] in (0, pi/2) (default 30 deg).
        max_steer_rate: ``"ackermann_rate"``'s fastest steering [rad/s] > 0 (default 2: from
            centre to the 30 deg limit in 0.26 s, a hobby servo's 0.1-0.2 s per 60 deg at the
            horn, geared down to the wheels).
        wheel_inertia: each wheel's inertia about its axle (wheel and gear) [kg m^2] > 0;
            None: the vehicle's ``wheel_inertia`` (presets, URDFs), else a solid disc of 5 %
            of the vehicle's mass (the Husky's wheels weigh 5.2 % each): ``0.025 m r^2``.
        wheel_damping: the bearing's damping [N m s/rad] >= 0; None: ``wheel_inertia / 2.5
            s`` (a free wheel's spin decays in 2.5 s, the skid model's Husky figures).
        max_torque: the drive's limit per wheel [N m] > 0 where the vehicle gives no
            ``wheel_torque``; None: ``m g r / K``, each wheel's share of a push of the
            vehicle's weight (20 N m for a Husky, whose preset says 24).
        mu, c_kappa, c_alpha, c_rr, slip_eps, v_eps: the tyre: friction, slip stiffnesses
            [N, N/rad], rolling resistance, the slip laws' speed floors [m/s] (the skid
            model's defaults).
        max_separation_speed: the fastest a contact (a wheel's suspension, a chassis point)
            pushes the body out of the ground [m/s] (default 1): ground that a step of the
            map puts deep under a contact at once (a wheel or bumper moving sideways onto a
            ledge) is left at this speed, instead of by the energy a spring would store in that
            depth. Landings and bumps are untouched: the cap adds the approach speed.
        max_substep: the longest substep [s] (default 12.5 ms, half the Husky's stable limit);
            a step of dt runs ``ceil(dt / max_substep)``.
        clearance: the belly's height above flat ground at rest [m]; None: ``0.8 r``.
        body_height: the roof's height above the belly [m]; None: ``2 r``.
        chassis_sink: how far the loaded chassis sinks into the ground when it carries the
            whole weight on four points [m] > 0 (gives its contact stiffness; default 1 cm).
        inertia: the 3 x 3 inertia tensor about the centre of mass in body axes [kg m^2];
            None: the vehicle's (:func:`inertia_tensor`).
        contact_spacing: spacing of the rim samples [m]; None: the map's finer spacing.
        soil: None (hard ground: the tyre laws above) or a soil (a name of
            :data:`~.soil.SOILS` or a :class:`~.soil.Soil`): the wheels sink into it and take
            Bekker-Wong support, Janosi shear and compaction resistance (:mod:`.soil_contact`).
        slip_sinkage: on soil, a slipping wheel digs (Lyasko's ``(1 + i) / (1 - 0.5 i)``).
    """

    sag: float | None = None
    stiffness: float | None = None
    damping_ratio: float = 0.8
    damping: float | None = None
    travel: float | None = None
    bump_ratio: float = 10.0
    steering: str = "skid"
    max_steer: float = math.radians(30.0)
    max_steer_rate: float = 2.0
    wheel_inertia: float | None = None
    wheel_damping: float | None = None
    max_torque: float | None = None
    mu: float = 0.8
    c_kappa: float = 15000.0
    c_alpha: float = 12000.0
    c_rr: float = 0.02
    slip_eps: float = 1e-6
    v_eps: float = 0.01
    max_separation_speed: float = 1.0
    max_substep: float = 0.0125
    clearance: float | None = None
    body_height: float | None = None
    chassis_sink: float = 0.01
    inertia: tuple | None = None
    contact_spacing: float | None = None
    soil: object = None
    slip_sinkage: bool = True

    def __post_init__(self):
        if self.soil is not None:
            from .soil import soil as by_name
            object.__setattr__(self, "soil", by_name(self.soil))
        check_numbers(self, positive=("bump_ratio", "max_steer", "max_steer_rate", "c_kappa",
                                      "c_alpha",
                                      "slip_eps", "v_eps", "max_substep", "chassis_sink",
                                      "max_separation_speed"),
                      nonneg=("damping_ratio", "mu", "c_rr"),
                      optional_positive=("sag", "stiffness", "travel", "clearance",
                                         "body_height", "contact_spacing", "wheel_inertia",
                                         "max_torque"),
                      optional_nonneg=("damping", "wheel_damping"))
        if not isinstance(self.slip_sinkage, bool):
            raise ValueError(f"slip_sinkage must be True or False, got {self.slip_sinkage!r}")
        if self.steering not in STEERINGS:
            raise ValueError(f"steering must be one of {STEERINGS}, got {self.steering!r}")
        if self.max_steer >= math.pi / 2:
            raise ValueError(f"max_steer must be in (0, pi/2) rad, got {self.max_steer!r}")
        if self.inertia is not None:
            check_inertia(self.inertia)


def for_vehicle(p: RigidBodyParams, vehicle: Vehicle, gravity: float = GRAVITY) -> RigidBodyParams:
    """``p`` with its vehicle-derived defaults filled in (``wheel_inertia``,
    ``wheel_damping``, ``max_torque``; see :class:`RigidBodyParams`)."""
    if None not in (p.wheel_inertia, p.wheel_damping, p.max_torque):
        return p
    r, m, k = vehicle.wheel_radius, vehicle.mass, vehicle.num_wheels
    inertia = p.wheel_inertia or vehicle.wheel_inertia or 0.025 * m * r * r
    return replace(p, wheel_inertia=inertia,
                   wheel_damping=inertia / 2.5 if p.wheel_damping is None else p.wheel_damping,
                   max_torque=p.max_torque or m * gravity * max(r, 1e-3) / k)


@dataclass(frozen=True)
class Suspension:
    """Per-wheel suspension figures, K-tuples in wheel order: the static load ``load`` [N],
    stiffness ``k`` [N/m], damping ``c`` [N s/m], static sag ``s0`` and bump-stop compression
    ``s_max`` [m], bump-stop stiffness ``k_b`` [N/m]."""

    load: tuple
    k: tuple
    c: tuple
    s0: tuple
    s_max: tuple
    k_b: tuple


def static_loads(vehicle: Vehicle, gravity: float = GRAVITY) -> tuple:
    """The wheels' loads [N] at rest on flat ground: the least-norm forces that hold the weight
    and its moments, ``f = A^T (A A^T)^-1 (m g, 0, 0)`` with A's rows ``1``, ``x_j - c_x``,
    ``y_j - c_y`` (the lever rule for a rectangle; equal shares under a centred mass)."""
    import numpy as np
    cx, cy, _ = vehicle.com
    A = np.array([[1.0] * vehicle.num_wheels, [q[0] - cx for q in vehicle.wheel_positions],
                  [q[1] - cy for q in vehicle.wheel_positions]])
    f = A.T @ np.linalg.solve(A @ A.T, np.array([vehicle.mass * gravity, 0.0, 0.0]))
    if f.min() <= 0:
        raise ValueError(f"the centre of mass {vehicle.com} lies outside the wheels' support: "
                         f"static loads {f.round(1).tolist()} N")
    return tuple(float(v) for v in f)


def suspension(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY) -> Suspension:
    """The suspension of ``vehicle`` under ``p``. Each wheel's static load ``f_j``
    (:func:`static_loads`); stiffness ``k_j = f_j / sag`` (every wheel sags alike, so the body
    rests level with its hubs at the preset's hub height) unless ``p.stiffness`` is given;
    damping ``c_j = 2 zeta sqrt(k_j f_j / g)`` (the wheel's corner mass) unless given; sag
    ``s0_j = f_j / k_j``; the bump stop ``travel`` (default ``2 s0_j``) beyond it."""
    loads = static_loads(vehicle, gravity)
    sag = p.sag if p.sag is not None else 0.18 * vehicle.wheel_radius
    k = tuple(p.stiffness if p.stiffness is not None else f / sag for f in loads)
    c = tuple(p.damping if p.damping is not None
              else 2.0 * p.damping_ratio * math.sqrt(kj * f / gravity) for kj, f in zip(k, loads))
    s0 = tuple(f / kj for f, kj in zip(loads, k))
    s_max = tuple(s + (p.travel if p.travel is not None else 2.0 * s) for s in s0)
    return Suspension(load=loads, k=k, c=c, s0=s0, s_max=s_max,
                      k_b=tuple(p.bump_ratio * kj for kj in k))


def stable_substep(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY) -> float:
    """The longest stable substep [s] of the stiffest contact mode: semi-implicit Euler on a
    damped oscillator ``x'' = -w^2 x - 2 zeta w x'`` is stable for ``w h < 2 (sqrt(1 + zeta^2)
    - zeta)``. The stiffest modes: a wheel's corner on its bump stop, ``w^2 = (k + k_b) g /
    f`` with the suspension's damping, and the chassis on four points, ``w^2 = g /
    chassis_sink`` with damping ratio 0.5 (the belly's points share its load so that it is
    never stiffer than that: :func:`~.rigid_body.rigid_body_step`)."""
    sus = suspension(vehicle, p, gravity)
    bound = lambda w, z: 2.0 * (math.sqrt(1.0 + z * z) - z) / w  # noqa: E731
    out = bound(math.sqrt(gravity / p.chassis_sink), 0.5)
    for f, k, kb, c in zip(sus.load, sus.k, sus.k_b, sus.c):
        mass = f / gravity
        w = math.sqrt((k + kb) / mass)
        out = min(out, bound(w, min(c / (2.0 * math.sqrt((k + kb) * mass)), 0.99)))
    return out


def chassis_points(vehicle: Vehicle, p: RigidBodyParams) -> tuple:
    """Body points that meet the terrain, rear-axle frame [m], as ``(xs, ys, zs, kind)``:
    ``kind`` 0 for the belly, a plate sampled at :data:`BELLY_ROWS` x 2 points over the axles'
    span (``L / 6`` apart for four wheels) and 0.6 of the half track; 1 for the front and rear
    bumpers at hub height; 2 for the roof's four corners (a roof on the ground is a vehicle on
    its back)."""
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
    for i in range(BELLY_ROWS):
        x = x0 + (x1 - x0) * i / (BELLY_ROWS - 1)
        for y in (yc - 0.6 * half, yc + 0.6 * half):
            pts.append((x, y, z_belly, 0))
    pts += [(x0 - r, yc, 0.0, 1), (x1 + r, yc, 0.0, 1)]
    for x in (x0 - 0.5 * r, x1 + 0.5 * r):
        for y in (yc - half, yc + half):
            pts.append((x, y, z_roof, 2))
    return tuple(tuple(q[i] for q in pts) for i in range(4))


def inertia_tensor(vehicle: Vehicle, p: RigidBodyParams) -> tuple:
    """``(J, J^-1)``, 3 x 3 tuples of floats [kg m^2] about the centre of mass, body axes:
    ``p.inertia``, else the vehicle's full tensor (``Vehicle.inertia``: presets and URDFs), else
    ``diag(inertia_roll, inertia_pitch, m (L^2 + T^2) / 12)`` (the yaw moment of a uniform box
    over the wheel base and track, as the skid-steer model's)."""
    import numpy as np
    if p.inertia is not None:
        J = np.asarray(p.inertia, dtype=float)
    elif vehicle.inertia is not None:
        J = np.asarray(vehicle.inertia, dtype=float)
    else:
        L, T = vehicle.wheel_base, vehicle.track_width
        J = np.diag([vehicle.inertia_roll, vehicle.inertia_pitch,
                     vehicle.mass * (L * L + T * T) / 12.0])
    as_tuple = lambda M: tuple(tuple(float(v) for v in row) for row in M)  # noqa: E731
    return as_tuple(J), as_tuple(np.linalg.inv(J))


def check_stable(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY) -> None:
    """Refuse a parameter set whose substep (``max_substep``) is past the stable range of the
    stiffest contact mode (:func:`stable_substep`): ValueError naming both and where to set it
    (``RigidBodyParams(max_substep=...)``; ``--max-substep`` on the command line)."""
    limit = stable_substep(vehicle, p, gravity)
    if p.max_substep > limit:
        raise ValueError(f"max_substep {p.max_substep:g} s is unstable for {vehicle.name} with "
                         f"these suspension and chassis figures: the stable range is "
                         f"max_substep <= {limit:.4g} s; give a smaller one "
                         f"(dynamics_params=RigidBodyParams(max_substep={limit / 2:.4g}), or "
                         f"--max-substep {limit / 2:.4g} on the command line), leave it at its "
                         "default to have it chosen, or soften the bump stop / chassis")


def stable_default(vehicle: Vehicle, p: RigidBodyParams, gravity: float = GRAVITY,
                   ) -> RigidBodyParams:
    """``p``, or where its ``max_substep`` is the default and past ``vehicle``'s stable range
    (a small, stiff robot), ``p`` with half the stable limit (the default is half the Husky's),
    with a warning that says so. A ``max_substep`` you chose is left to :func:`check_stable`."""
    default = RigidBodyParams.__dataclass_fields__["max_substep"].default
    if p.max_substep != default:
        return p
    limit = stable_substep(vehicle, p, gravity)
    if default <= limit:
        return p
    import warnings
    chosen = limit / 2
    warnings.warn(f"{vehicle.name}: the default max_substep {default:g} s is past its stable "
                  f"range (<= {limit:.4g} s, from its suspension and chassis figures); using "
                  f"{chosen:.4g} s, half of it, as the default is for the Husky (set "
                  "RigidBodyParams(max_substep=...) or --max-substep to choose)", stacklevel=4)
    return replace(p, max_substep=chosen)


def substeps(dt: float, p: RigidBodyParams) -> int:
    """The substeps of a step of ``dt`` [s]: ``ceil(dt / max_substep)`` (4 at 0.05 s)."""
    return max(1, math.ceil(dt / p.max_substep - 1e-9))
