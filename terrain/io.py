"""Reading and writing height maps: PNG (Unreal 16-bit or linear 8/16-bit), raisim text, ``.npy``.

Formats
-------
* **PNG, Unreal convention** (``encoding="unreal"``, 16-bit gray only):
  ``Z = (raw - 32768) * zScale / 128`` [m], raw 32768 is zero; ``zScale`` in metres.
* **PNG, linear** (``encoding="linear"``, 8- or 16-bit gray): ``Z = raw * scale + offset`` (raisim's
  ``heightScale``/``heightOffset``). 8-bit images are read only with this explicit encoding.
* **raisim text** (``.txt``): ``xSamples ySamples xSize ySize`` then ``xSamples * ySamples`` heights,
  sample ``(ix, iy)`` at index ``iy * xSamples + ix``; the grid is centred at ``center``.
* **numpy** (``.npy``): a 2-D float array ``H[iy, ix]``.
* **GeoTIFF** (``.tif``, ``.tiff``; the ``geo`` extra, tifffile): a DEM placed by its own tags
  (resolution, origin, nodata holes, vertical units, north-up rows flipped; geographic rasters
  converted to local metres), see :mod:`terrain.geotiff`. No sidecar.

Every image or array gets the world z offset of the map (sidecar ``origin[2]``) on top.

Sidecar
-------
``map.png`` (or ``.npy``, ``.txt``) may have ``map.json`` beside it, modelled on the four-wheel
seed's ``terrainMeta``::

    {"resolution": [0.2, 0.2],        # [x, y] sample spacing, m (a number means both)
     "origin": [-20.0, -20.0, 0.0],   # world x, y of sample [0, 0] and the z offset, m
     "zScale": 0.0125,                # Unreal elevation scale, m (encoding "unreal")
     "encoding": "unreal",            # or "linear", with "heightScale" and "heightOffset"
     "flipY": false}                  # true: image row 0 is the maximum y (north-up)

Keyword arguments of :func:`load` override the sidecar. Without either, the seed's block defaults
hold: resolution 1 m, grid centred at (0, 0), zScale 1, no flip.

Row order: by default image row 0 is the *minimum* y, so ``H[iy, ix] = image[iy, ix]``. Images
exported north-up (Unreal's "Flip Y Axis", GeoTIFF, MuJoCo's hfield) need ``flip_y=True``.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from pathlib import Path

import numpy as np
import torch

from .heightmap import HeightMap

__all__ = ["load", "save", "TerrainFileError", "sidecar_path", "DEFAULT_MAX_PIXELS", "MAP_SUFFIXES"]

#: the suffixes of the map files :func:`load` and :func:`save` take
MAP_SUFFIXES = (".png", ".tif", ".tiff", ".txt", ".npy")

#: Largest image accepted by default (samples). Pillow itself warns at about 89 M pixels.
DEFAULT_MAX_PIXELS = 64 * 1024 * 1024

ENCODINGS = ("unreal", "linear")
_UNREAL_ZERO = 32768


class TerrainFileError(ValueError):
    """A terrain file or its parameters are unusable. The message names the file and the problem."""


def sidecar_path(path) -> Path:
    """``map.png`` -> ``map.json``."""
    return Path(path).with_suffix(".json")


def _fail(path, msg) -> TerrainFileError:
    return TerrainFileError(f"{path}: {msg}")


def _is_number(v) -> bool:
    """A real number (Python or numpy), not a bool and not a string holding one: a sidecar's
    ``"zScale": true`` or ``"resolution": "0.5"`` is an error, not a value."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _positive_pair(value, name, path):
    if _is_number(value):
        value = [value, value]
    try:
        if isinstance(value, (str, bytes)) or not all(_is_number(v) for v in value):
            raise TypeError
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise _fail(path, f"{name} must be a number or [x, y], got {value!r}") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or b <= 0:
        raise _fail(path, f"{name} must be finite and > 0, got {value!r}")
    return a, b


