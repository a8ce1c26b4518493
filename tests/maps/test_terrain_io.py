"""File formats: decoding closed forms, round trips through every format, every bad input."""

import json
import struct
from pathlib import Path
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

import terrain
from terrain import HeightMap, TerrainFileError
from terrain.formats import raw_from_image

from offroad_env import data_file

F64 = torch.float64


def write_png(path, data: bytes, width, height, bit_depth, colour_type):
    """A minimal PNG writer, for the images Pillow will not write (16-bit RGB)."""
    def chunk(tag, payload):
        return (struct.pack(">I", len(payload)) + tag + payload
                + struct.pack(">I", zlib.crc32(tag + payload) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                     + chunk(b"IDAT", zlib.compress(data)) + chunk(b"IEND", b""))


def ramp_map(nx=7, ny=4, res=(0.5, 0.25), origin=(-1.0, 2.0), z_offset=0.0):
    """Asymmetric ramp on a non-square grid: z = 0.3 x + 0.7 y + 0.01 x y (from sample [0,0])."""
    ix, iy = np.meshgrid(np.arange(nx), np.arange(ny))
    h = 0.3 * ix + 0.7 * iy + 0.01 * ix * iy
    return HeightMap(h, res, origin=origin, z_offset=z_offset, dtype=F64)


def save_u16(path, raw):
    Image.fromarray(np.asarray(raw, dtype=np.uint16)).save(path)


def test_unreal_decoding_closed_form(tmp_path):
    p = tmp_path / "u.png"
    save_u16(p, [[0, 32768, 65535], [32768 + 128, 32768 - 256, 1]])
    hm = terrain.load(p, z_scale=2.0, resolution=1.0, dtype=F64)
    expected = (np.array([[0, 32768, 65535], [32768 + 128, 32768 - 256, 1]]) - 32768) * 2.0 / 128
    np.testing.assert_array_equal(hm.heights.numpy(), expected)
    assert hm.heights[0, 1] == 0.0  # raw 32768 is zero
    hm2 = terrain.load(p, z_scale=2.0, z_offset=5.0, dtype=F64)
    assert hm2.height(0.0, -0.5) == 5.0  # the z offset rides on top


@pytest.mark.parametrize("mode_dtype", ["<u2", ">u2"])
def test_i16_every_byte_order_gives_native_arrays(mode_dtype):
    a = np.array([[0, 32768, 65535], [1, 2, 3]], dtype=mode_dtype)
    img = Image.fromarray(a)
    assert img.mode in ("I;16", "I;16B", "I;16L")
    raw, bits = raw_from_image(img)
    assert bits == 16 and raw.dtype == np.float64 and raw.dtype.isnative
    np.testing.assert_array_equal(raw, a.astype(np.float64))
    torch.from_numpy(raw)  # would fail on a big-endian array


def test_mode_I_accepted_in_range_and_rejected_outside():
    raw, bits = raw_from_image(Image.fromarray(np.array([[0, 65535]], dtype=np.int32)))
    assert bits == 16 and raw.tolist() == [[0.0, 65535.0]]
    with pytest.raises(TerrainFileError, match="0..65535"):
        raw_from_image(Image.fromarray(np.array([[0, 70000]], dtype=np.int32)))


def test_unreal_round_trip_within_quantisation(tmp_path):
    hm = ramp_map(z_offset=-3.0)
    p = terrain.save(hm, tmp_path / "ramp.png")
    meta = json.loads((tmp_path / "ramp.json").read_text())
    assert meta["encoding"] == "unreal" and meta["origin"] == [-1.0, 2.0, -3.0]
    back = terrain.load(p, dtype=F64)
    step = meta["zScale"] / 128
    assert np.max(np.abs(back.heights.numpy() - hm.heights.numpy())) <= step / 2 + 1e-12
    assert back.resolution == hm.resolution and back.origin == hm.origin
    assert back.z_offset.item() == -3.0


@pytest.mark.parametrize("bits", [8, 16])
def test_linear_round_trip(tmp_path, bits):
    hm = ramp_map()
    p = terrain.save(hm, tmp_path / "lin.png", encoding="linear", bits=bits)
    with Image.open(p) as img:
        assert img.mode == ("L" if bits == 8 else "I;16")
    meta = json.loads((tmp_path / "lin.json").read_text())
    back = terrain.load(p, dtype=F64)
    assert np.max(np.abs(back.heights.numpy() - hm.heights.numpy())) <= meta["heightScale"] / 2 + 1e-12


def test_linear_formula_raisim(tmp_path):
    p = tmp_path / "g.png"
    Image.fromarray(np.array([[0, 10], [200, 255]], dtype=np.uint8)).save(p)
    hm = terrain.load(p, encoding="linear", scale=0.1, offset=-2.0, dtype=F64)
    np.testing.assert_allclose(hm.heights.numpy(), np.array([[0, 10], [200, 255]]) * 0.1 - 2.0)


def test_eight_bit_needs_explicit_encoding(tmp_path):
    p = tmp_path / "g.png"
    Image.fromarray(np.zeros((3, 3), dtype=np.uint8)).save(p)
    with pytest.raises(TerrainFileError, match="8-bit"):
        terrain.load(p)
    with pytest.raises(TerrainFileError, match="16-bit"):
        terrain.load(p, encoding="unreal")


def test_flip_y_row_order_with_asymmetric_ramp(tmp_path):
    hm = ramp_map()
    p = terrain.save(hm, tmp_path / "north_up.png", flip_y=True)
    with Image.open(p) as img:
        rows = np.array(img).astype(float)
    assert rows[0, 0] > rows[-1, 0]  # row 0 of a north-up image is the maximum y
    back = terrain.load(p, dtype=F64)  # the sidecar says flipY
    np.testing.assert_allclose(back.heights.numpy(), hm.heights.numpy(), atol=1e-3)
    # default: row 0 = minimum y
    p2 = terrain.save(hm, tmp_path / "south_up.png")
    with Image.open(p2) as img:
        rows2 = np.array(img).astype(float)
    assert rows2[0, 0] < rows2[-1, 0]
    # flipping by keyword overrides the sidecar
    flipped = terrain.load(p2, flip_y=True, dtype=F64)
    np.testing.assert_allclose(flipped.heights.numpy(), back.heights.numpy()[::-1], atol=1e-3)


def test_seed_example_sidecar(tmp_path):
    # the four-wheel seed's terrainMeta: 201 x 201, 0.20 m, origin [-20, -20, 0], 40 m.
    cfg = terrain.PeaksConfig()
    hm = terrain.make_heightmap(cfg, 0, dtype=F64)
    raw = np.rint(hm.heights.numpy() * (128 / 0.05) + 32768)
    save_u16(tmp_path / "terrain_heightmap.png", raw)
    (tmp_path / "terrain_heightmap.json").write_text(json.dumps({
        "heightmapFile": "terrain_heightmap.png", "resolution": 0.2, "terrainSize": 40,
        "origin": [-20.0, -20.0, 0.0], "zScale": 0.05}))
    back = terrain.load(tmp_path / "terrain_heightmap.png", dtype=F64)
    assert back.shape == (201, 201) and back.bounds == (-20.0, 20.0, -20.0, 20.0)
    assert abs(back.heights.min().item() + 2.556) < 1e-3
    assert abs(back.heights.max().item() - 3.178) < 1e-3


def test_raisim_text_round_trip_with_holes(tmp_path):
    h = np.arange(12.0).reshape(3, 4) * 0.1
    h[1, 2] = np.nan
    hm = HeightMap(h, (0.5, 0.25), center=(3.0, -1.0), dtype=F64)
    p = terrain.save(hm, tmp_path / "m.txt")
    header = p.read_text().split("\n")[0].split()
    assert header[:2] == ["4", "3"] and float(header[2]) == 1.5 and float(header[3]) == 0.5
    back = terrain.load(p, dtype=F64)
    np.testing.assert_array_equal(back.heights.numpy(), h)
    assert back.center == (3.0, -1.0)


def test_raisim_text_written_by_hand_is_indexed_y_major(tmp_path):
    p = tmp_path / "r.txt"
    p.write_text("3 2 2.0 1.0\n0 1 2\n10 11 12\n")  # sample (x, y) at y * xSamples + x
    hm = terrain.load(p, dtype=F64)
    assert hm.resolution == (1.0, 1.0) and hm.center == (0.0, 0.0)
    assert hm.height(1.0, -0.5) == 2.0 and hm.height(-1.0, 0.5) == 10.0


def test_npy_round_trip_with_sidecar(tmp_path):
    hm = ramp_map(z_offset=1.25)
    p = terrain.save(hm, tmp_path / "m.npy")
    back = terrain.load(p, dtype=F64)
    np.testing.assert_array_equal(back.heights.numpy(), hm.heights.numpy())
    assert back.origin == hm.origin and back.resolution == hm.resolution
    assert back.z_offset.item() == 1.25


def test_png_cannot_store_holes(tmp_path):
    hm = HeightMap(np.array([[0.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="holes"):
        terrain.save(hm, tmp_path / "h.png")


def test_extreme_values_0_32768_65535(tmp_path):
    p = tmp_path / "x.png"
    save_u16(p, [[0, 65535], [32768, 32768]])
    hm = terrain.load(p, z_scale=1.0, dtype=F64)
    assert hm.heights[0, 0] == -256.0 and hm.heights[0, 1] == 32767 / 128 and hm.heights[1, 0] == 0


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("mode, arr", [
    ("RGB", np.zeros((4, 4, 3), np.uint8)),
    ("RGBA", np.zeros((4, 4, 4), np.uint8)),
])
def test_colour_images_rejected(tmp_path, mode, arr):
    p = tmp_path / "c.png"
    Image.fromarray(arr).save(p)  # uint8 with 3 or 4 channels: RGB or RGBA
    with pytest.raises(TerrainFileError, match=mode) as exc:
        terrain.load(p)
    assert str(p) in str(exc.value)


def test_palette_and_1bit_rejected(tmp_path):
    p = tmp_path / "p.png"
    Image.fromarray(np.zeros((4, 4), np.uint8)).convert("P").save(p)
    with pytest.raises(TerrainFileError, match="palette"):
        terrain.load(p)
    p1 = tmp_path / "b.png"
    Image.new("1", (4, 4)).save(p1)
    with pytest.raises(TerrainFileError, match="1-bit"):
        terrain.load(p1)


def test_16bit_rgb_rejected(tmp_path):
    p = tmp_path / "rgb16.png"
    w = h = 4
    row = b"\x00" + b"\x80\x00" * 3 * w
    write_png(p, row * h, w, h, 16, 2)
    with pytest.raises(TerrainFileError, match="RGB"):
        terrain.load(p)


def test_truncated_and_garbage_files(tmp_path):
    good = tmp_path / "good.png"
    save_u16(good, np.arange(64 * 64).reshape(64, 64) % 65536)
    data = good.read_bytes()
    trunc = tmp_path / "trunc.png"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(TerrainFileError, match="trunc.png"):
        terrain.load(trunc)
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(b"this is not an image at all" * 10)
    with pytest.raises(TerrainFileError, match="garbage.png"):
        terrain.load(garbage)
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    with pytest.raises(TerrainFileError, match="empty.npy"):
        terrain.load(empty)


def test_truncated_even_when_pillow_is_told_to_accept_truncation(tmp_path, monkeypatch):
    from PIL import ImageFile
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    good = tmp_path / "good.png"
    save_u16(good, np.arange(64 * 64).reshape(64, 64))
    trunc = tmp_path / "t.png"
    trunc.write_bytes(good.read_bytes()[:-40])
    with pytest.raises(TerrainFileError):
        terrain.load(trunc)


def test_oversized_image(tmp_path):
    p = tmp_path / "big.png"
    save_u16(p, np.zeros((100, 120)))
    with pytest.raises(TerrainFileError, match="max_pixels"):
        terrain.load(p, max_pixels=10_000)
    assert terrain.load(p, max_pixels=None).shape == (100, 120)


def test_too_few_samples(tmp_path):
    p = tmp_path / "line.png"
    save_u16(p, np.zeros((1, 5)))
    with pytest.raises(TerrainFileError, match="at least 2"):
        terrain.load(p)
    q = tmp_path / "one.npy"
    np.save(q, np.zeros((1, 1)))
    with pytest.raises(TerrainFileError, match="at least 2"):
        terrain.load(q)


@pytest.mark.parametrize("kw, match", [
    (dict(resolution=0.0), "resolution"),
    (dict(resolution=-0.5), "resolution"),
    (dict(resolution=float("nan")), "resolution"),
    (dict(resolution=[1.0, float("inf")]), "resolution"),
    (dict(z_scale=0.0), "zScale"),
    (dict(z_scale=-1.0), "zScale"),
    (dict(encoding="gray"), "encoding"),
])
def test_bad_parameters(tmp_path, kw, match):
    p = tmp_path / "m.png"
    save_u16(p, np.full((3, 3), 32768))
    with pytest.raises(TerrainFileError, match=match):
        terrain.load(p, **kw)


def test_bad_sidecar_values(tmp_path):
    p = tmp_path / "m.png"
    save_u16(p, np.full((3, 4), 32768))
    side = tmp_path / "m.json"
    side.write_text(json.dumps({"resolution": [0.5, 0.5], "terrainSize": [2.0, 1.0],
                                "zScale": 1.0}))
    with pytest.raises(TerrainFileError, match="terrainSize"):
        terrain.load(p)  # 4 x 3 samples at 0.5 m is 1.5 x 1.0 m
    side.write_text(json.dumps({"zScale": -2}))
    with pytest.raises(TerrainFileError, match="zScale"):
        terrain.load(p)
    side.write_text("{not json")
    with pytest.raises(TerrainFileError, match="m.json"):
        terrain.load(p)


def test_raisim_text_count_mismatch_and_bad_header(tmp_path):
    p = tmp_path / "r.txt"
    p.write_text("3 2 2.0 1.0\n0 1 2 3 4\n")
    with pytest.raises(TerrainFileError, match="6 heights"):
        terrain.load(p)
    p.write_text("3 2 0.0 1.0\n0 1 2 3 4 5\n")
    with pytest.raises(TerrainFileError, match="xSize"):
        terrain.load(p)
    p.write_text("3.5 2 1.0 1.0\n0 1 2 3 4 5\n")
    with pytest.raises(TerrainFileError, match="integers"):
        terrain.load(p)
    p.write_text("3 2 1.0 1.0\n0 1 2 3 x 5\n")
    with pytest.raises(TerrainFileError, match="non-numeric"):
        terrain.load(p)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(TerrainFileError, match="no such file"):
        terrain.load(tmp_path / "nope.png")
    p = tmp_path / "m.xyz"
    p.write_bytes(b"xx")
    with pytest.raises(TerrainFileError, match="format"):
        terrain.load(p)


def test_npy_bad_shapes(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, np.zeros((2, 3, 4)))
    with pytest.raises(TerrainFileError, match="2-D"):
        terrain.load(p)
    np.save(p, np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(TerrainFileError, match="numeric"):
        terrain.load(p)


def test_save_refuses_stacks_and_values_that_do_not_fit(tmp_path):
    st = HeightMap.stack([ramp_map(), ramp_map()])
    with pytest.raises(ValueError, match="stack"):
        terrain.save(st, tmp_path / "s.png")
    with pytest.raises(ValueError, match="fit"):
        terrain.save(ramp_map(), tmp_path / "s.png", z_scale=1e-4)


@pytest.mark.parametrize("key, value, match", [
    ("flipY", "false", "flipY"), ("flipY", 0, "flipY"), ("zScale", True, "zScale"),
    ("zScale", "2.0", "zScale"), ("resolution", [0.5, "0.5"], "resolution"),
    ("resolution", True, "resolution"), ("origin", [0.0, False], "origin"),
    ("encoding", ["unreal"], "encoding")])
def test_sidecar_fields_of_the_wrong_type_are_named_errors(tmp_path, key, value, match):
    hm = HeightMap(np.outer(np.arange(5.0), np.ones(4)), 1.0)
    path = tmp_path / "m.png"
    terrain.save(hm, path)
    side = terrain.sidecar_path(path)
    meta = json.loads(side.read_text())
    meta[key] = value
    side.write_text(json.dumps(meta))
    with pytest.raises(TerrainFileError, match=match) as exc:
        terrain.load(path)
    assert "m." in str(exc.value)  # names the file


def test_a_deeply_nested_sidecar_is_a_clear_error(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, np.zeros((3, 3)))
    terrain.sidecar_path(path).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TerrainFileError, match="sidecar"):
        terrain.load(path)


# ---------------------------------------------------------------------------------- GeoTIFF
# a copy of ../shared/data/dem/, shipped (provenance and licence: offroad_env/data/README_dem.md)
DEM = data_file("srtm1_n37w123_crop401.tif")


def _utm_tiff(path, heights, *, nodata=-32768, raster=1, units=None, transform=None,
              compression=None):
    """A projected (UTM 10N) GeoTIFF written with tifffile's own writer, north-up."""
    tifffile = pytest.importorskip("tifffile")
    keys = [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, raster, 3072, 0, 1, 32610]
    if units is not None:
        keys[3] += 1
        keys += [4099, 0, 1, units]
    tags = [(34735, "H", len(keys), keys, False), (42113, "s", 0, str(nodata), False)]
    if transform is None:
        tags += [(33550, "d", 3, (10.0, 10.0, 0.0), False),
                 (33922, "d", 6, (0.0, 0.0, 0.0, 500000.0, 4100000.0, 0.0), False)]
    else:
        tags += [(34264, "d", 16, transform, False)]
    tifffile.imwrite(path, heights, extratags=tags, compression=compression)


def test_geotiff_projected_int16_north_up_nodata_at_utm_coordinates(tmp_path):
    raw = (np.arange(12 * 9).reshape(12, 9) * 3).astype(np.int16)  # row 0 = north
    raw[2, 3] = -32768
    _utm_tiff(tmp_path / "utm.tif", raw)
    hm = terrain.load(tmp_path / "utm.tif", dtype=F64)
    assert hm.resolution == (10.0, 10.0)
    # PixelIsArea: the tiepoint is the north-west corner, samples at pixel centres
    assert hm.origin == (500005.0, 4100000.0 - 11 * 10.0 - 5.0)
    h = hm.heights.numpy()
    assert np.array_equal(h[::-1][~np.isnan(h[::-1])], raw[raw != -32768].astype(float))
    assert np.isnan(h[12 - 1 - 2, 3]) and int(np.isnan(h).sum()) == 1  # north-up flipped
    # the sample at the north-west corner is row ny-1, column 0, at the corner + half a pixel
    assert float(hm.height(500005.0, 4099995.0)) == raw[0, 0]
    # PixelIsPoint: the tiepoint is the sample itself; feet become metres
    _utm_tiff(tmp_path / "pt.tif", raw, raster=2, units=9002)
    pt = terrain.load(tmp_path / "pt.tif", dtype=F64)
    assert pt.origin == (500000.0, 4100000.0 - 11 * 10.0)
    assert np.allclose(np.nan_to_num(pt.heights.numpy()), np.nan_to_num(h) * 0.3048)


@pytest.mark.parametrize("compression", ["lzw", "adobe_deflate"])
def test_compressed_geotiffs_open_with_the_geo_extra(tmp_path, compression):
    """LZW and Deflate DEMs (the geo extra brings imagecodecs) read the file's own samples."""
    pytest.importorskip("imagecodecs")
    tifffile = pytest.importorskip("tifffile")
    raw = (np.arange(12 * 9).reshape(12, 9) * 7 - 40).astype(np.int16)
    raw[5, 1] = -32768
    _utm_tiff(tmp_path / "c.tif", raw, compression=compression)
    with tifffile.TiffFile(tmp_path / "c.tif") as tif:
        assert tif.pages[0].compression.name == compression.upper()  # really compressed
    h = terrain.load(tmp_path / "c.tif", dtype=F64).heights.numpy()[::-1]  # north-up flipped
    assert np.array_equal(np.isnan(h), raw == -32768)
    assert np.array_equal(h[raw != -32768], raw[raw != -32768].astype(float))


@pytest.mark.parametrize("compression", ["lzw", "adobe_deflate"])
def test_the_shipped_srtm_window_recompressed_opens_the_same(tmp_path, compression):
    """The real DEM, rewritten compressed with its own georeferencing tags: the same bounds,
    spacing and samples (holes included) as the uncompressed file."""
    pytest.importorskip("imagecodecs")
    tifffile = pytest.importorskip("tifffile")
    with tifffile.TiffFile(DEM) as tif:
        page = tif.pages[0]
        data = page.asarray()
        extra = [(t.code, t.dtype, t.count, t.value, False) for t in page.tags.values()
                 if t.code in (33550, 33922, 34264, 34735, 34736, 34737, 42112, 42113)]
    tifffile.imwrite(tmp_path / "c.tif", data, compression=compression, extratags=extra)
    a, b = terrain.load(DEM, dtype=F64), terrain.load(tmp_path / "c.tif", dtype=F64)
    assert (a.bounds, a.resolution) == (b.bounds, b.resolution)
    assert np.array_equal(a.heights.numpy(), b.heights.numpy(), equal_nan=True)


def test_a_compressed_geotiff_without_imagecodecs_says_how_to_install_it(tmp_path,
                                                                           monkeypatch):
    pytest.importorskip("imagecodecs")
    _utm_tiff(tmp_path / "c.tif", np.ones((4, 5), np.int16), compression="lzw")
    import tifffile
    # tifffile's decoders come from imagecodecs: without it, they raise as they do
    def missing(*args, **kwargs):
        raise ValueError("<COMPRESSION.LZW: 5> requires the 'imagecodecs' package")
    monkeypatch.setattr(tifffile.TiffPage, "asarray", missing)
    with pytest.raises(terrain.TerrainFileError, match=r"LZW.*pip install 'offroad-env\[geo\]'"):
        terrain.load(tmp_path / "c.tif")


def test_geotiff_rotated_or_huge_rasters_are_clear_errors(tmp_path):
    raw = np.zeros((4, 5), np.float32)
    rot = (10.0, 1.0, 0.0, 500000.0, 1.0, -10.0, 0.0, 4100000.0, 0, 0, 0, 0, 0, 0, 0, 1.0)
    _utm_tiff(tmp_path / "rot.tif", raw, transform=rot)
    with pytest.raises(terrain.TerrainFileError, match="rotated"):
        terrain.load(tmp_path / "rot.tif")
    _utm_tiff(tmp_path / "big.tif", raw)
    with pytest.raises(terrain.TerrainFileError, match="limit"):
        terrain.load(tmp_path / "big.tif", max_pixels=10)
    (tmp_path / "bad.tif").write_bytes(b"not a tiff at all")
    with pytest.raises(terrain.TerrainFileError, match="unreadable"):
        terrain.load(tmp_path / "bad.tif")


def test_the_real_srtm_window_in_local_metres_with_its_holes():
    pytest.importorskip("tifffile")
    hm = terrain.load(DEM, dtype=F64)
    rx, ry = hm.resolution  # 1 arc-second at 37.26 deg N
    assert abs(rx - 24.65) < 0.05 and abs(ry - 30.83) < 0.05
    assert hm.shape == (401, 401) and hm.center == (0.0, 0.0)
    h = hm.heights.numpy()
    holes = np.argwhere(np.isnan(h))
    assert len(holes) == 54  # the README's 6 x 9 nodata block
    (r0, c0), (r1, c1) = holes.min(0), holes.max(0)
    assert {(r1 - r0 + 1), (c1 - c0 + 1)} == {6, 9}
    assert 0 <= np.nanmin(h) and np.nanmax(h) < 1100
    import tifffile
    raw = tifffile.imread(DEM).astype(float)
    ok = raw != -32767
    assert np.array_equal(h[::-1][ok], raw[ok])  # north-up rows, flipped
    # round trip through our own writer
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        terrain.save(hm, Path(d) / "back.tif")
        back = terrain.load(Path(d) / "back.tif", dtype=F64)
    assert back.resolution == pytest.approx(hm.resolution) and back.bounds == pytest.approx(
        hm.bounds)
    assert np.array_equal(np.isnan(back.heights.numpy()), np.isnan(h))
    assert np.allclose(np.nan_to_num(back.heights.numpy()), np.nan_to_num(h))


def test_a_utm_geotiff_drives_end_to_end(tmp_path):
    from offroad_env import OffroadVectorEnv
    g = np.random.default_rng(0)
    raw = (1500 + np.cumsum(g.normal(0, 0.3, (60, 60)), 0)).astype(np.float32)
    _utm_tiff(tmp_path / "dem.tif", raw, nodata=-9999)
    hm = terrain.load(tmp_path / "dem.tif")
    env = OffroadVectorEnv(num_envs=4, heightmap=hm, max_episode_steps=50)
    env.reset(seed=0)
    for _ in range(20):
        env.step(torch.tensor([[1.0, 0.2]] * 4))
    v = env.state_view()
    assert bool((v.x > 500000).all()) and bool((v.y > 4099400).all())
    assert bool(torch.isfinite(v.base_position_w).all()) and float(v.base_position_w[0, 2]) > 1000


def test_a_corrupt_geotiff_is_one_clear_error_and_nothing_else_on_stderr(tmp_path, capfd):
    """Issue 27, item 12: tifffile logs its own complaint about a corrupt file; only the clear
    error reaches the user."""
    pytest.importorskip("tifffile")
    bad = tmp_path / "bad.tif"
    bad.write_bytes(b"II*\x00" + b"garbage-garbage-garbage")
    with pytest.raises(terrain.TerrainFileError, match="bad.tif"):
        terrain.load(bad)
    out, err = capfd.readouterr()
    assert "tifffile" not in err and "offset" not in err, err
