"""The raster formats of :mod:`terrain.io` that are not GeoTIFF: grayscale PNG (raw samples of
8 or 16 bits, decoded with the Unreal or the linear encoding) and raisim's text grid. Each
reader returns raw samples; :func:`terrain.io.load` places them."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from .placement import TerrainFileError, check_samples, fail, finite

__all__ = ["ENCODINGS", "UNREAL_ZERO", "read_png", "raw_from_image", "decode_png",
           "read_raisim_text"]

#: the PNG height encodings
ENCODINGS = ("unreal", "linear")
#: the raw value of height 0 in the Unreal encoding
UNREAL_ZERO = 32768


def read_png(path: Path, max_pixels):
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
                    raise fail(path, f"not a PNG image (format {img.format})")
                w, h = img.size
                check_samples(path, w, h, max_pixels)
                img.verify()  # catches truncation and CRC errors that .load() may paper over
            with Image.open(path) as img:
                img.load()
                raw, bits = raw_from_image(img, path)
    except TerrainFileError:
        raise
    except bomb as exc:
        raise fail(path, f"image too large ({exc})") from None
    except (OSError, SyntaxError, ValueError, UnidentifiedImageError, EOFError) as exc:
        raise fail(path, f"corrupt or truncated PNG ({exc})") from None
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
        raise fail(path, f"image mode {mode} ({_REJECTED[mode]}) is not a height map: a 16-bit "
                          "grayscale PNG (or 8-bit with an explicit encoding) is required")
    else:
        raise fail(path, f"unsupported image mode {mode}: a 16-bit grayscale PNG (or 8-bit "
                          "with an explicit encoding) is required")
    raw = np.array(img).astype(np.float64)  # native byte order, exact for 16-bit integers
    if raw.ndim != 2:
        raise fail(path, f"expected a single-channel image, got array shape {raw.shape}")
    if mode == "I" and raw.size and (raw.min() < 0 or raw.max() > 65535):
        raise fail(path, "mode I image with values outside 0..65535 (not 16-bit gray)")
    return raw, bits


def decode_png(path, raw, bits, meta, *, encoding, z_scale, scale, offset):
    if encoding is None:
        encoding = meta.get("encoding")
    if encoding is None:
        if bits == 8:
            raise fail(path, "8-bit grayscale image: pass encoding='linear' with scale and "
                              "offset (or an 'encoding' in the sidecar); the Unreal encoding "
                              "needs 16 bits")
        encoding = "unreal"
    if not isinstance(encoding, str) or encoding not in ENCODINGS:
        raise fail(path, f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    if encoding == "unreal":
        if bits != 16:
            raise fail(path, "the Unreal encoding needs a 16-bit image, this one is 8-bit")
        zs = z_scale if z_scale is not None else meta.get("zScale", 1.0)
        zs = finite(zs, "zScale", path, positive=True)
        return (raw - UNREAL_ZERO) * (zs / 128.0)
    sc = scale if scale is not None else meta.get("heightScale", meta.get("scale", 1.0))
    off = offset if offset is not None else meta.get("heightOffset", meta.get("offset", 0.0))
    sc = finite(sc, "scale", path, positive=True)
    off = finite(off, "offset", path)
    return raw * sc + off


# ---------------------------------------------------------------------------------------- text
def read_raisim_text(path: Path, max_pixels):
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(path, f"unreadable text file ({exc})") from None
    tokens = text.split()
    if len(tokens) < 4:
        raise fail(path, "raisim text format needs a header 'xSamples ySamples xSize ySize'")
    try:
        nx_f, ny_f = float(tokens[0]), float(tokens[1])
        size_x, size_y = float(tokens[2]), float(tokens[3])
    except ValueError:
        raise fail(path, f"bad raisim header {' '.join(tokens[:4])!r}") from None
    if not (math.isfinite(nx_f) and math.isfinite(ny_f)) or nx_f != int(nx_f) or ny_f != int(ny_f):
        raise fail(path, f"sample counts must be integers, got {tokens[0]} {tokens[1]}")
    nx, ny = int(nx_f), int(ny_f)
    check_samples(path, nx, ny, max_pixels)
    if not (math.isfinite(size_x) and math.isfinite(size_y)) or size_x <= 0 or size_y <= 0:
        raise fail(path, f"xSize and ySize must be finite and > 0, got {size_x}, {size_y}")
    values = tokens[4:]
    if len(values) != nx * ny:
        raise fail(path, f"header says {nx} x {ny} = {nx * ny} heights, the file has "
                          f"{len(values)}")
    try:
        h = np.array(values, dtype=np.float64).reshape(ny, nx)
    except ValueError as exc:
        raise fail(path, f"non-numeric height ({exc})") from None
    return h, (size_x / (nx - 1), size_y / (ny - 1))


# ---------------------------------------------------------------------------------------- load