def _finite(value, name, path, positive=False):
    if not _is_number(value):
        raise _fail(path, f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or (positive and v <= 0):
        raise _fail(path, f"{name} must be finite{' and > 0' if positive else ''}, got {value!r}")
    return v


def _read_sidecar(path: Path) -> dict:
    side = sidecar_path(path)
    if not side.exists():
        return {}
    try:
        meta = json.loads(side.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(side, f"unreadable JSON sidecar ({exc})") from None
    except RecursionError:
        raise _fail(side, "unreadable JSON sidecar (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise _fail(side, "the sidecar must hold a JSON object")
    return meta


def _placement(path, meta, nx, ny, *, resolution, origin, center, z_offset):
    """Resolve resolution, (x0, y0) and the z offset from keywords, then sidecar, then defaults."""
    if resolution is None:
        resolution = meta.get("resolution", 1.0)
    res = _positive_pair(resolution, "resolution", path)
    if origin is not None and center is not None:
        raise _fail(path, "give origin or center, not both")
    z_from_origin = None
    if origin is None and center is None:
        if "origin" in meta:
            origin = meta["origin"]
        elif "center" in meta:
            center = meta["center"]
    if origin is not None:
        o = list(origin) if not isinstance(origin, (int, float)) else [origin]
        if len(o) not in (2, 3):
            raise _fail(path, f"origin must be [x, y] or [x, y, z], got {origin!r}")
        x0 = _finite(o[0], "origin x", path)
        y0 = _finite(o[1], "origin y", path)
        if len(o) == 3:
            z_from_origin = _finite(o[2], "origin z", path)
    else:
        c = list(center) if center is not None else [0.0, 0.0]
        if len(c) not in (2, 3):
            raise _fail(path, f"center must be [x, y] or [x, y, z], got {center!r}")
        x0 = _finite(c[0], "center x", path) - 0.5 * (nx - 1) * res[0]
        y0 = _finite(c[1], "center y", path) - 0.5 * (ny - 1) * res[1]
        if len(c) == 3:
            z_from_origin = _finite(c[2], "center z", path)
    if z_offset is None:
        z_offset = z_from_origin if z_from_origin is not None else 0.0
    z_offset = _finite(z_offset, "z_offset", path)
    size = meta.get("terrainSize", meta.get("size"))
    if size is not None:
        sx, sy = _positive_pair(size, "terrainSize", path)
        ex, ey = (nx - 1) * res[0], (ny - 1) * res[1]
        if not (math.isclose(sx, ex, rel_tol=1e-6) and math.isclose(sy, ey, rel_tol=1e-6)):
            raise _fail(path, f"terrainSize {size!r} does not match {nx} x {ny} samples at "
                              f"resolution {list(res)} (extent {ex:g} x {ey:g} m)")
    return res, (x0, y0), z_offset


def _check_samples(path, nx, ny, max_pixels):
    if nx < 2 or ny < 2:
        raise _fail(path, f"a height map needs at least 2 samples on each axis, got {nx} x {ny}")
    if max_pixels is not None and nx * ny > max_pixels:
        raise _fail(path, f"{nx} x {ny} = {nx * ny} samples exceeds max_pixels={max_pixels}")


# ---------------------------------------------------------------------------------------- PNG
def _read_png(path: Path, max_pixels):
    """Return ``(raw samples as float64 (rows, cols), bit depth)`` of a grayscale PNG."""
    from PIL import Image, UnidentifiedImageError

    bomb = (Image.DecompressionBombError, Image.DecompressionBombWarning)
    try:
        with warnings.catch_warnings():
            # Pillow warns above ~89 M pixels; with a limit of ours, treat that as an error too.
            warnings.simplefilter("error" if max_pixels is not None else "ignore",
                                  Image.DecompressionBombWarning)
            with Image.open(path) as img:
                if img.format != "PNG":
                    raise _fail(path, f"not a PNG image (format {img.format})")
                w, h = img.size
                _check_samples(path, w, h, max_pixels)
                img.verify()  # catches truncation and CRC errors that .load() may paper over
            with Image.open(path) as img:
                img.load()
                raw, bits = raw_from_image(img, path)
    except TerrainFileError:
        raise
    except bomb as exc:
        raise _fail(path, f"image too large ({exc})") from None
    except (OSError, SyntaxError, ValueError, UnidentifiedImageError, EOFError) as exc:
        raise _fail(path, f"corrupt or truncated PNG ({exc})") from None
    return raw, bits


_GRAY16 = ("I;16", "I;16L", "I;16B", "I;16N")
_REJECTED = {"RGB": "colour (RGB; a 16-bit RGB PNG also opens so)",
             "RGBA": "colour with alpha (RGBA)", "P": "palette", "PA": "palette with alpha",
             "LA": "gray with alpha", "1": "1-bit", "CMYK": "CMYK", "YCbCr": "YCbCr",
             "HSV": "HSV", "F": "32-bit float"}


def raw_from_image(img, path="<image>") -> tuple[np.ndarray, int]:
    """``(samples as native float64 (rows, cols), bit depth)`` of a loaded grayscale PIL image.

    Accepts ``I;16`` in every byte order (``I;16B`` arrays are big-endian, which torch refuses:
    the float64 copy is native), ``I`` (how Pillow < 10.3 opens 16-bit gray; values must lie in
    0..65535) and 8-bit ``L``. Never uses ``.convert()``, which clips 16 bits to 8.
    """
    mode = img.mode
    if mode in _GRAY16 or mode == "I":
        bits = 16
    elif mode == "L":
        bits = 8
    elif mode in _REJECTED:
        raise _fail(path, f"image mode {mode} ({_REJECTED[mode]}) is not a height map: a 16-bit "
                          "grayscale PNG (or 8-bit with an explicit encoding) is required")
    else:
        raise _fail(path, f"unsupported image mode {mode}: a 16-bit grayscale PNG (or 8-bit "
                          "with an explicit encoding) is required")
    raw = np.array(img).astype(np.float64)  # native byte order, exact for 16-bit integers
    if raw.ndim != 2:
        raise _fail(path, f"expected a single-channel image, got array shape {raw.shape}")
    if mode == "I" and raw.size and (raw.min() < 0 or raw.max() > 65535):
        raise _fail(path, "mode I image with values outside 0..65535 (not 16-bit gray)")
    return raw, bits


def _decode_png(path, raw, bits, meta, *, encoding, z_scale, scale, offset):
    if encoding is None:
        encoding = meta.get("encoding")
    if encoding is None:
        if bits == 8:
            raise _fail(path, "8-bit grayscale image: pass encoding='linear' with scale and "
                              "offset (or an 'encoding' in the sidecar); the Unreal encoding "
                              "needs 16 bits")
        encoding = "unreal"
    if not isinstance(encoding, str) or encoding not in ENCODINGS:
        raise _fail(path, f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    if encoding == "unreal":
        if bits != 16:
            raise _fail(path, "the Unreal encoding needs a 16-bit image, this one is 8-bit")
        zs = z_scale if z_scale is not None else meta.get("zScale", 1.0)
        zs = _finite(zs, "zScale", path, positive=True)
        return (raw - _UNREAL_ZERO) * (zs / 128.0)
    sc = scale if scale is not None else meta.get("heightScale", meta.get("scale", 1.0))
    off = offset if offset is not None else meta.get("heightOffset", meta.get("offset", 0.0))
    sc = _finite(sc, "scale", path, positive=True)
    off = _finite(off, "offset", path)
    return raw * sc + off


# ---------------------------------------------------------------------------------------- text
def _read_raisim_text(path: Path, max_pixels):
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, f"unreadable text file ({exc})") from None
    tokens = text.split()
    if len(tokens) < 4:
        raise _fail(path, "raisim text format needs a header 'xSamples ySamples xSize ySize'")
    try:
        nx_f, ny_f = float(tokens[0]), float(tokens[1])
        size_x, size_y = float(tokens[2]), float(tokens[3])
    except ValueError:
        raise _fail(path, f"bad raisim header {' '.join(tokens[:4])!r}") from None
    if not (math.isfinite(nx_f) and math.isfinite(ny_f)) or nx_f != int(nx_f) or ny_f != int(ny_f):
        raise _fail(path, f"sample counts must be integers, got {tokens[0]} {tokens[1]}")
    nx, ny = int(nx_f), int(ny_f)
    _check_samples(path, nx, ny, max_pixels)
    if not (math.isfinite(size_x) and math.isfinite(size_y)) or size_x <= 0 or size_y <= 0:
        raise _fail(path, f"xSize and ySize must be finite and > 0, got {size_x}, {size_y}")
    values = tokens[4:]
    if len(values) != nx * ny:
        raise _fail(path, f"header says {nx} x {ny} = {nx * ny} heights, the file has "
                          f"{len(values)}")
    try:
        h = np.array(values, dtype=np.float64).reshape(ny, nx)
    except ValueError as exc:
        raise _fail(path, f"non-numeric height ({exc})") from None
    return h, (size_x / (nx - 1), size_y / (ny - 1))


# ---------------------------------------------------------------------------------------- load
def load(path, *, encoding=None, resolution=None, origin=None, center=None, z_offset=None,
         z_scale=None, scale=None, offset=None, flip_y=None, max_pixels=DEFAULT_MAX_PIXELS,
         interpolation="bilinear", dtype=torch.float32, device=None) -> HeightMap:
    """Load a height map from ``.png``, ``.tif``/``.tiff`` (GeoTIFF), ``.txt`` (raisim) or
    ``.npy`` (:data:`MAP_SUFFIXES`), with its JSON sidecar (not for GeoTIFF).

    Args:
        path: the file. ``path.with_suffix('.json')`` is read as the sidecar when present.
        encoding: PNG only, ``"unreal"`` or ``"linear"`` (default: sidecar, else ``"unreal"`` for
            16-bit images; 8-bit images require it).
        resolution: sample spacing [m], a number or ``(x, y)``; raisim text files carry their own.
        origin: world ``(x, y[, z])`` of sample ``[0, 0]`` [m]; or ``center``: world ``(x, y[, z])``
            of the grid centre. z is the map's z offset.
        z_offset: added to all heights [m] (overrides the z of origin/center).
        z_scale: Unreal zScale [m]. scale, offset: linear encoding.
        flip_y: True when row 0 of the image/array is the maximum y.
        max_pixels: refuse larger images (``None``: no limit).

    Raises:
        TerrainFileError: (a ValueError) naming the file and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise _fail(path, "no such file")
    meta = _read_sidecar(path)
    suffix = path.suffix.lower()
    if suffix == ".png":
        raw, bits = _read_png(path, max_pixels)
        h = _decode_png(path, raw, bits, meta, encoding=encoding, z_scale=z_scale, scale=scale,
                        offset=offset)
    elif suffix == ".txt":
        h, file_res = _read_raisim_text(path, max_pixels)
        if resolution is not None and not np.allclose(
                _positive_pair(resolution, "resolution", path), file_res):
            raise _fail(path, f"resolution {resolution!r} contradicts the file's sizes "
                              f"(spacing {file_res})")
        resolution = file_res
    elif suffix in (".tif", ".tiff"):
        from .geotiff import read_geotiff
        info = read_geotiff(path, max_pixels, lambda msg: _fail(path, msg))
        h = info["heights"]
        if resolution is not None and not np.allclose(
                _positive_pair(resolution, "resolution", path), info["resolution"]):
            raise _fail(path, f"resolution {resolution!r} contradicts the file's georeferencing "
                              f"({info['resolution']})")
        resolution = info["resolution"]
        if origin is None and center is None:  # the file's placement (geographic: centred)
            if info["origin"] is None:
                center = (0.0, 0.0)
            else:
                origin = info["origin"]
        meta = {}  # the file's own tags place it; a sidecar would contradict them
        if flip_y is None:
            flip_y = False  # already rows growing with +y
    elif suffix == ".npy":
        try:
            h = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise _fail(path, f"unreadable .npy ({exc})") from None
        if h.ndim != 2:
            raise _fail(path, f"a .npy height map must be 2-D (ny, nx), got shape {h.shape}")
        if not (np.issubdtype(h.dtype, np.floating) or np.issubdtype(h.dtype, np.integer)):
            raise _fail(path, f"a .npy height map must be numeric, got dtype {h.dtype}")
        _check_samples(path, h.shape[1], h.shape[0], max_pixels)
        h = h.astype(np.float64)
    else:
        raise _fail(path, f"unknown height map format {suffix!r}: use {'/'.join(MAP_SUFFIXES)}")
    if flip_y is None:
        flip_y = meta.get("flipY", False)
        if not isinstance(flip_y, bool):
            raise _fail(sidecar_path(path), f"flipY must be true or false, got {flip_y!r}")
    if flip_y:
        h = h[::-1]
    ny, nx = h.shape
    res, xy0, zo = _placement(path, meta, nx, ny, resolution=resolution, origin=origin,
                              center=center, z_offset=z_offset)
    return HeightMap(np.ascontiguousarray(h), res, origin=xy0, z_offset=zo,
                     interpolation=interpolation, dtype=dtype, device=device)


# ---------------------------------------------------------------------------------------- save
def _unreal_z_scale(h: np.ndarray) -> float:
    """Smallest zScale [m] whose 16-bit range holds ``h`` (at least 1e-6)."""
    peak = float(np.max(np.abs(h))) if h.size else 0.0
    # raw - 32768 spans [-32768, 32767]; keep a hair of margin against rounding.
    return max(peak * 128.0 / 32767.0 * (1 + 1e-9), 1e-6)


def save(hm: HeightMap, path, *, encoding="unreal", z_scale=None, bits=16, scale=None,
         offset=None, flip_y=False, sidecar=True) -> Path:
    """Write a single height map; returns the path. Writes ``path.with_suffix('.json')`` too.

    PNG: ``encoding="unreal"`` (16-bit; ``z_scale`` chosen to fit the heights when None) or
    ``"linear"`` (8/16-bit; ``scale``/``offset`` chosen to span the heights when None). The
    quantisation step is ``zScale / 128`` or ``scale``. PNG cannot store holes: use ``.npy`` or
    ``.txt`` for maps with NaN. The map's z offset goes to the sidecar's ``origin[2]``.
    """
    path = Path(path)
    if len(hm) != 1:
        raise ValueError(f"{path}: save writes one map; this is a stack of {len(hm)} "
                         "(save hm[i] for each)")
    if hm.materials is not None:
        raise ValueError(f"{path}: save writes heights only; this map carries a material map "
                         "(save hm.materials with numpy and pass materials= to HeightMap)")
    h = hm.heights.detach().cpu().to(torch.float64).numpy()
    x0, y0 = hm.origin
    z0 = float(hm.z_offset[0])
    meta = {"resolution": list(hm.resolution), "origin": [x0, y0, z0],
            "terrainSize": list(hm.size), "flipY": bool(flip_y)}
    suffix = path.suffix.lower()
    rows = h[::-1] if flip_y else h
    if suffix == ".png":
        from PIL import Image

        if np.isnan(h).any():
            raise ValueError(f"{path}: PNG cannot store holes (NaN samples); save as .npy or .txt")
        if not isinstance(encoding, str) or encoding not in ENCODINGS:
            raise ValueError(f"{path}: encoding must be one of {ENCODINGS}, got {encoding!r}")
        if encoding == "unreal":
            if bits != 16:
                raise ValueError(f"{path}: the Unreal encoding is 16-bit, got bits={bits}")
            zs = _unreal_z_scale(h) if z_scale is None else _finite(z_scale, "zScale", path, True)
            raw = np.rint(rows * (128.0 / zs) + _UNREAL_ZERO)
            lo, hi = 0, 65535
            meta.update(encoding="unreal", zScale=zs)
        else:
            if bits not in (8, 16):
                raise ValueError(f"{path}: bits must be 8 or 16, got {bits}")
            top = 255 if bits == 8 else 65535
            off = float(h.min()) if offset is None else _finite(offset, "offset", path)
            if scale is None:
                span = float(h.max()) - off
                sc = span / top if span > 0 else 1.0
            else:
                sc = _finite(scale, "scale", path, positive=True)
            raw = np.rint((rows - off) / sc)
            lo, hi = 0, top
            meta.update(encoding="linear", heightScale=sc, heightOffset=off)
        if raw.min() < lo or raw.max() > hi:
            raise ValueError(f"{path}: heights {h.min():g}..{h.max():g} m do not fit {bits}-bit "
                             "samples with this scale; choose a larger one (or None)")
        dtype = np.uint8 if (encoding == "linear" and bits == 8) else np.uint16
        Image.fromarray(raw.astype(dtype)).save(path, format="PNG")
    elif suffix == ".txt":
        sx, sy = hm.size
        with open(path, "w") as f:
            f.write(f"{hm.nx} {hm.ny} {sx!r} {sy!r}\n")
            np.savetxt(f, rows.reshape(1, -1), fmt="%.17g")
        meta["origin"] = [x0, y0, z0]
    elif suffix == ".npy":
        np.save(path, np.ascontiguousarray(rows))
    elif suffix in (".tif", ".tiff"):  # georeferenced in its own tags: no sidecar
        from .geotiff import write_geotiff
        if flip_y:
            raise ValueError(f"{path}: a GeoTIFF is north-up by definition; flip_y does not apply")
        write_geotiff(path, h + z0, hm.resolution, hm.origin, lambda msg: ValueError(
            f"{path}: {msg}"))
        return path
    else:
        raise _fail(path, f"unknown height map format {suffix!r}: use {'/'.join(MAP_SUFFIXES)}")
    if sidecar:
        tmp = sidecar_path(path).with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2) + "\n")
        os.replace(tmp, sidecar_path(path))
    return path
