"""ESRI ASCII grids (``.asc``, GDAL's AAIGrid), read without GDAL.

The header, one ``key value`` a line (any case): ``ncols``, ``nrows``, ``xllcorner`` or
``xllcenter``, ``yllcorner`` or ``yllcenter``, ``cellsize`` (or ``dx`` and ``dy``) and an
optional ``nodata_value``; then ``nrows`` rows of ``ncols`` heights, the first row the
northernmost. A ``...corner`` gives the lower-left corner of the lower-left cell (its sample at
the cell's centre), a ``...center`` that sample itself.

A grid does not say its units. They come from a ``.prj`` file beside it (the ESRI WKT GDAL
writes: a ``GEOGCS`` alone is degrees, a ``PROJCS`` is projected, in its ``UNIT``'s metres) or
from ``crs=`` (``"geographic"``: degrees; ``"projected"``: metres). Without either, a grid is
read in metres, except one whose cell size and corners look like degrees (a cell under 0.01
and a lower-left corner within +-180 x +-90), which is refused naming both fixes: read as
metres, a 1-arc-second SRTM tile would be 3.6 mm wide. Degrees become local metres as a
geographic GeoTIFF's do (:func:`terrain.geotiff.geographic`). Heights are read as metres.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .geotiff import geographic

__all__ = ["read_ascii_grid", "write_ascii_grid", "grid_units", "CRS_CHOICES", "prj_units"]

#: the ``crs=`` values a grid without a ``.prj`` may be given
CRS_CHOICES = ("geographic", "projected")

_KEYS = ("ncols", "nrows", "xllcorner", "xllcenter", "yllcorner", "yllcenter", "cellsize",
         "dx", "dy", "nodata_value")


def prj_units(text: str) -> tuple[str, float]:
    """``("geographic", 1.0)`` or ``("projected", metres per unit)`` of an ESRI WKT ``.prj``
    (ValueError for a text that is neither)."""
    t = text.strip()
    head = t.split("[", 1)[0].strip().upper()
    if head in ("GEOGCS", "GEOGCRS", "GEOGRAPHICCRS"):
        return "geographic", 1.0
    if head in ("PROJCS", "PROJCRS", "PROJECTEDCRS"):
        # the projection's own unit is its last UNIT (a GEOGCS inside has its own, in degrees)
        units = re.findall(r'UNIT\s*\[\s*"([^"]*)"\s*,\s*([0-9.eE+-]+)', t)
        if not units:
            return "projected", 1.0
        factor = float(units[-1][1])
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"a PROJCS unit of {factor} m")
        return "projected", factor
    raise ValueError(f"not an ESRI WKT coordinate system (it starts with {head[:20]!r})")


def read_ascii_grid(path, max_pixels, fail, crs=None) -> dict:
    """Read an ESRI ASCII grid: ``{"heights": (ny, nx) float64 rows growing with +y (NaN
    holes), "resolution", "origin" (None: geographic, centred), "crs"}``, as
    :func:`terrain.geotiff.read_geotiff` gives. ``crs``: ``"geographic"`` or ``"projected"``
    where the file has no ``.prj`` (module docstring); ``fail(message)`` makes the error."""
    path = Path(path)
    try:
        lines = path.read_text(errors="strict").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"unreadable text ({exc})") from None
    head, k = {}, 0
    while k < len(lines):
        parts = lines[k].split()
        if not parts:
            k += 1
            continue
        key = parts[0].lower()
        if key not in _KEYS:
            break
        if len(parts) != 2:
            raise fail(f"header line {k + 1} {lines[k]!r} is not 'key value'")
        try:
            head[key] = float(parts[1])
        except ValueError:
            raise fail(f"header {parts[0]} {parts[1]!r} is not a number") from None
        k += 1
    for need in ("ncols", "nrows"):
        if need not in head:
            raise fail(f"no {need} in the header (an ESRI ASCII grid starts with ncols, nrows, "
                       "xllcorner, yllcorner, cellsize)")
    nx, ny = int(head["ncols"]), int(head["nrows"])
    if nx != head["ncols"] or ny != head["nrows"] or nx < 2 or ny < 2:
        raise fail(f"ncols {head['ncols']:g} x nrows {head['nrows']:g}: a height map needs "
                   "whole numbers of at least 2 samples on each axis")
    if max_pixels is not None and nx * ny > max_pixels:
        raise fail(f"{nx} x {ny} samples is more than the limit of {max_pixels:,} (max_pixels)")
    if "cellsize" in head:
        dx = dy = head["cellsize"]
    elif "dx" in head and "dy" in head:
        dx, dy = head["dx"], head["dy"]
    else:
        raise fail("no cellsize (nor dx and dy) in the header")
    if not all(math.isfinite(v) and v > 0 for v in (dx, dy)):
        raise fail(f"cell size ({dx:g}, {dy:g}) must be finite and > 0")
    corner = {}
    for axis, d in (("x", dx), ("y", dy)):
        if f"{axis}llcenter" in head:
            corner[axis] = head[f"{axis}llcenter"]
        elif f"{axis}llcorner" in head:
            corner[axis] = head[f"{axis}llcorner"] + 0.5 * d
        else:
            raise fail(f"no {axis}llcorner (nor {axis}llcenter) in the header")
    try:
        values = np.array(" ".join(lines[k:]).split(), dtype=np.float64)
    except ValueError as exc:
        raise fail(f"a height that is not a number ({exc})") from None
    if values.size != nx * ny:
        raise fail(f"{values.size} heights for ncols {nx} x nrows {ny} = {nx * ny}")
    h = values.reshape(ny, nx)[::-1].copy()  # north row first -> rows growing with +y
    if "nodata_value" in head:
        h[h == head["nodata_value"]] = np.nan
    h[~np.isfinite(h)] = np.nan
    kind, unit, said = grid_units(path, crs, corner, dx, dy, fail)
    x0, y0 = corner["x"], corner["y"]
    if kind == "geographic":
        return geographic(h, x0, y0, dx, dy, said, fail)
    return {"heights": h, "resolution": (dx * unit, dy * unit), "origin": (x0 * unit, y0 * unit),
            "crs": f"projected ({said})"}


def grid_units(path: Path, crs, corner: dict, dx: float, dy: float, fail):
    """``(kind, metres per unit, where it was said)`` of a grid whose lower-left sample is at
    ``corner`` (``{"x", "y"}``) with spacing ``dx``, ``dy`` (module docstring)."""
    prj = path.with_suffix(".prj")
    if crs is not None and crs not in CRS_CHOICES:
        raise fail(f"crs={crs!r}: give one of {CRS_CHOICES}")
    if prj.is_file():
        try:
            kind, unit = prj_units(prj.read_text(errors="replace"))
        except ValueError as exc:
            raise fail(f"{prj.name}: {exc}") from None
        if crs is not None and crs != kind:
            raise fail(f"crs={crs!r} contradicts {prj.name}, which says {kind}")
        return kind, unit, f"from {prj.name}"
    if crs is not None:
        return crs, 1.0, f"crs={crs!r}"
    if (max(dx, dy) < 0.01 and abs(corner["x"]) <= 180.0 and abs(corner["y"]) <= 90.0):
        raise fail(f"cell size {max(dx, dy):g} at ({corner['x']:g}, {corner['y']:g}) looks like "
                   f"degrees, and nothing says the units: put the grid's {prj.name} beside it, "
                   "or give crs='geographic' (degrees) or crs='projected' (metres)")
    return "projected", 1.0, "units unstated: read as metres"


def write_ascii_grid(path, heights: np.ndarray, resolution, origin, fail) -> None:
    """Write ``heights`` ``(ny, nx)`` [m] (rows growing with +y, NaN holes) as an ESRI ASCII
    grid whose sample [0, 0] lies at ``origin`` (``xllcenter``, ``yllcenter``), nodata -9999,
    metres (no ``.prj``: a local frame). An ASCII grid's cells are square."""
    rx, ry = resolution
    if not math.isclose(rx, ry, rel_tol=1e-12):
        raise fail(f"an ESRI ASCII grid has square cells; this map's are {rx:g} x {ry:g} m "
                   "(save it as .tif or .npy)")
    ny, nx = heights.shape
    rows = np.where(np.isnan(heights), -9999.0, heights)[::-1]
    with open(path, "w") as f:
        f.write(f"ncols {nx}\nnrows {ny}\nxllcenter {origin[0]!r}\nyllcenter {origin[1]!r}\n"
                f"cellsize {float(rx)!r}\nnodata_value -9999\n")
        np.savetxt(f, rows, fmt="%.17g")
