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
  (resolution, origin, nodata holes, GDAL's scale and offset, vertical units, north-up rows
  flipped, south-up ones kept; geographic rasters converted to local metres), see
  :mod:`terrain.geotiff`. No sidecar.
* **ESRI ASCII grid** (``.asc``): its header places it; its units from the ``.prj`` beside it or
  ``crs=`` (:mod:`terrain.ascii_grid`). No sidecar.

GeoTIFF and ASCII grids are read by this package's own readers (``reader="builtin"``), or by
GDAL through rasterio (``reader="rasterio"``, with rasterio installed: the ``geo`` extra), which
reads them the same (the tests hold both to every file they write) and also what the builtin
readers refuse (rotated rasters excepted: neither places those).

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
import os
from pathlib import Path

import numpy as np
import torch

from .formats import ENCODINGS, UNREAL_ZERO, decode_png, read_png, read_raisim_text
from .heightmap import HeightMap
from .placement import (TerrainFileError, check_samples, fail, finite, placement, positive_pair,
                        read_sidecar, sidecar_path)

__all__ = ["load", "save", "TerrainFileError", "sidecar_path", "DEFAULT_MAX_PIXELS", "MAP_SUFFIXES",
           "READERS"]

#: the suffixes of the map files :func:`load` and :func:`save` take
MAP_SUFFIXES = (".png", ".tif", ".tiff", ".asc", ".txt", ".npy")

#: the readers of georeferenced files (GeoTIFF, ESRI ASCII grid) :func:`load` takes
READERS = ("builtin", "rasterio")

#: Largest image accepted by default (samples). Pillow itself warns at about 89 M pixels.
DEFAULT_MAX_PIXELS = 64 * 1024 * 1024


def load(path, *, encoding=None, resolution=None, origin=None, center=None, z_offset=None,
         z_scale=None, scale=None, offset=None, flip_y=None, max_pixels=DEFAULT_MAX_PIXELS,
         interpolation="bilinear", dtype=torch.float32, device=None, crs=None,
         reader="builtin") -> HeightMap:
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
        crs: an ESRI ASCII grid's units where no ``.prj`` says them: ``"geographic"``
            (degrees) or ``"projected"`` (metres).
        reader: GeoTIFF and ASCII grids: ``"builtin"`` or ``"rasterio"`` (:data:`READERS`).

    Raises:
        TerrainFileError: (a ValueError) naming the file and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise fail(path, "no such file")
    meta = read_sidecar(path)
    suffix = path.suffix.lower()
    if suffix == ".png":
        raw, bits = read_png(path, max_pixels)
        h = decode_png(path, raw, bits, meta, encoding=encoding, z_scale=z_scale, scale=scale,
                        offset=offset)
    elif suffix == ".txt":
        h, file_res = read_raisim_text(path, max_pixels)
        if resolution is not None and not np.allclose(
                positive_pair(resolution, "resolution", path), file_res):
            raise fail(path, f"resolution {resolution!r} contradicts the file's sizes "
                              f"(spacing {file_res})")
        resolution = file_res
    elif suffix in (".tif", ".tiff", ".asc"):
        info = _read_georeferenced(path, suffix, max_pixels, crs, reader)
        h = info["heights"]
        if resolution is not None and not np.allclose(
                positive_pair(resolution, "resolution", path), info["resolution"]):
            raise fail(path, f"resolution {resolution!r} contradicts the file's georeferencing "
                              f"({info['resolution']})")
        resolution = info["resolution"]
        if origin is None and center is None:  # the file's placement (geographic: centred)
            if info["origin"] is None:
                center = (0.0, 0.0)
            else:
                origin = info["origin"]
        meta = {}  # the file's own header places it; a sidecar would contradict it
        if flip_y is None:
            flip_y = False  # already rows growing with +y
    elif suffix == ".npy":
        try:
            h = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise fail(path, f"unreadable .npy ({exc})") from None
        if h.ndim != 2:
            raise fail(path, f"a .npy height map must be 2-D (ny, nx), got shape {h.shape}")
        if not (np.issubdtype(h.dtype, np.floating) or np.issubdtype(h.dtype, np.integer)):
            raise fail(path, f"a .npy height map must be numeric, got dtype {h.dtype}")
        check_samples(path, h.shape[1], h.shape[0], max_pixels)
        h = h.astype(np.float64)
    else:
        raise fail(path, f"unknown height map format {suffix!r}: use {'/'.join(MAP_SUFFIXES)}")
    if crs is not None and suffix != ".asc":
        raise fail(path, f"crs={crs!r} is for ESRI ASCII grids (.asc), whose units a file "
                          "may not say; this file places itself")
    if flip_y is None:
        flip_y = meta.get("flipY", False)
        if not isinstance(flip_y, bool):
            raise fail(sidecar_path(path), f"flipY must be true or false, got {flip_y!r}")
    if flip_y:
        h = h[::-1]
    ny, nx = h.shape
    res, xy0, zo = placement(path, meta, nx, ny, resolution=resolution, origin=origin,
                              center=center, z_offset=z_offset)
    return HeightMap(np.ascontiguousarray(h), res, origin=xy0, z_offset=zo,
                     interpolation=interpolation, dtype=dtype, device=device)


