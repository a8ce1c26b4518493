"""GeoTIFF height maps (DEMs), read and written with ``tifffile`` (the ``geo`` extra).

What a file gives (GeoTIFF 1.1 tags):

* samples: float32, float64, int16 or uint16, one band;
* ``ModelPixelScale`` ``(sx, sy)`` and ``ModelTiepoint`` (raster point ``(i, j)`` at model
  ``(X, Y)``), or a ``ModelTransformation`` without rotation or shear (one with either is an
  error: reproject it north-up first, e.g. ``gdalwarp``);
* the raster type: ``PixelIsArea`` (the default; the tiepoint is a pixel's corner, its sample at
  the pixel centre) or ``PixelIsPoint`` (the tiepoint is the sample);
* ``GDAL_NODATA``: those samples become holes (NaN);
* ``VerticalUnitsGeoKey``: metres, feet or US survey feet, converted to metres.

North-up rasters (rows from north to south, the GeoTIFF convention) are flipped into this
project's rows-growing-with-+y. Projected rasters (UTM and the like) keep their metres as world
coordinates; the simulator works in the map's own frame, so UTM eastings cost no precision.

Geographic rasters (longitude/latitude in degrees, e.g. SRTM tiles, EPSG:4326) are converted to
local metres east and north of the window's centre by the local equirectangular approximation at
the centre latitude ``phi`` (WGS 84 metres per degree: ``111132.954 - 559.822 cos 2 phi +
1.175 cos 4 phi`` north, ``111412.84 cos phi - 93.5 cos 3 phi + 0.118 cos 5 phi`` east). Its
relative distance error over a window ``dphi`` (radians) tall is at most about ``tan|phi| dphi /
2 + dphi^2 / 2``: 4e-4 for the bundled 401-sample SRTM window at 37 deg N (0.4 m per km). Degrees
are never used as metres.
"""

from __future__ import annotations

import math

import numpy as np

from .placement import TerrainFileError

__all__ = ["read_geotiff", "write_geotiff", "metres_per_degree"]

_VERTICAL_UNITS = {9001: 1.0, 9002: 0.3048, 9003: 1200.0 / 3937.0}
_DTYPES = (np.float32, np.float64, np.int16, np.uint16)


def _tifffile(path):
    try:
        import tifffile
    except ImportError:
        raise TerrainFileError(f"{path}: reading and writing GeoTIFF needs tifffile: pip install "
                               "'offroad-env[geo]' (or pip install tifffile)") from None
    return tifffile


def _compression(page) -> str:
    """The name of a TIFF page's compression (``LZW``, ``ADOBE_DEFLATE``, ...)."""
    c = getattr(page, "compression", None)
    return getattr(c, "name", str(c))


def metres_per_degree(lat_deg: float) -> tuple[float, float]:
    """WGS 84 ``(east, north)`` metres per degree of longitude and latitude at ``lat_deg``."""
    p = math.radians(lat_deg)
    north = 111132.954 - 559.822 * math.cos(2 * p) + 1.175 * math.cos(4 * p)
    east = 111412.84 * math.cos(p) - 93.5 * math.cos(3 * p) + 0.118 * math.cos(5 * p)
    return east, north


def read_geotiff(path, max_pixels, fail) -> dict:
    """Read a GeoTIFF DEM: ``{"heights": (ny, nx) float64 rows growing with +y (NaN holes),
    "resolution": (rx, ry), "origin": (x0, y0) of sample [0, 0] or None (geographic: centred
    at (0, 0)), "crs": a description}``. ``fail(message)`` makes the error to raise.

    tifffile's own log lines (a corrupt file's "invalid offset...") are held back while it
    reads: the clear error raised here says what is wrong."""
    import logging
    log = logging.getLogger("tifffile")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        return _read_geotiff(path, max_pixels, fail)
    finally:
        log.setLevel(level)


