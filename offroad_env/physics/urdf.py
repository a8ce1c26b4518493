"""Vehicles from URDF robot descriptions (:func:`vehicle_from_urdf`, ``Vehicle.from_urdf``).

Parsed with the standard library's XML parser (``xml.etree``): a URDF is a small XML tree of
links and joints, the geometry needed here is four tags, and no third-party URDF package is then
needed (``yourdfpy``/``urchin`` also load meshes, which this does not use). Python's bundled
expat refuses entity-expansion bombs. Xacro macros are not expanded: run ``xacro`` first.

What is taken:

* the wheels: ``continuous`` joints whose child link has a ``cylinder`` collision (or the joint
  names given); their hub positions in base_link, by composing the joint origins along the tree
  from ``base`` (Jackal's wheels hang from ``chassis_link``, not ``base_link``);
* the wheel radius: the cylinders' radius (all wheels must agree); the tyre width
  (``Vehicle.wheel_width``): the cylinders' length (the widest, where they differ); the wheels'
  spin inertia (``Vehicle.wheel_inertia``): their links' inertia about the joint axis (the
  mean; None where a wheel gives none);
* the rear-axle frame: the middle of the rearmost wheels, at their hub height
  (``rear_axle_pose`` in base_link); wheel base and track from the rear and front pairs;
* the mass: every link's inertial mass; the centre of mass: their mass-weighted inertial origins;
  the roll and pitch inertias and the full 3 x 3 tensor (``Vehicle.inertia``) about the centre
  of mass (each link's inertia tensor turned into base_link, plus the parallel-axis terms);
* the drive's torque limit (``Vehicle.wheel_torque``): the wheel joints' ``<limit effort>``
  [N m] where they give one (all wheels must agree); none: the dynamics' default.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

__all__ = ["vehicle_from_urdf", "URDFError"]


class URDFError(ValueError):
    """A URDF file cannot give a vehicle; the message names the file and the problem."""


def _floats(text, n, path, what):
    if text is not None and ("${" in text or "$(" in text):
        raise URDFError(f"{path}: {what} {text!r} is an unexpanded xacro expression: the file is "
                        "xacro; expand it first (xacro robot.urdf.xacro > robot.urdf)")
    try:
        vals = [float(v) for v in (text or "").split()]
    except ValueError:
        raise URDFError(f"{path}: {what} {text!r} is not {n} numbers") from None
    if not vals:
        vals = [0.0] * n
    if len(vals) != n or not all(math.isfinite(v) for v in vals):
        raise URDFError(f"{path}: {what} {text!r} is not {n} finite numbers")
    return vals


def _inertia(el, path, link) -> np.ndarray:
    """The 3 x 3 tensor of an ``<inertia>`` element (missing entries 0)."""
    g = {k: _floats(el.get(k, "0"), 1, path, f"link {link!r} inertia {k}")[0]
         for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                     [g["ixz"], g["iyz"], g["izz"]]])


def _rpy(r, p, y) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y),
                              math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(el, path) -> tuple[np.ndarray, np.ndarray]:
    o = None if el is None else el.find("origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(o.get("xyz"), 3, path, "origin xyz")
    rpy = _floats(o.get("rpy"), 3, path, "origin rpy")
    return _rpy(*rpy), np.array(xyz)


def vehicle_from_urdf(path, wheels=None, base: str = "base_link", name: str | None = None):
    """A :class:`~offroad_env.vehicle.Vehicle` from a URDF file (module docstring).

    Args:
        path: the ``.urdf`` file (xacro expanded).
        wheels: names of the wheel joints; None: every continuous joint whose child link has a
            cylinder collision.
        base: the link the vehicle's base_link is (default ``"base_link"``).
        name: the vehicle's name (default: the robot's).
    """
    from .vehicle import Vehicle

    path = Path(path)
    if not path.is_file():
        raise URDFError(f"{path}: no such file")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise URDFError(f"{path}: not XML ({exc})") from None
    if root.tag != "robot":
        raise URDFError(f"{path}: the root element is <{root.tag}>, not <robot>")
    if any("xacro" in (el.tag or "") for el in root.iter()):
        raise URDFError(f"{path}: holds xacro macros; expand it first (xacro robot.urdf.xacro "
                        "> robot.urdf)")
    links = {el.get("name"): el for el in root.findall("link")}
    joints = root.findall("joint")
    if base not in links:
        raise URDFError(f"{path}: no link {base!r}; links: {sorted(links)[:12]}")
    # each link's pose in base, walking joints from the base (parents before children)
    pose = {base: (np.eye(3), np.zeros(3))}
    children: dict[str, list] = {}
    for j in joints:
        p, c = j.find("parent"), j.find("child")
        if p is None or c is None:
            raise URDFError(f"{path}: joint {j.get('name')!r} lacks a parent or child")
        children.setdefault(p.get("link"), []).append(j)
    stack = [base]
    while stack:
        parent = stack.pop()
        R0, t0 = pose[parent]
        for j in children.get(parent, []):
            child = j.find("child").get("link")
            if child in pose:
                raise URDFError(f"{path}: link {child!r} is reached twice (a loop)")
            R, t = _origin(j, path)
            pose[child] = (R0 @ R, R0 @ t + t0)
            stack.append(child)

    def cylinder(link, what="radius"):
        """The ``what`` of the link's first cylinder collision (NaN: not given; None: no
        cylinder)."""
        for col in link.findall("collision"):
            cyl = col.find("geometry/cylinder")
            if cyl is not None:
                text = cyl.get(what)
                return float("nan") if text is None else _floats(
                    text, 1, path, f"link {link.get('name')!r} cylinder {what}")[0]
        return None

    def spin_inertia(joint, link):
        """The link's moment of inertia about the joint's axis [kg m^2] (None: not given)."""
        inert = link.find("inertial")
        I_el = None if inert is None else inert.find("inertia")
        if I_el is None:
            return None
        Il = _inertia(I_el, path, link.get("name"))
        Ri, _ = _origin(inert, path)
        ax_el = joint.find("axis")
        a = np.array(_floats(ax_el.get("xyz") if ax_el is not None else "1 0 0", 3, path,
                             f"joint {joint.get('name')!r} axis"))
        a = a / max(np.linalg.norm(a), 1e-12)
        value = float(a @ Ri @ Il @ Ri.T @ a)
        return value if math.isfinite(value) and value > 0 else None

    by_name = {j.get("name"): j for j in joints}
    if wheels is None:
        picked = [j for j in joints if j.get("type") == "continuous"
                  and j.find("child").get("link") in links
                  and cylinder(links[j.find("child").get("link")]) is not None]
    else:
        missing = [w for w in wheels if w not in by_name]
        if missing:
            raise URDFError(f"{path}: no joint(s) {missing}; joints: {sorted(by_name)}")
        picked = [by_name[w] for w in wheels]
    if len(picked) < 3:
        names = [j.get("name") for j in picked]
        casters = sorted(n for n, link in links.items()
                         if "caster" in (n or "").lower()
                         or link.find("collision/geometry/sphere") is not None)
        if casters and len(picked) == 2:
            raise URDFError(f"{path}: two wheels ({names}) and caster(s) {casters}: a robot on "
                            "two driven wheels and a caster is not supported; the vehicle "
                            "models need three or more wheels with cylinder collisions")
        raise URDFError(f"{path}: found {len(picked)} wheel(s) {names} (continuous joints with "
                        "a cylinder collision); a vehicle needs three or more"
                        + ("; name the wheel joints with wheels=[...]" if wheels is None
                           else ""))
    hubs, radii, widths, spins, efforts = [], [], [], [], []
    for j in picked:
        lim = j.find("limit")
        if lim is not None and lim.get("effort") is not None:
            e = _floats(lim.get("effort"), 1, path, f"wheel {j.get('name')!r} limit effort")[0]
            if not (math.isfinite(e) and e > 0):
                raise URDFError(f"{path}: wheel {j.get('name')!r} has limit effort {e}; a "
                                "wheel's torque limit must be > 0 [N m]")
            efforts.append(e)
        child = j.find("child").get("link")
        if child not in pose:
            raise URDFError(f"{path}: wheel {j.get('name')!r} is not below {base!r}")
        hubs.append(pose[child][1])
        r = cylinder(links[child])
        if r is None or not (math.isfinite(r) and r > 0):
            raise URDFError(f"{path}: wheel link {child!r} has no cylinder radius")
        radii.append(r)
        widths.append(cylinder(links[child], "length"))
        spins.append(spin_inertia(j, links[child]))
    if max(radii) - min(radii) > 1e-6 * max(radii):
        raise URDFError(f"{path}: the wheels' radii differ ({sorted(set(radii))})")
    if efforts and (len(efforts) != len(picked) or max(efforts) - min(efforts)
                    > 1e-9 * max(efforts)):
        raise URDFError(f"{path}: the wheel joints' limit efforts differ or are missing on some "
                        f"({efforts} for {len(picked)} wheels); give all wheels one, or none")
    hubs = np.array(hubs)
    spread = float(hubs[:, 2].max() - hubs[:, 2].min())
    if spread > max(0.005, 0.05 * radii[0]):
        import warnings
        warnings.warn(f"{path}: the wheel hubs' heights differ by {spread:.3f} m; the vehicle "
                      "puts every hub at the rear axle's height (check the wheel joints' "
                      "origins)", stacklevel=2)
    hubs = hubs[np.lexsort((-hubs[:, 1], -hubs[:, 0]))]  # front to rear, left to right
    x_rear, x_front = hubs[:, 0].min(), hubs[:, 0].max()
    rear = hubs[np.isclose(hubs[:, 0], x_rear, atol=1e-6)]
    axle = np.array([x_rear, rear[:, 1].mean(), rear[:, 2].mean()])  # rear-axle origin in base
    if len(rear) < 2 or x_front - x_rear <= 0:
        raise URDFError(f"{path}: the wheels do not form a rear axle and a front axle")
    # mass properties, in base_link
    total, first, inertia = 0.0, np.zeros(3), []
    for lname, (R, t) in pose.items():
        inert = links[lname].find("inertial") if lname in links else None
        if inert is None:
            continue
        m_el = inert.find("mass")
        m = _floats(m_el.get("value", "0"), 1, path, f"link {lname!r} mass")[0] \
            if m_el is not None else 0.0
        if not (math.isfinite(m) and m >= 0):
            raise URDFError(f"{path}: link {lname!r} has mass {m}")
        Ri, ti = _origin(inert, path)
        c = R @ ti + t
        I_el = inert.find("inertia")
        Il = np.zeros((3, 3)) if I_el is None else _inertia(I_el, path, lname)
        Rb = R @ Ri
        inertia.append((m, c, Rb @ Il @ Rb.T))
        total += m
        first += m * c
    if total <= 0:
        raise URDFError(f"{path}: no link has a mass")
    com = first / total
    Ixx = Iyy = 0.0
    J = np.zeros((3, 3))
    for m, c, Ib in inertia:
        d = c - com
        Ixx += Ib[0, 0] + m * (d[1] ** 2 + d[2] ** 2)
        Iyy += Ib[1, 1] + m * (d[0] ** 2 + d[2] ** 2)
        J += Ib + m * (d @ d * np.eye(3) - np.outer(d, d))
    J[0, 0], J[1, 1] = Ixx, Iyy  # the roll and pitch moments as summed term by term
    full = bool(np.linalg.eigvalsh(0.5 * (J + J.T)).min() > 0)  # links with no inertia: none
    width = max((w for w in widths if math.isfinite(w) and w > 0), default=0.0)
    spin = None if any(v is None for v in spins) else float(np.mean(spins))
    wheel_xy = tuple((float(h[0] - axle[0]), float(h[1] - axle[1])) for h in hubs)
    pose_ra = np.eye(4)
    pose_ra[:3, 3] = axle
    return Vehicle(wheel_base=float(x_front - x_rear),
                   track_width=float(rear[:, 1].max() - rear[:, 1].min()),
                   wheel_radius=float(radii[0]), wheel_positions=wheel_xy, mass=float(total),
                   com=tuple(float(v) for v in (com - axle)), inertia_roll=float(Ixx),
                   inertia_pitch=float(Iyy),
                   inertia=tuple(map(tuple, J.tolist())) if full else None,
                   wheel_width=float(width), wheel_inertia=spin,
                   rear_axle_pose=tuple(map(tuple, pose_ra)),
                   wheel_torque=float(efforts[0]) if efforts else None,
                   name=name or root.get("name", path.stem))