# ---------------------------------------------------------------------------------------- save
def _read_georeferenced(path: Path, suffix: str, max_pixels, crs, reader) -> dict:
    """A GeoTIFF's or ASCII grid's heights and placement (``read_geotiff``'s dict) by
    ``reader``."""
    if reader not in READERS:
        raise fail(path, f"reader={reader!r}: give one of {READERS}")
    err = lambda msg: fail(path, msg)  # noqa: E731
    if reader == "rasterio":
        from .rasterio_reader import read_with_rasterio
        return read_with_rasterio(path, max_pixels, err, crs)
    if suffix == ".asc":
        from .ascii_grid import read_ascii_grid
        return read_ascii_grid(path, max_pixels, err, crs)
    from .geotiff import read_geotiff
    return read_geotiff(path, max_pixels, err)


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
            zs = _unreal_z_scale(h) if z_scale is None else finite(z_scale, "zScale", path, True)
            raw = np.rint(rows * (128.0 / zs) + UNREAL_ZERO)
            lo, hi = 0, 65535
            meta.update(encoding="unreal", zScale=zs)
        else:
            if bits not in (8, 16):
                raise ValueError(f"{path}: bits must be 8 or 16, got {bits}")
            top = 255 if bits == 8 else 65535
            off = float(h.min()) if offset is None else finite(offset, "offset", path)
            if scale is None:
                span = float(h.max()) - off
                sc = span / top if span > 0 else 1.0
            else:
                sc = finite(scale, "scale", path, positive=True)
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
    elif suffix == ".asc":  # its header places it: no sidecar
        from .ascii_grid import write_ascii_grid
        if flip_y:
            raise ValueError(f"{path}: an ASCII grid runs north to south by definition; flip_y "
                             "does not apply")
        write_ascii_grid(path, h + z0, hm.resolution, hm.origin, lambda msg: ValueError(
            f"{path}: {msg}"))
        return path
    elif suffix in (".tif", ".tiff"):  # georeferenced in its own tags: no sidecar
        from .geotiff import write_geotiff
        if flip_y:
            raise ValueError(f"{path}: a GeoTIFF is north-up by definition; flip_y does not apply")
        write_geotiff(path, h + z0, hm.resolution, hm.origin, lambda msg: ValueError(
            f"{path}: {msg}"))
        return path
    else:
        raise fail(path, f"unknown height map format {suffix!r}: use {'/'.join(MAP_SUFFIXES)}")
    if sidecar:
        tmp = sidecar_path(path).with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2) + "\n")
        os.replace(tmp, sidecar_path(path))
    return path