def _read_geotiff(path, max_pixels, fail) -> dict:
    tifffile = _tifffile(path)
    try:
        tif = tifffile.TiffFile(path)
    except Exception as exc:  # not a TIFF, truncated
        raise fail(f"unreadable TIFF ({type(exc).__name__}: {str(exc)[:200]})") from None
    with tif:
        if not tif.pages:
            raise fail("a TIFF without images")
        page = tif.pages[0]
        shape = page.shape
        if len(shape) != 2:
            raise fail(f"a height map is one band of samples (ny, nx), got shape {shape}")
        ny, nx = shape
        if max_pixels is not None and nx * ny > max_pixels:
            raise fail(f"{nx} x {ny} samples is more than the limit of {max_pixels:,} "
                       "(max_pixels)")
        if page.dtype not in _DTYPES:
            raise fail(f"samples of type {page.dtype} are not a height map: float32, float64, "
                       "int16 or uint16 are")
        geo = page.geotiff_tags or {}
        nodata = page.tags.get("GDAL_NODATA")
        try:
            raw = page.asarray()
        except Exception as exc:
            if "imagecodecs" in str(exc):
                raise fail(f"the samples are compressed ({_compression(page)}), and decoding "
                           "them needs the imagecodecs package: pip install 'offroad-env[geo]' "
                           "(or pip install imagecodecs)") from None
            raise fail(f"unreadable samples ({type(exc).__name__}: {str(exc)[:200]})") from None
    h = raw.astype(np.float64)
    if nodata is not None:
        try:
            nd = float(str(nodata.value).strip().strip("\x00"))
        except ValueError:
            raise fail(f"GDAL_NODATA {nodata.value!r} is not a number") from None
        h[(raw == nd) if not math.isnan(nd) else np.isnan(h)] = np.nan
    h[~np.isfinite(h)] = np.nan
    units = geo.get("VerticalUnitsGeoKey")
    if units is not None:
        code = int(units)
        if code not in _VERTICAL_UNITS:
            raise fail(f"vertical units {units!r} (EPSG {code}) are not metres or feet")
        h *= _VERTICAL_UNITS[code]
    if "ModelTransformation" in geo:
        m = np.asarray(geo["ModelTransformation"], dtype=float).reshape(4, 4)
        if abs(m[0, 1]) > 1e-12 or abs(m[1, 0]) > 1e-12:
            raise fail("the raster is rotated or sheared (ModelTransformation); reproject it "
                       "north-up first (e.g. gdalwarp)")
        sx, sy = m[0, 0], -m[1, 1]
        tie = (0.0, 0.0, m[0, 3], m[1, 3])
    elif "ModelPixelScale" in geo and "ModelTiepoint" in geo:
        sx, sy = (float(v) for v in geo["ModelPixelScale"][:2])
        t = [float(v) for v in geo["ModelTiepoint"]]
        tie = (t[0], t[1], t[3], t[4])
    else:
        raise fail("no georeferencing (ModelPixelScale and ModelTiepoint, or "
                   "ModelTransformation): give the resolution in a sidecar, or use .png/.npy")
    if not (sx > 0 and sy > 0 and math.isfinite(sx) and math.isfinite(sy)):
        raise fail(f"pixel scale ({sx}, {sy}) is not a north-up raster's positive spacing")
    # model coordinates of sample (col 0, row 0): the tiepoint moved to pixel (0, 0); a
    # PixelIsArea tiepoint is a corner, its sample is half a pixel in
    raster = int(geo.get("GTRasterTypeGeoKey", 1))
    i, j, X, Y = tie
    x_first = X - i * sx + (0.5 * sx if raster == 1 else 0.0)
    y_top = Y + j * sy - (0.5 * sy if raster == 1 else 0.0)
    h = h[::-1]  # north-up rows -> rows growing with +y
    y_first = y_top - (ny - 1) * sy
    model = int(geo.get("GTModelTypeGeoKey", 1))
    if model == 2:  # geographic: degrees
        lat_c = y_first + 0.5 * (ny - 1) * sy
        if not -85.0 < lat_c < 85.0:
            raise fail(f"a geographic raster at latitude {lat_c:g} deg: too near a pole for the "
                       "local equirectangular conversion; reproject it (e.g. to UTM)")
        east, north = metres_per_degree(lat_c)
        crs = (f"geographic (EPSG {int(geo.get('GeographicTypeGeoKey', 4326))}), converted to "
               f"local metres at {lat_c:.5f} deg N, {x_first + 0.5 * (nx - 1) * sx:.5f} deg E")
        return {"heights": h, "resolution": (sx * east, sy * north), "origin": None, "crs": crs}
    crs = f"projected (EPSG {int(geo.get('ProjectedCSTypeGeoKey', 0)) or 'unstated'})"
    return {"heights": h, "resolution": (sx, sy), "origin": (x_first, y_first), "crs": crs}


def write_geotiff(path, heights: np.ndarray, resolution, origin, fail) -> None:
    """Write ``heights`` ``(ny, nx)`` [m] (rows growing with +y, NaN holes) as a float32,
    north-up, PixelIsArea GeoTIFF whose sample [0, 0] lies at world ``origin`` with
    ``resolution`` spacing, metres, nodata NaN (a local projected frame: no EPSG code)."""
    tifffile = _tifffile(path)
    rx, ry = resolution
    x0, y0 = origin
    ny, nx = heights.shape
    north_up = np.ascontiguousarray(heights[::-1], dtype=np.float32)
    x_corner = x0 - 0.5 * rx
    y_corner = y0 + (ny - 1) * ry + 0.5 * ry
    # GeoKeyDirectory: version 1.1.0, 3 keys: GTModelType projected (1), GTRasterType
    # PixelIsArea (1), VerticalUnits metre (9001)
    keys = [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 4099, 0, 1, 9001]
    extratags = [(33550, "d", 3, (float(rx), float(ry), 0.0), False),
                 (33922, "d", 6, (0.0, 0.0, 0.0, float(x_corner), float(y_corner), 0.0), False),
                 (34735, "H", len(keys), keys, False),
                 (42113, "s", 0, "nan", False)]
    try:
        tifffile.imwrite(path, north_up, extratags=extratags)
    except OSError:
        raise
    except Exception as exc:
        raise fail(f"cannot write GeoTIFF ({type(exc).__name__}: {exc})") from None
