"""Vehicles from URDF robot descriptions: :func:`urdf_vehicle_fields` reads a file into the
fields of a :class:`~offroad_env.physics.vehicle.Vehicle`, which
:func:`~offroad_env.physics.vehicle.vehicle_from_urdf` (and ``Vehicle.from_urdf``) builds; this
module knows nothing of the ``Vehicle`` class, so the two import one way.

Parsed with the standard library's XML parser (``xml.etree``): a URDF is a small XML tree of
links and joints, the geometry needed here is four tags, and no third-party URDF package is then
needed (``yourdfpy``/``urchin`` also load meshes, which this does not use). Python's bundled
expat refuses entity-expansion bombs. Xacro macros are not expanded: run ``xacro`` first.

What is taken:

* the wheels: ``continuous`` joints whose child link has a collision ``cylinder`` about the
  joint's axis (or the joint names given); their positions in base_link are the tyres' centres
  (the cylinder's collision origin, which may sit off the joint's origin along the axle), by
  composing the joint origins along the tree from ``base`` (Jackal's wheels hang from
  ``chassis_link``, not ``base_link``);
* the tyre: of a wheel link's collision cylinders about the joint's axis, the one whose radius
  is the hub's height above a ``base_footprint`` link (within 3 %) where the file has one, else
  the largest, with a warning naming the candidates where they differ; a wheel drawn only by a
  mesh is measured with ``trimesh`` where it is installed (the mesh's largest distance from the
  axis, ``<mesh scale>`` applied, ``package://`` resolved under ``package_dir``), or takes
  ``wheel_radius``, which also replaces the file's radii. All wheels must agree on one radius.
  The tyre width (``Vehicle.wheel_width``): the cylinders' length (the widest, where they
  differ); the wheels' spin inertia (``Vehicle.wheel_inertia``): their links' inertia about the
  joint axis (the mean; None where a wheel gives none);
* tracked vehicles (links named like a track's, or eight or more spinning joints and no wheel)
  are refused, naming what to do instead (their road wheels as a skid-steer vehicle);
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

from .urdf_parts import (TRACK_WORDS, URDFError, floats, footprint_height, inertia_tensor,
                         lowest_point, mesh_file, named_caster, origin, pick_tyre)

__all__ = ["urdf_vehicle_fields", "URDFError"]


def urdf_vehicle_fields(path, wheels=None, base: str = "base_link", name: str | None = None,
                        wheel_radius: float | None = None, package_dir=None) -> dict:
    """The keyword fields of a :class:`~offroad_env.physics.vehicle.Vehicle` read from a URDF
    file (module docstring); ``Vehicle(**fields)`` is the vehicle.

    Args:
        path: the ``.urdf`` file (xacro expanded).
        wheels: names of the wheel joints; None: every continuous joint whose child link has a
            collision cylinder about the joint's axis.
        base: the link the vehicle's base_link is (default ``"base_link"``).
        name: the vehicle's name (default: the robot's).
        wheel_radius: the tyres' radius [m], for wheels drawn only as meshes, or to replace
            the file's (a CAD export's wrong or differing radii). None: from the file.
        package_dir: the folder that ``package://NAME/...`` mesh paths resolve in (as
            ``package_dir/NAME/...``); default: the URDF's folder and its parent.
    """
    path = Path(path)
    if not path.is_file():
        raise URDFError(f"{path}: no such file")
    try:
        # blank lines before the XML declaration are common in hand-edited files and harmless
        root = ET.fromstring(path.read_bytes().lstrip())
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
        raise URDFError(f"{path}: no link {base!r}; links: {sorted(links)[:12]}; name the "
                        "vehicle's base link: base=NAME (Vehicle.from_urdf), "
                        "'robot.urdf?base=NAME' (a config's vehicle) or --base NAME (the "
                        "command line)")
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
            R, t = origin(j, path)
            pose[child] = (R0 @ R, R0 @ t + t0)
            stack.append(child)

    def axis(joint) -> np.ndarray:
        """The joint's unit axis in its child link's frame (URDF default x)."""
        ax_el = joint.find("axis")
        a = np.array(floats(ax_el.get("xyz") if ax_el is not None else "1 0 0", 3, path,
                             f"joint {joint.get('name')!r} axis"))
        return a / max(np.linalg.norm(a), 1e-12)

    def tyres(joint, link) -> list[tuple[float, float, np.ndarray]]:
        """``(radius, length, centre in the link frame)`` of each collision cylinder of
        ``link`` whose axis lies along the joint's axis (within 10 deg): the tyre candidates."""
        a = axis(joint)
        out = []
        for col in link.findall("collision"):
            cyl = col.find("geometry/cylinder")
            if cyl is None:
                continue
            Rc, tc = origin(col, path)
            if abs(float(Rc[:, 2] @ a)) < math.cos(math.radians(10.0)):
                continue  # a cylinder across the axis (a hub cap, a strut) is not the tyre
            what = f"link {link.get('name')!r} cylinder"
            r = float("nan") if cyl.get("radius") is None else floats(
                cyl.get("radius"), 1, path, f"{what} radius")[0]
            w = float("nan") if cyl.get("length") is None else floats(
                cyl.get("length"), 1, path, f"{what} length")[0]
            out.append((r, w, tc))
        return out

    def mesh_radius(joint, link) -> float | None:
        """The radius of a mesh-drawn wheel: its collision mesh's largest distance from the
        joint's axis, read with trimesh (None: no collision mesh)."""
        for col in link.findall("collision"):
            mesh = col.find("geometry/mesh")
            if mesh is None:
                continue
            fname = mesh.get("filename", "")
            file = mesh_file(fname, path, package_dir)
            where = f"{path}: wheel link {link.get('name')!r} is drawn by the mesh {fname!r}"
            give = ("give the tyre radius with wheel_radius=R (the CLI's --wheel-radius R)")
            dae = file is not None and file.suffix.lower() == ".dae"
            if file is None:
                raise URDFError(f"{where}, which is not found; {give}, or name the folder that "
                                "holds its package with package_dir=DIR (the CLI's "
                                "--package-dir DIR)")
            try:
                import trimesh
            except ImportError:
                raise URDFError(f"{where}; {give}, or pip install trimesh to measure the mesh"
                                + (" (and pycollada, which a .dae needs)" if dae else "")
                                ) from None
            try:
                verts = np.asarray(trimesh.load(file, force="mesh").vertices, dtype=np.float64)
            except Exception as exc:  # noqa: BLE001  (any reader failure: say which file)
                raise URDFError(f"{where}, which trimesh cannot read ({type(exc).__name__}: "
                                f"{str(exc)[:120]}); {give}"
                                + (", or pip install pycollada (a .dae needs it)" if dae
                                   else "")) from None
            if verts.size == 0:
                raise URDFError(f"{where}, which has no vertices; {give}")
            scale = floats(mesh.get("scale", "1 1 1"), 3, path, f"mesh {fname!r} scale")
            Rc, tc = origin(col, path)
            pts = (verts * np.array(scale)) @ Rc.T + tc  # in the link frame
            a = axis(joint)
            radial = pts - np.outer(pts @ a, a)
            return float(np.linalg.norm(radial, axis=1).max())
        return None

    def spin_inertia(joint, link):
        """The link's moment of inertia about the joint's axis [kg m^2] (None: not given)."""
        inert = link.find("inertial")
        I_el = None if inert is None else inert.find("inertia")
        if I_el is None:
            return None
        Il = inertia_tensor(I_el, path, link.get("name"))
        Ri, _ = origin(inert, path)
        a = axis(joint)
        value = float(a @ Ri @ Il @ Ri.T @ a)
        return value if math.isfinite(value) and value > 0 else None

    if wheel_radius is not None and not (isinstance(wheel_radius, (int, float))
                                         and math.isfinite(wheel_radius) and wheel_radius > 0):
        raise URDFError(f"{path}: wheel_radius must be a finite number > 0 [m], got "
                        f"{wheel_radius!r}")
    footprint = footprint_height(pose, joints, base, path)
    by_name = {j.get("name"): j for j in joints}
    if wheels is None:
        picked = [j for j in joints if j.get("type") == "continuous"
                  and j.find("child").get("link") in links
                  and tyres(j, links[j.find("child").get("link")])]
    else:
        missing = [w for w in wheels if w not in by_name]
        if missing:
            raise URDFError(f"{path}: no joint(s) {missing}; joints: {sorted(by_name)}")
        picked = [by_name[w] for w in wheels]
    # a passive swivel wheel named as one is a caster, not a wheel (its radius is its own)
    picked = [j for j in picked if not named_caster(j.get("name"), j.find("child").get("link"))]
    wheel_links = {j.find("child").get("link") for j in picked}
    # casters: named ones, and by geometry: a sphere or a cylinder (not on a drive wheel, as a
    # hubcap is) whose lowest point lies on the wheels' contact plane ahead of or behind
    # their axle (checked below), whatever its joints (a caster wheel under fixed joints)
    parent = {j.find("child").get("link"): j.find("parent").get("link") for j in joints}

    def on_a_wheel(n):
        while n in parent:
            if n in wheel_links:
                return True
            n = parent[n]
        return False

    caster_links = [n for n in pose if n != base and n not in wheel_links and n in links
                    and links[n].find("collision") is not None and not on_a_wheel(n)
                    and (named_caster(n) or any(
                        links[n].find(f"collision/geometry/{g}") is not None
                        for g in ("sphere", "cylinder")))]
    def too_few() -> URDFError:
        """The refusal of a robot with fewer than three contacts (wheels and casters)."""
        names = [j.get("name") for j in picked]
        spinning = [j.get("name") for j in joints if j.get("type") in ("continuous", "revolute")]
        tracked = [n for n in links if any(k in (n or "").lower() for k in TRACK_WORDS)]
        if wheels is None and len(picked) == 0 and (tracked or len(spinning) >= 8):
            raise URDFError(f"{path}: no wheels with a collision cylinder, and "
                            + (f"links named like a track's ({sorted(tracked)[:6]})" if tracked
                               else f"{len(spinning)} spinning joints (road wheels?)")
                            + ": tracked vehicles are not supported (a track's footprint is not "
                            "a set of wheel contacts). Drive it as a skid-steer vehicle on its "
                            "road wheels: wheels=[...] naming them and wheel_radius=R (the "
                            "CLI's --wheels and --wheel-radius), with dynamics='skid_steer'")
        return URDFError(f"{path}: found {len(picked)} wheel(s) {names} (continuous joints with "
                        "a collision cylinder about their axis); a vehicle needs three or more"
                        + ("; name the wheel joints with wheels=[...] (the CLI's --wheels), "
                           "and give wheel_radius=R (--wheel-radius) where they are meshes"
                           if wheels is None else ""))

    if len(picked) < 3 and not (len(picked) >= 2 and caster_links):
        raise too_few()
    rollers = sorted({j.get("name") for j in picked if any(
        k in " ".join([j.get("name") or "", j.find("child").get("link") or ""]
                      + [m.get("filename") or "" for m in links.get(
                          j.find("child").get("link"), ET.Element("l")).iter("mesh")]).lower()
        for k in ("mecanum", "omni"))})
    if rollers:
        import warnings
        warnings.warn(f"{path}: wheels {rollers} are named as mecanum or omni wheels; they are "
                      "modelled as ordinary wheels of a skid-steer vehicle (no rollers: no "
                      "sideways drive, full lateral grip)", stacklevel=2)
    hubs, radii, widths, spins, efforts = [], [], [], [], []
    for j in picked:
        lim = j.find("limit")
        if lim is not None and lim.get("effort") is not None:
            e = floats(lim.get("effort"), 1, path, f"wheel {j.get('name')!r} limit effort")[0]
            if not (math.isfinite(e) and e > 0):
                raise URDFError(f"{path}: wheel {j.get('name')!r} has limit effort {e}; a "
                                "wheel's torque limit must be > 0 [N m]")
            efforts.append(e)
        child = j.find("child").get("link")
        if child not in pose:
            raise URDFError(f"{path}: wheel {j.get('name')!r} is not below {base!r}")
        R, t = pose[child]
        cands = [c for c in tyres(j, links[child]) if math.isfinite(c[0]) and c[0] > 0]
        if cands:
            r, w, centre = pick_tyre(cands, t, footprint, j.get("name"), path, wheel_radius)
            hubs.append(R @ centre + t)  # the tyre's mid-plane, not the joint's origin
        else:
            hubs.append(t)
            w = float("nan")
            r = wheel_radius if wheel_radius is not None else mesh_radius(j, links[child])
            if r is None:
                raise URDFError(f"{path}: wheel link {child!r} has no collision cylinder about "
                                "its joint's axis and no collision mesh; give the tyre radius "
                                "with wheel_radius=R (the CLI's --wheel-radius R)")
        radii.append(r)
        widths.append(w)
        spins.append(spin_inertia(j, links[child]))
    if wheel_radius is not None:
        radii = [float(wheel_radius)] * len(radii)
    if max(radii) - min(radii) > 1e-6 * max(radii):
        each = ", ".join(f"{j.get('name')} {r:g}" for j, r in zip(picked, radii))
        raise URDFError(f"{path}: the wheels' radii differ ({sorted(set(radii))}: {each}); the "
                        "vehicle models take one tyre radius: give it with wheel_radius=R (the "
                        "CLI's --wheel-radius R), and name the wheel joints with wheels=[...] "
                        "(--wheels) where some of these are not wheels")
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
    # casters: a contact each at the lowest point of its collision geometry, on the wheels'
    # ground plane (hub height - radius); one far above that plane is not on the ground
    ground_z = float(hubs[:, 2].mean()) - radii[0]
    x_axle_drive = float(hubs[:, 0].mean())
    y_mid, half_track = float(hubs[:, 1].mean()), 0.5 * float(np.ptp(hubs[:, 1]))
    cast, taken = [], []
    lows = {n: lowest_point(links[n], pose[n], path) for n in caster_links}
    for n in sorted((n for n in caster_links if lows[n] is not None),
                    key=lambda n: (not named_caster(n), float(lows[n][2]))):
        low = lows[n]
        gap = float(low[2] - ground_z)
        if not named_caster(n) and (abs(gap) > max(0.005, 0.05 * radii[0]) if
                                    links[n].find("collision/geometry/sphere") is None
                                    else abs(gap) > max(0.02, 0.3 * radii[0])):
            continue  # a sphere or cylinder off the ground (a sensor dome, a lidar)
        if not named_caster(n) and abs(float(low[0]) - x_axle_drive) < 0.5 * radii[0]:
            continue  # in line with the drive wheels: not a caster ahead or behind
        if (not named_caster(n) and links[n].find("collision/geometry/sphere") is None
                and abs(float(low[1]) - y_mid) > half_track - radii[0]):
            continue  # a cylinder out at the track (a fixed wheel), not a caster between
        if any(np.hypot(*(low[:2] - q)) < 0.5 * radii[0] for q in taken):
            continue  # a part of a caster already found (its hubcap, its fork)
        taken.append(np.asarray(low[:2], dtype=float))
        if abs(gap) > max(0.005, 0.05 * radii[0]):
            import warnings
            warnings.warn(f"{path}: caster {n!r}'s lowest point lies {gap:+.4f} m from the "
                          "wheels' contact plane; the vehicle puts its contact on that plane",
                          stacklevel=2)
        cast.append(np.array([low[0], low[1], hubs[:, 2].mean()]))
    if len(picked) + len(cast) < 3:
        raise too_few()
    is_caster = np.array([False] * len(hubs) + [True] * len(cast))
    if cast:
        hubs = np.vstack([hubs, np.array(cast)])
    order = np.lexsort((-hubs[:, 1], -hubs[:, 0]))  # front to rear, left to right
    hubs, is_caster = hubs[order], is_caster[order]
    x_rear, x_front = hubs[:, 0].min(), hubs[:, 0].max()
    wheels_xy = hubs[~is_caster]
    x_axle = wheels_xy[:, 0].min()
    rear = wheels_xy[np.isclose(wheels_xy[:, 0], x_axle, atol=1e-6)]
    axle = np.array([x_axle, rear[:, 1].mean(), rear[:, 2].mean()])  # rear-axle origin in base
    if len(rear) < 2 or x_front - x_rear <= 0:
        raise URDFError(f"{path}: the wheels do not form a rear axle and a front axle"
                        + (" or caster" if cast else ""))
    # mass properties, in base_link
    total, first, inertia = 0.0, np.zeros(3), []
    for lname, (R, t) in pose.items():
        inert = links[lname].find("inertial") if lname in links else None
        if inert is None:
            continue
        m_el = inert.find("mass")
        m = floats(m_el.get("value", "0"), 1, path, f"link {lname!r} mass")[0] \
            if m_el is not None else 0.0
        if not (math.isfinite(m) and m >= 0):
            raise URDFError(f"{path}: link {lname!r} has mass {m}")
        Ri, ti = origin(inert, path)
        c = R @ ti + t
        I_el = inert.find("inertia")
        Il = np.zeros((3, 3)) if I_el is None else inertia_tensor(I_el, path, lname)
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
    return dict(wheel_base=float(x_front - x_rear),
                casters=tuple(bool(c) for c in is_caster) if cast else None,
                track_width=float(rear[:, 1].max() - rear[:, 1].min()),
                wheel_radius=float(radii[0]), wheel_positions=wheel_xy, mass=float(total),
                com=tuple(float(v) for v in (com - axle)), inertia_roll=float(Ixx),
                inertia_pitch=float(Iyy),
                inertia=tuple(map(tuple, J.tolist())) if full else None,
                wheel_width=float(width), wheel_inertia=spin,
                rear_axle_pose=tuple(map(tuple, pose_ra)),
                wheel_torque=float(efforts[0]) if efforts else None,
                name=name or root.get("name", path.stem))
