"""GeoTIFFs and ESRI ASCII grids read by GDAL through rasterio (``load(..., reader="rasterio")``;
rasterio's wheels carry GDAL: the ``geo`` extra). It gives what :func:`terrain.geotiff.read_geotiff`
gives, placed the same way: samples at the pixel centres of GDAL's corner-based geotransform,
GDAL's nodata mask as holes, ``raw * scale + offset`` (GDAL's band scale and offset) in the
band's unit, rows turned to grow with +y, geographic rasters converted to local metres, a
projected one's linear unit to metres. An ASCII grid without a ``.prj`` follows the builtin
reader's rule (``crs=``, else metres, else refused where it looks like degrees)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .ascii_grid import grid_units
from .geotiff import UNIT_TYPES, geographic

__all__ = ["read_with_rasterio"]


def read_with_rasterio(path, max_pixels, fail, crs=None) -> dict:
    """``{"heights", "resolution", "origin", "crs"}`` of a raster GDAL reads (module
    docstring); ``fail(message)`` makes the error to raise."""
    try:
        import rasterio
    except ImportError:
        raise fail("reader='rasterio' needs rasterio: pip install 'offroad-env[geo]' (or pip "
                   "install rasterio)") from None
    try:
        ds = rasterio.open(path)
    except Exception as exc:  # rasterio's own RasterioIOError and friends
        raise fail(f"GDAL cannot open it ({str(exc)[:200]})") from None
    with ds:
        if ds.count != 1:
            raise fail(f"a height map is one band of samples, got {ds.count} bands")
        nx, ny = ds.width, ds.height
        if max_pixels is not None and nx * ny > max_pixels:
            raise fail(f"{nx} x {ny} samples is more than the limit of {max_pixels:,} "
                       "(max_pixels)")
        t = ds.transform
        if abs(t.b) > 1e-12 or abs(t.d) > 1e-12:
            raise fail("the raster is rotated or sheared; reproject it north-up first (e.g. "
                       "gdalwarp)")
        band = ds.read(1, masked=True)
        h = np.ma.filled(band.astype(np.float64), np.nan)
        h[~np.isfinite(h)] = np.nan
        h = h * float(ds.scales[0]) + float(ds.offsets[0])
        unit = (ds.units[0] or "").strip().lower()
        if unit:
            if unit not in UNIT_TYPES:
                raise fail(f"the band's unit {ds.units[0]!r} is not metres or feet")
            h = h * UNIT_TYPES[unit]
        ref = ds.crs
    x0, y0 = t.c + 0.5 * t.a, t.f + 0.5 * t.e  # the centre of pixel (0, 0)
    rx, ry = t.a, -t.e
    if rx < 0:
        h, x0, rx = h[:, ::-1], x0 + (nx - 1) * rx, -rx
    if ry > 0:  # north-up: rows from north to south
        h, y0 = h[::-1], y0 - (ny - 1) * ry
    else:
        ry = -ry
    h = np.ascontiguousarray(h)
    if ref is None:
        kind, factor, said = grid_units(Path(path), crs, {"x": x0, "y": y0}, rx, ry, fail)
    else:
        kind = "geographic" if ref.is_geographic else "projected"
        factor = 1.0 if ref.is_geographic else float(ref.linear_units_factor[1])
        said = ref.to_string()
    if kind == "geographic":
        return geographic(h, x0, y0, rx, ry, f"{said}, GDAL", fail)
    return {"heights": h, "resolution": (rx * factor, ry * factor),
            "origin": (x0 * factor, y0 * factor), "crs": f"projected ({said}, GDAL)"}
