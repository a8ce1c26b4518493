"""GeoTIFF height maps (DEMs), read and written with ``tifffile`` (the ``geo`` extra).

What a file gives (GeoTIFF 1.1 tags):

* samples: float32, float64, int16 or uint16, one band;
* ``ModelPixelScale`` ``(sx, sy)`` and ``ModelTiepoint`` (raster point ``(i, j)`` at model
  ``(X, Y)``), or a ``ModelTransformation`` without rotation or shear (one with either is an
  error: reproject it north-up first, e.g. ``gdalwarp``);
* the raster type: ``PixelIsArea`` (the default; the tiepoint is a pixel's corner, its sample at
  the pixel centre) or ``PixelIsPoint`` (the tiepoint is the sample);
* ``GDAL_NODATA``: those samples become holes (NaN);
* GDAL's band metadata (``GDAL_METADATA``): a ``SCALE`` and ``OFFSET`` (the height is ``raw *
  scale + offset``, as GDAL reads it: a uint16 DEM stored at 0.5 m steps from -5 m) and a unit
  type (metres or feet);
* ``VerticalUnitsGeoKey``: metres, feet or US survey feet, converted to metres.

North-up rasters (rows from north to south, the GeoTIFF convention) are flipped into this
project's rows-growing-with-+y; south-up ones (a negative pixel scale in y, GDAL's positive
``geotransform[5]``) already run that way, and a raster running east to west is turned. Projected rasters (UTM and the like) keep their metres as world
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

__all__ = ["read_geotiff", "write_geotiff", "metres_per_degree", "gdal_band_metadata", "UNIT_TYPES",
           "geographic"]

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
        gdal_meta = page.tags.get("GDAL_METADATA")
        gdal_meta = None if gdal_meta is None else gdal_meta.value  # read while open
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
    scale, offset, unit = gdal_band_metadata(gdal_meta, fail)
    if scale != 1.0 or offset != 0.0:  # GDAL: the value is raw * scale + offset
        h = h * scale + offset
    units = geo.get("VerticalUnitsGeoKey")
    if units is not None:
        code = int(units)
        if code not in _VERTICAL_UNITS:
            raise fail(f"vertical units {units!r} (EPSG {code}) are not metres or feet")
        h *= _VERTICAL_UNITS[code]
    elif unit is not None:
        h *= unit
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
    if not (sx != 0 and sy != 0 and math.isfinite(sx) and math.isfinite(sy)):
        raise fail(f"pixel scale ({sx}, {sy}) is not a raster's spacing (finite, not 0)")
    # sample (col c, row r) lies at model X = x0 + c sx, Y = y0 - r sy: the tiepoint moved to
    # pixel (0, 0), and a PixelIsArea tiepoint is a corner, its sample half a pixel in. sy > 0
    # is the usual north-up raster (rows from north to south), sy < 0 a south-up one (GDAL's
    # positive geotransform[5]); sx < 0 runs east to west
    half = 0.5 if int(geo.get("GTRasterTypeGeoKey", 1)) == 1 else 0.0
    i, j, X, Y = tie
    x0, y0 = X + (half - i) * sx, Y - (half - j) * sy
    h, x_first, rx = _ascending(h, 1, x0, sx, nx)
    h, y_first, ry = _ascending(h, 0, y0, -sy, ny)
    model = int(geo.get("GTModelTypeGeoKey", 1))
    if model == 2:  # geographic: degrees
        said = f"EPSG {int(geo.get('GeographicTypeGeoKey', 4326))}"
        return geographic(h, x_first, y_first, rx, ry, said, fail)
    crs = f"projected (EPSG {int(geo.get('ProjectedCSTypeGeoKey', 0)) or 'unstated'})"
    return {"heights": h, "resolution": (rx, ry), "origin": (x_first, y_first), "crs": crs}


def geographic(h: np.ndarray, lon0: float, lat0: float, dlon: float, dlat: float, said: str,
               fail) -> dict:
    """A geographic raster's heights ``h`` ``(ny, nx)`` (rows growing north; sample [0, 0] at
    ``lon0``, ``lat0`` [deg], spacing ``dlon``, ``dlat`` [deg]) placed in local metres around
    its centre (module docstring): the reader's dict, ``origin`` None (centred at (0, 0));
    ``said``: where the CRS came from. Refused within 5 deg of a pole."""
    ny, nx = h.shape
    lat_c = lat0 + 0.5 * (ny - 1) * dlat
    if not -85.0 < lat_c < 85.0:
        raise fail(f"a geographic raster at latitude {lat_c:g} deg: too near a pole for the "
                   "local equirectangular conversion; reproject it (e.g. to UTM)")
    east, north = metres_per_degree(lat_c)
    return {"heights": h, "resolution": (dlon * east, dlat * north), "origin": None,
            "crs": f"geographic ({said}), converted to local metres at {lat_c:.5f} deg N, "
                   f"{lon0 + 0.5 * (nx - 1) * dlon:.5f} deg E"}


def _ascending(h: np.ndarray, axis: int, first: float, step: float, n: int):
    """``(h, first, spacing)`` with ``h``'s ``axis`` reordered so that the coordinate grows
    along it: samples at ``first + k step`` (k = 0..n-1), reversed where ``step < 0``."""
    if step > 0:
        return h, first, step
    return np.flip(h, axis), first + (n - 1) * step, -step


#: GDAL's names of a band's vertical unit (``<Item role="unittype">``), in metres
UNIT_TYPES = {"m": 1.0, "metre": 1.0, "meter": 1.0, "metres": 1.0, "meters": 1.0,
               "ft": 0.3048, "foot": 0.3048, "feet": 0.3048,
               "us-ft": 1200.0 / 3937.0, "us survey foot": 1200.0 / 3937.0,
               "ftus": 1200.0 / 3937.0}


def gdal_band_metadata(text, fail) -> tuple[float, float, float | None]:
    """``(scale, offset, unit)`` of band 1 from GDAL's metadata tag (``GDAL_METADATA``, XML:
    ``<Item name="SCALE" sample="0" role="scale">0.5</Item>``, ``role="offset"``,
    ``role="unittype"``): the value a sample stands for is ``raw * scale + offset``, in
    ``unit`` metres (None: unstated). No tag: ``(1, 0, None)``."""
    if text is None:
        return 1.0, 0.0, None
    import xml.etree.ElementTree as ET

    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    try:
        root = ET.fromstring(raw.strip().strip("\x00"))
    except ET.ParseError as exc:
        raise fail(f"GDAL_METADATA is not XML ({exc})") from None
    out = {"scale": 1.0, "offset": 0.0, "unittype": None}
    for item in root.iter("Item"):
        role = (item.get("role") or item.get("name") or "").lower()
        if role not in out or item.get("sample", "0") != "0":
            continue
        value = (item.text or "").strip()
        if role == "unittype":
            if value and value.lower() not in UNIT_TYPES:
                raise fail(f"GDAL_METADATA's band unit {value!r} is not metres or feet "
                           f"({sorted(UNIT_TYPES)})")
            out[role] = UNIT_TYPES.get(value.lower()) if value else None
            continue
        try:
            out[role] = float(value)
        except ValueError:
            raise fail(f"GDAL_METADATA's {role.upper()} {value!r} is not a number") from None
        if not math.isfinite(out[role]) or (role == "scale" and out[role] == 0):
            raise fail(f"GDAL_METADATA's {role.upper()} {value!r} is not a usable {role}")
    return out["scale"], out["offset"], out["unittype"]


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
