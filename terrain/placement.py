"""Where a height-map file's samples lie, and the checks of what a file or its sidecar says:
:class:`TerrainFileError` (every refusal names the file), the JSON sidecar
(:func:`sidecar_path`, :func:`read_sidecar`), the placement from keywords, then sidecar, then
defaults (:func:`placement`) and the sample-count check (:func:`check_samples`).
:mod:`terrain.io` reads and writes the files with them."""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np

__all__ = ["TerrainFileError", "sidecar_path", "fail", "is_number", "positive_pair", "finite",
           "read_sidecar", "placement", "check_samples"]


class TerrainFileError(ValueError):
    """A terrain file or its parameters are unusable. The message names the file and the problem."""


def sidecar_path(path) -> Path:
    """``map.png`` -> ``map.json``."""
    return Path(path).with_suffix(".json")


def fail(path, msg) -> TerrainFileError:
    return TerrainFileError(f"{path}: {msg}")


def is_number(v) -> bool:
    """A real number (Python or numpy), not a bool and not a string holding one: a sidecar's
    ``"zScale": true`` or ``"resolution": "0.5"`` is an error, not a value."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def positive_pair(value, name, path):
    if is_number(value):
        value = [value, value]
    try:
        if isinstance(value, (str, bytes)) or not all(is_number(v) for v in value):
            raise TypeError
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise fail(path, f"{name} must be a number or [x, y], got {value!r}") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or b <= 0:
        raise fail(path, f"{name} must be finite and > 0, got {value!r}")
    return a, b


def finite(value, name, path, positive=False):
    if not is_number(value):
        raise fail(path, f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or (positive and v <= 0):
        raise fail(path, f"{name} must be finite{' and > 0' if positive else ''}, got {value!r}")
    return v


def read_sidecar(path: Path) -> dict:
    side = sidecar_path(path)
    if not side.exists():
        return {}
    try:
        meta = json.loads(side.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise fail(side, f"unreadable JSON sidecar ({exc})") from None
    except RecursionError:
        raise fail(side, "unreadable JSON sidecar (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise fail(side, "the sidecar must hold a JSON object")
    return meta


def placement(path, meta, nx, ny, *, resolution, origin, center, z_offset):
    """Resolve resolution, (x0, y0) and the z offset from keywords, then sidecar, then defaults."""
    if resolution is None:
        resolution = meta.get("resolution", 1.0)
    res = positive_pair(resolution, "resolution", path)
    if origin is not None and center is not None:
        raise fail(path, "give origin or center, not both")
    z_from_origin = None
    if origin is None and center is None:
        if "origin" in meta:
            origin = meta["origin"]
        elif "center" in meta:
            center = meta["center"]
    if origin is not None:
        o = list(origin) if not isinstance(origin, (int, float)) else [origin]
        if len(o) not in (2, 3):
            raise fail(path, f"origin must be [x, y] or [x, y, z], got {origin!r}")
        x0 = finite(o[0], "origin x", path)
        y0 = finite(o[1], "origin y", path)
        if len(o) == 3:
            z_from_origin = finite(o[2], "origin z", path)
    else:
        c = list(center) if center is not None else [0.0, 0.0]
        if len(c) not in (2, 3):
            raise fail(path, f"center must be [x, y] or [x, y, z], got {center!r}")
        x0 = finite(c[0], "center x", path) - 0.5 * (nx - 1) * res[0]
        y0 = finite(c[1], "center y", path) - 0.5 * (ny - 1) * res[1]
        if len(c) == 3:
            z_from_origin = finite(c[2], "center z", path)
    if z_offset is None:
        z_offset = z_from_origin if z_from_origin is not None else 0.0
    z_offset = finite(z_offset, "z_offset", path)
    size = meta.get("terrainSize", meta.get("size"))
    if size is not None:
        sx, sy = positive_pair(size, "terrainSize", path)
        ex, ey = (nx - 1) * res[0], (ny - 1) * res[1]
        if not (math.isclose(sx, ex, rel_tol=1e-6) and math.isclose(sy, ey, rel_tol=1e-6)):
            raise fail(path, f"terrainSize {size!r} does not match {nx} x {ny} samples at "
                              f"resolution {list(res)} (extent {ex:g} x {ey:g} m)")
    return res, (x0, y0), z_offset


def check_samples(path, nx, ny, max_pixels):
    if nx < 2 or ny < 2:
        raise fail(path, f"a height map needs at least 2 samples on each axis, got {nx} x {ny}")
    if max_pixels is not None and nx * ny > max_pixels:
        raise fail(path, f"{nx} x {ny} = {nx * ny} samples exceeds max_pixels={max_pixels}")
