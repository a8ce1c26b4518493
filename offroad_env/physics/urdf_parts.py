"""The parts a URDF is read with (:mod:`.urdf`): its XML numbers and poses, and the geometry
its wheels and casters come from (which collision cylinder is the tyre, where a caster touches
the ground, where a mesh file lies, the names that mark casters and tracks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["URDFError", "floats", "inertia_tensor", "rpy_matrix", "origin", "named_caster",
           "lowest_point", "TRACK_WORDS", "pick_tyre", "footprint_height", "mesh_file"]


class URDFError(ValueError):
    """A URDF file cannot give a vehicle; the message names the file and the problem."""


def floats(text, n, path, what):
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


def inertia_tensor(el, path, link) -> np.ndarray:
    """The 3 x 3 tensor of an ``<inertia>`` element (missing entries 0)."""
    g = {k: floats(el.get(k, "0"), 1, path, f"link {link!r} inertia {k}")[0]
         for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                     [g["ixz"], g["iyz"], g["izz"]]])


def rpy_matrix(r, p, y) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y),
                              math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def origin(el, path) -> tuple[np.ndarray, np.ndarray]:
    o = None if el is None else el.find("origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = floats(o.get("xyz"), 3, path, "origin xyz")
    rpy = floats(o.get("rpy"), 3, path, "origin rpy")
    return rpy_matrix(*rpy), np.array(xyz)


def named_caster(*names) -> bool:
    """A joint or link named as a caster (or a ball transfer)."""
    return any(k in (n or "").lower() for n in names for k in ("caster", "castor"))


def lowest_point(link, pose, path):
    """The lowest point, in base, of a link's collision spheres, boxes and cylinders (the
    middle of the points within 0.1 mm of the lowest: a box's bottom face's centre; None: none
    of these)."""
    R0, t0 = pose
    pts_all = []
    for col in link.findall("collision"):
        Rc, tc = origin(col, path)
        R, c = R0 @ Rc, R0 @ tc + t0
        g = col.find("geometry")
        pts = []
        if g is None:
            continue
        if g.find("sphere") is not None:
            rs = floats(g.find("sphere").get("radius"), 1, path, "sphere radius")[0]
            pts = [c - np.array([0.0, 0.0, rs])]
        elif g.find("box") is not None:
            size = np.array(floats(g.find("box").get("size"), 3, path, "box size")) / 2
            pts = [c + R @ (size * np.array(sg)) for sg in
                   ((a, b, d) for a in (-1, 1) for b in (-1, 1) for d in (-1, 1))]
        elif g.find("cylinder") is not None:
            cyl = g.find("cylinder")
            rc = floats(cyl.get("radius"), 1, path, "cylinder radius")[0]
            half = floats(cyl.get("length"), 1, path, "cylinder length")[0] / 2
            a = R[:, 2]
            ends = [c + half * a, c - half * a]
            # the rim's lowest point: down, across the axis
            down = np.array([0.0, 0.0, -1.0]) - a * (-a[2])
            nd = np.linalg.norm(down)
            pts = [e + (rc * down / nd if nd > 1e-9 else 0.0) for e in ends]
        pts_all.extend(pts)
    if not pts_all:
        return None
    pts = np.array(pts_all)
    z = pts[:, 2].min()
    return pts[pts[:, 2] <= z + 1e-4].mean(0)  # a box's bottom face: its centre


#: link-name parts that mark a tracked vehicle
TRACK_WORDS = ("track", "sprocket", "idler", "road_wheel", "roadwheel", "bogie")


def pick_tyre(cands, hub, footprint, joint, path, wheel_radius):
    """``(radius, width, centre in the link frame)`` of the tyre among a wheel's collision
    cylinders about its axis: the one whose radius is the hub's height above the footprint
    (within 3 %) where the file has a ``base_footprint`` link, else the largest. Warns, naming
    the candidates, where the radii differ and no footprint settles it."""
    radii = sorted({round(c[0], 9) for c in cands})
    best = max(cands, key=lambda c: c[0])
    if len(radii) > 1:
        if footprint is not None:
            height = float(hub[2] - footprint)
            fits = [c for c in cands if abs(c[0] - height) <= 0.03 * height]
            if fits:
                return max(fits, key=lambda c: c[0])
        if wheel_radius is None:
            import warnings
            warnings.warn(f"{path}: wheel {joint!r} has collision cylinders of radii {radii} "
                          f"about its axis; took the largest, {best[0]} m, as the tyre"
                          + ("" if footprint is None else
                             f" (the hub stands {float(hub[2] - footprint):.4f} m above "
                             "base_footprint, which none matches)")
                          + "; give wheel_radius=R to choose", stacklevel=3)
    return best


def footprint_height(pose, joints, base, path) -> float | None:
    """The height in ``base`` of a ``base_footprint`` link (the ground under the robot, by the
    ROS convention), below ``base`` or as its parent; None where the file has none."""
    if "base_footprint" in pose:
        return float(pose["base_footprint"][1][2])
    for j in joints:
        if j.find("parent").get("link") == "base_footprint" and j.find("child").get("link") == base:
            R, t = origin(j, path)
            return float(-(R.T @ t)[2])  # the parent's origin seen from the child
    return None


def mesh_file(filename: str, urdf: Path, package_dir) -> Path | None:
    """The file a URDF mesh names: ``package://NAME/rest`` under ``package_dir`` (or the
    URDF's folder, or its parent), ``file://`` and plain paths relative to the URDF."""
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        pkg, _, sub = rest.partition("/")
        roots = ([Path(package_dir)] if package_dir is not None
                 else [urdf.parent, urdf.parent.parent])
        for root in roots:
            for cand in (root / pkg / sub, root / sub):
                if cand.is_file():
                    return cand
        return None
    if filename.startswith("file://"):
        filename = filename[len("file://"):]
    cand = Path(filename)
    cand = cand if cand.is_absolute() else urdf.parent / cand
    return cand if cand.is_file() else None
