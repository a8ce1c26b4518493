"""Vehicle description: geometry, mass properties and presets.

Frames: the **rear-axle frame** sits at the middle of the rear axle, at wheel-hub height, x forward,
y left, z up. Wheel hub centres are given in it (their z is 0 by construction). ``base_link`` is
the vehicle origin; ``rear_axle_pose`` is the pose of the rear-axle frame *in* base_link (the
four-wheel seed's "Rear axle pose"), so ``T_world_base = T_world_rear @ inv(rear_axle_pose)``.

Wheels touch the ground at the lowest point of a sphere of radius ``wheel_radius`` about the hub,
i.e. ``wheel_radius`` straight below the hub in the world frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .checks import check_inertia
from .urdf import urdf_vehicle_fields

__all__ = ["Vehicle", "VehicleBatch", "husky", "six_wheel_rover", "eight_wheel_rover", "rc_truck",
           "PRESETS", "preset", "rectangle_corners", "COUPLINGS", "URDF_OPTIONS",
           "vehicle_from_urdf"]

_IDENTITY = ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0),
             (0.0, 0.0, 0.0, 1.0))


#: the drive couplings of :attr:`Vehicle.coupling`
COUPLINGS = ("independent", "side")


def rectangle_corners(wheel_base: float, track_width: float) -> tuple:
    """The four-wheel rectangle's corners ``(x, y)`` in the rear-axle frame [m], in the seed's
    order FL, FR, RL, RR: ``(L, T/2), (L, -T/2), (0, T/2), (0, -T/2)``."""
    L, T = wheel_base, track_width
    return ((L, T / 2), (L, -T / 2), (0.0, T / 2), (0.0, -T / 2))


def _convex_hull_area(points: np.ndarray) -> float:
    """Area [m^2] of the convex hull of ``(K, 2)`` points (monotone chain + shoelace)."""
    pts = sorted(map(tuple, points))
    if len(pts) < 3:
        return 0.0

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    hull = np.array(lower[:-1] + upper[:-1])
    if len(hull) < 3:
        return 0.0
    x, y = hull[:, 0], hull[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


@dataclass(frozen=True, kw_only=True)
class Vehicle:
    """A wheeled vehicle as a rigid body on K wheels.

    Attributes:
        wheel_base: distance between the rear and front axles [m], > 0 (the four-wheel method's
            rectangle; the seed's default is 1.0).
        track_width: distance between left and right wheels [m], > 0 (seed default 1.0).
        wheel_radius: [m], >= 0 (seed default 0.05); 0 puts the hubs on the ground.
        wheel_positions: K >= 3 hub centres ``(x, y)`` in the rear-axle frame [m]. Default: the
            rectangle's corners in the seed's order FL, FR, RL, RR.
        mass: [kg], > 0.
        com: centre of mass ``(x, y, z)`` in the rear-axle frame [m]. Default: the middle of the
            rectangle at hub height.
        inertia_roll, inertia_pitch: moments of inertia about the body x and y axes through the
            centre of mass [kg m^2], > 0.
        inertia: the full 3 x 3 inertia tensor about the centre of mass in the rear-axle frame's
            axes [kg m^2], symmetric positive definite, its diagonal's first two entries
            ``inertia_roll`` and ``inertia_pitch``; None: not known (the physical model then
            takes ``diag(inertia_roll, inertia_pitch, m (L^2 + T^2) / 12)``). URDFs give it.
        wheel_width: the tyres' width [m], >= 0 (the physical model's contact moves across it;
            0: a disc in the wheel's mid-plane). URDFs give the wheel cylinders' length.
        wheel_inertia: each wheel's moment of inertia about its axle [kg m^2], > 0, or None
            (the physical model then derives one: :func:`~.rigid_params.for_vehicle`). URDFs
            give the wheel links' inertia about their joint axis. Read by the physical model
            only (the skid-steer model keeps ``SkidSteerParams.wheel_inertia``).
        rear_axle_pose: 4x4 rigid transform, pose of the rear-axle frame in base_link (default
            identity).
        wheel_torque: the drive's torque limit at each wheel [N m], > 0 (the motor's stall
            torque through its gearing); None: the dynamics' default
            (``SkidSteerParams.max_torque``).
        driven: K bools in wheel order, the wheels the motors drive (at least one); None:
            all (four-wheel drive for the presets) but the casters. An undriven wheel rolls
            free.
        casters: K bools in wheel order, the wheels that swivel freely (a caster, a ball
            transfer): a contact that carries load, takes no drive and no holding brake, and
            no force across its rolling direction (it turns to follow the motion); None: none.
            Its contact is modelled as a wheel of ``wheel_radius`` whose lowest point is the
            caster's (the contact plane at rest is the real one; over a bump the contact's
            curvature is the wheels'). A vehicle needs two wheels that are not casters.
        coupling: how the driven wheels share the drive (:mod:`offroad_env.physics.drive`):
            ``"independent"`` (default), a motor per wheel, each within ``wheel_torque``;
            ``"side"``, each side's driven wheels geared to one motor: one speed, and the
            side's torque (``wheel_torque`` times its driven wheels) goes where there is grip.
        name: label for printing.
    """

    wheel_base: float = 1.0
    track_width: float = 1.0
    wheel_radius: float = 0.05
    wheel_positions: tuple[tuple[float, float], ...] | None = None
    mass: float = 50.0
    com: tuple[float, float, float] | None = None
    inertia_roll: float = 1.0
    inertia_pitch: float = 2.0
    inertia: tuple[tuple[float, float, float], ...] | None = None
    wheel_width: float = 0.0
    wheel_inertia: float | None = None
    rear_axle_pose: tuple[tuple[float, ...], ...] = _IDENTITY
    wheel_torque: float | None = None
    driven: tuple[bool, ...] | None = None
    casters: tuple[bool, ...] | None = None
    coupling: str = "independent"
    name: str = "vehicle"

    def __post_init__(self):
        for name in ("wheel_base", "track_width", "mass", "inertia_roll", "inertia_pitch"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        for name, unit in (("wheel_torque", "N m"), ("wheel_inertia", "kg m^2")):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v) or v <= 0):
                raise ValueError(f"{name} must be a finite number > 0 [{unit}] or None, "
                                 f"got {v!r}")
        for name in ("wheel_radius", "wheel_width"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0 [m], got {v!r}")
        if self.inertia is not None:
            J = check_inertia(self.inertia)
            if not np.allclose(np.diag(J)[:2], (self.inertia_roll, self.inertia_pitch),
                               rtol=1e-9, atol=0.0):
                raise ValueError(f"inertia's diagonal {np.diag(J)[:2].tolist()} must hold "
                                 f"inertia_roll {self.inertia_roll} and inertia_pitch "
                                 f"{self.inertia_pitch}")
            object.__setattr__(self, "inertia", tuple(tuple(float(v) for v in row) for row in J))
        L, T = float(self.wheel_base), float(self.track_width)
        if self.wheel_positions is None:
            wp = rectangle_corners(L, T)
        else:
            wp = np.asarray(self.wheel_positions, dtype=np.float64)
            if wp.ndim != 2 or wp.shape[1] != 2:
                raise ValueError(f"wheel_positions must be K pairs (x, y), got shape {wp.shape}")
            if wp.shape[0] < 3:
                raise ValueError(f"a vehicle needs K >= 3 wheels, got {wp.shape[0]}")
            if not np.isfinite(wp).all():
                raise ValueError("wheel_positions must be finite")
            wp = tuple(tuple(float(v) for v in p) for p in wp)
        object.__setattr__(self, "wheel_positions", wp)
        if self.casters is not None:
            cas = tuple(self.casters)
            if len(cas) != len(wp) or not all(isinstance(c, (bool, np.bool_)) for c in cas) \
                    or sum(not c for c in cas) < 2:
                raise ValueError(f"casters must be {len(wp)} bools (one per wheel, at least two "
                                 f"False), got {self.casters!r}")
            cas = tuple(bool(c) for c in cas)
            object.__setattr__(self, "casters", cas if any(cas) else None)
            if self.casters is not None and self.driven is None:
                object.__setattr__(self, "driven", tuple(not c for c in cas))
            elif self.casters is not None and any(
                    d and c for d, c in zip(self.driven, cas)):
                raise ValueError(f"a caster cannot be driven: driven {self.driven!r}, casters "
                                 f"{self.casters!r}")
        if self.driven is not None:
            drv = tuple(self.driven)
            if len(drv) != len(wp) or not all(isinstance(d, (bool, np.bool_)) for d in drv) \
                    or not any(drv):
                raise ValueError(f"driven must be {len(wp)} bools (one per wheel, at least one "
                                 f"True), got {self.driven!r}")
            object.__setattr__(self, "driven", tuple(bool(d) for d in drv))
        if self.coupling not in COUPLINGS:
            raise ValueError(f"coupling must be one of {COUPLINGS}, got {self.coupling!r}")
        area = _convex_hull_area(np.asarray(wp))
        if area <= 1e-9:
            raise ValueError(f"the wheels' support polygon has no area ({area:g} m^2): "
                             f"wheel_positions {wp} are collinear")
        com = (L / 2, 0.0, 0.0) if self.com is None else tuple(float(v) for v in self.com)
        if len(com) != 3 or not all(math.isfinite(v) for v in com):
            raise ValueError(f"com must be three finite numbers (x, y, z), got {self.com!r}")
        object.__setattr__(self, "com", com)
        T4 = np.asarray(self.rear_axle_pose, dtype=np.float64)
        if T4.shape != (4, 4) or not np.isfinite(T4).all():
            raise ValueError(f"rear_axle_pose must be a finite 4x4 matrix, got {self.rear_axle_pose!r}")
        Rm = T4[:3, :3]
        if (not np.allclose(Rm @ Rm.T, np.eye(3), atol=1e-9) or abs(np.linalg.det(Rm) - 1) > 1e-9
                or not np.allclose(T4[3], [0, 0, 0, 1])):
            raise ValueError("rear_axle_pose must be a rigid transform: orthonormal rotation with "
                             "det +1 and last row [0, 0, 0, 1]")
        object.__setattr__(self, "rear_axle_pose", tuple(tuple(float(v) for v in row) for row in T4))

    @property
    def num_wheels(self) -> int:
        return len(self.wheel_positions)

    @property
    def is_rectangle(self) -> bool:
        """The wheels are the four rectangle corners FL, FR, RL, RR (the default layout)."""
        return self.wheel_positions == rectangle_corners(self.wheel_base, self.track_width)

    @staticmethod
    def from_urdf(path, wheels=None, base: str = "base_link", name: str | None = None,
                  wheel_radius: float | None = None, package_dir=None):
        """A vehicle from a URDF file (:func:`vehicle_from_urdf`)."""
        return vehicle_from_urdf(path, wheels=wheels, base=base, name=name,
                                 wheel_radius=wheel_radius, package_dir=package_dir)

    @property
    def base_offset(self) -> tuple[float, float, float]:
        """base_link origin in the rear-axle frame [m]: the translation of
        ``inv(rear_axle_pose)``, ``-R^T t``."""
        T = self.rear_axle_pose
        return tuple(-sum(T[r][c] * T[r][3] for r in range(3)) for c in range(3))


def husky() -> Vehicle:
    """A Clearpath Husky: the four-wheel seed's figures (wheel base 0.5120 m, track 0.5708 m,
    wheel radius 0.1651 m, rear axle at [-0.256, 0, 0.0328] m in base_link).

    Mass properties from Clearpath's husky_description URDF: chassis 46.034 kg with its centre of
    mass 0.062 m above base_link and its inertia tensor (ixx = 0.6022, iyy = 1.7386, izz =
    2.0296, ixy = -0.02364, ixz = -0.1197, iyz = -0.001544 kg m^2), plus four wheels of 2.637 kg
    at the hubs (added as point masses, parallel-axis theorem). Tyres 0.1143 m wide (the URDF's
    wheel cylinders), each wheel 0.04411 kg m^2 about its axle (the wheel links' iyy).

    Drive: ``wheel_torque`` 24 N m a wheel, an assumed figure (no datasheet gives the gearmotors'
    stall torque): the 45 deg climb of the spec sheet needs ``m g (sin 45 + c_rr cos 45) r / 4
    = 16.5 N m`` a wheel at ``c_rr = 0.02``, and the margin covers acceleration and payload.
    On ``mu = 1`` ground friction then limits the climb just below 45 deg:
    ``tan(beta) <= mu - c_rr``, 44.4 deg. ``coupling="side"``: a Husky has one motor a side,
    geared to both of its wheels (its motor controller and ``husky_base`` command a left and a
    right speed), so a wheel off the ground hands its torque to the other wheel of its side.
    """
    L, T, r = 0.5120, 0.5708, 0.1651
    rear = np.array([-0.256, 0.0, 0.0328])  # rear-axle origin in base_link
    m_body, m_wheel = 46.034, 2.637
    body_com = np.array([0.0, 0.0, 0.062]) - rear  # in the rear-axle frame
    hubs = np.array([(x, y, 0.0) for x, y in rectangle_corners(L, T)])
    m = m_body + 4 * m_wheel
    com = (m_body * body_com + m_wheel * hubs.sum(0)) / m
    # the chassis' inertia tensor (husky_description's inertial_link) and the parallel-axis
    # terms of the chassis and the wheels' point masses, about the centre of mass
    J = np.array([[0.6022, -0.02364, -0.1197], [-0.02364, 1.7386, -0.001544],
                  [-0.1197, -0.001544, 2.0296]])
    for mass_i, at in [(m_body, body_com)] + [(m_wheel, h) for h in hubs]:
        d = at - com
        J += mass_i * (d @ d * np.eye(3) - np.outer(d, d))
    # the roll and pitch moments as summed term by term before the tensor was kept (the same
    # values to the last bit, so the models that read only these are unchanged)
    ixx = 0.6022 + m_body * (body_com[1] - com[1]) ** 2 + m_body * (body_com[2] - com[2]) ** 2
    iyy = 1.7386 + m_body * (body_com[0] - com[0]) ** 2 + m_body * (body_com[2] - com[2]) ** 2
    for h in hubs:
        ixx += m_wheel * ((h[1] - com[1]) ** 2 + (h[2] - com[2]) ** 2)
        iyy += m_wheel * ((h[0] - com[0]) ** 2 + (h[2] - com[2]) ** 2)
    J[0, 0], J[1, 1] = ixx, iyy
    pose = np.eye(4)
    pose[:3, 3] = rear
    return Vehicle(wheel_base=L, track_width=T, wheel_radius=r, mass=float(m),
                   com=tuple(com.tolist()), inertia_roll=float(ixx),
                   inertia_pitch=float(iyy), inertia=tuple(map(tuple, J.tolist())),
                   wheel_width=0.1143, wheel_inertia=0.04411, rear_axle_pose=tuple(map(tuple, pose)), wheel_torque=24.0,
                   coupling="side", name="husky")


def _box_rover(n_axles: int, name: str) -> Vehicle:
    """The pose-estimation paper's vehicle: 500 kg, 1.5 x 0.9 x 0.5 m body, ``n_axles`` equally
    spaced axles over the 1.5 m length and 0.9 m track. The paper gives no wheel radius or centre
    of mass height: we take 0.2 m wheels and the centre of the 0.5 m box, its floor at hub height
    (com z = 0.25 m); the inertias are the solid box's."""
    L, W, H, m = 1.5, 0.9, 0.5, 500.0
    xs = np.linspace(0.0, L, n_axles)
    wheels = tuple((float(x), s * W / 2) for x in xs[::-1] for s in (1.0, -1.0))
    return Vehicle(wheel_base=L, track_width=W, wheel_radius=0.2, wheel_positions=wheels,
                   mass=m, com=(L / 2, 0.0, H / 2), inertia_roll=m * (W ** 2 + H ** 2) / 12,
                   inertia_pitch=m * (L ** 2 + H ** 2) / 12, name=name)


def six_wheel_rover() -> Vehicle:
    """The paper's six-wheel, 500 kg vehicle (``_box_rover`` states the assumptions)."""
    return _box_rover(3, "six_wheel_rover")


def eight_wheel_rover() -> Vehicle:
    """An eight-wheel variant of the paper's vehicle: four axles over the same 1.5 m."""
    return _box_rover(4, "eight_wheel_rover")


def rc_truck() -> Vehicle:
    """A 1/10-scale short-course RC truck, the fast preset on which driving tips the vehicle.

    Figures of the class (Traxxas Slash 2WD: wheel base 335 mm, 2.7 kg; we take a hub-to-hub
    track of 0.25 m and 0.11 m tyres, r = 0.055 m, 0.045 m wide). Assumed, as no maker
    publishes them: the tyre width (short-course tyres of the class), the
    centre of mass 0.045 m above the hubs (0.10 m above flat ground) and 58 % of the weight on
    the rear axle; box inertias of a 0.55 x 0.30 x 0.20 m body. So the static limits are
    atan(0.125 / 0.10) = 51.3 deg roll and atan(0.141 / 0.10) = 54.6 deg pitch, and on flat
    ground a lateral acceleration of g 0.125 / 0.10 = 12.3 m/s^2 (5 m/s at 2.45 rad/s) rolls it
    over, if the tyres hold (the kinematic models assume they do). The Husky at 1 m/s and
    1 rad/s reaches 1 m/s^2, 1/15 of its own threshold, so it never tips by driving alone.
    """
    L, T, r, m = 0.335, 0.25, 0.055, 2.7
    return Vehicle(wheel_base=L, track_width=T, wheel_radius=r, mass=m,
                   com=(0.42 * L, 0.0, 0.045), inertia_roll=m * (0.30 ** 2 + 0.20 ** 2) / 12,
                   inertia_pitch=m * (0.55 ** 2 + 0.20 ** 2) / 12, wheel_width=0.045,
                   name="rc_truck")


PRESETS = {"husky": husky, "six_wheel_rover": six_wheel_rover,
           "eight_wheel_rover": eight_wheel_rover, "rc_truck": rc_truck}


def vehicle_from_urdf(path, wheels=None, base: str = "base_link", name: str | None = None,
                      wheel_radius: float | None = None, package_dir=None) -> Vehicle:
    """A :class:`Vehicle` from a URDF file; the arguments and what is read:
    :func:`~offroad_env.physics.urdf.urdf_vehicle_fields` (URDFError where it can't)."""
    return Vehicle(**urdf_vehicle_fields(path, wheels=wheels, base=base, name=name,
                                         wheel_radius=wheel_radius, package_dir=package_dir))


#: the options a ``.urdf`` vehicle name may carry after ``?`` (:func:`preset`)
URDF_OPTIONS = ("wheels", "wheel_radius", "package_dir", "base")


def preset(name: str) -> Vehicle:
    """A preset vehicle by name: ``husky``, ``six_wheel_rover``, ``eight_wheel_rover`` or
    ``rc_truck``; or a ``.urdf`` file (:func:`vehicle_from_urdf`), whose
    options may follow a ``?`` as ``KEY=VALUE`` pairs joined by ``&``:
    ``"rover.urdf?wheels=fl,fr,rl,rr&wheel_radius=0.1&package_dir=meshes"`` (a config's
    ``vehicle`` stays a string, so a run folder records it)."""
    if isinstance(name, str) and name.partition("?")[0].lower().endswith(".urdf"):
        path, _, query = name.partition("?")
        return vehicle_from_urdf(path, **_urdf_options(name, query))
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown vehicle preset {name!r}; known: {sorted(PRESETS)}") from None


def _urdf_options(name: str, query: str) -> dict:
    """The keyword options of a ``.urdf?KEY=VALUE&...`` vehicle name."""
    out: dict = {}
    for pair in filter(None, query.split("&")):
        key, sep, value = pair.partition("=")
        if not sep or key not in URDF_OPTIONS or key in out:
            raise ValueError(f"vehicle {name!r}: {pair!r} is not one KEY=VALUE of "
                             f"{URDF_OPTIONS}")
        if key == "wheels":
            out[key] = [w for w in value.split(",") if w]
        elif key == "wheel_radius":
            try:
                out[key] = float(value)
            except ValueError:
                raise ValueError(f"vehicle {name!r}: wheel_radius {value!r} is not a number "
                                 "[m]") from None
        else:
            out[key] = value
    return out


class VehicleBatch:
    """A :class:`Vehicle` whose mass, centre of mass and wheel radius differ per environment
    (domain randomization). Geometry (wheel positions, axle pose) stays the vehicle's.

    Attributes: ``mass`` ``(N,)`` [kg]; ``com`` a tuple of three ``(N,)`` tensors (x, y, z in the
    rear-axle frame) [m]; ``wheel_radius`` ``(N,)`` [m]; everything else is the base vehicle's.
    The ground-following methods and the skid-steer dynamics accept it in place of a Vehicle
    (their formulas broadcast over the environment axis).
    """

    def __init__(self, base: Vehicle, mass, com, wheel_radius):
        self.base = base
        self.mass = mass
        self.com = tuple(com.unbind(1)) if hasattr(com, "unbind") else tuple(com)
        self.wheel_radius = wheel_radius

    def __getattr__(self, name):
        return getattr(self.base, name)
