"""DEMs read as GDAL reads them: GDAL's scale and offset, south-up rasters and ESRI ASCII grids
(their units from a ``.prj`` or ``crs=``), each read with the same heights at the same world
coordinates as the north-up float32 original; the builtin readers and GDAL (rasterio, where it
is installed) agree on every file here; and a query at a DEM's own coordinates (5e6 m) equals
the same query in the map's local frame."""

import math

import numpy as np
import pytest
import torch

import terrain

tifffile = pytest.importorskip("tifffile")
F64 = torch.float64
NY, NX, RES = 12, 9, 10.0
WEST, NORTH = 500000.0, 4100000.0  # UTM 10N, the north-west corner
UTM_WKT = ('PROJCS["WGS_1984_UTM_Zone_10N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",'
           'SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],'
           'UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],'
           'PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],'
           'PARAMETER["Central_Meridian",-123.0],PARAMETER["Scale_Factor",0.9996],'
           'PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]')
GEO_WKT = ('GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,'
           '298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]')


def _north_up() -> np.ndarray:
    """Heights 1..16 m on 0.5 m steps, row 0 the northernmost; no symmetry to hide a flip."""
    rng = np.random.default_rng(3)
    return (1.0 + 0.5 * rng.integers(0, 31, size=(NY, NX))).astype(np.float32)


def _tiff(path, data, *, transform=None, gdal_metadata=None, nodata=None, raster=1, units=None,
          compression=None):
    keys = [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, raster, 3072, 0, 1, 32610]
    if units is not None:
        keys[3] += 1
        keys += [4099, 0, 1, units]
    tags = [(34735, "H", len(keys), keys, False)]
    if transform is None:
        tags += [(33550, "d", 3, (RES, RES, 0.0), False),
                 (33922, "d", 6, (0.0, 0.0, 0.0, WEST, NORTH, 0.0), False)]
    else:
        tags += [(34264, "d", 16, transform, False)]
    if gdal_metadata is not None:
        tags += [(42112, "s", 0, gdal_metadata, False)]
    if nodata is not None:
        tags += [(42113, "s", 0, str(nodata), False)]
    tifffile.imwrite(path, data, extratags=tags, compression=compression)
    return path


def _asc(path, rows, *, xll, yll, cell, prj=None, corner=True, nodata=None):
    head = [f"ncols {rows.shape[1]}", f"nrows {rows.shape[0]}",
            f"xll{'corner' if corner else 'center'} {xll!r}",
            f"yll{'corner' if corner else 'center'} {yll!r}", f"cellsize {cell!r}"]
    if nodata is not None:
        head.append(f"NODATA_value {nodata}")
    path.write_text("\n".join(head) + "\n" + "\n".join(
        " ".join(f"{v:g}" for v in row) for row in rows) + "\n")
    if prj is not None:
        path.with_suffix(".prj").write_text(prj)
    return path


@pytest.fixture
def files(tmp_path):
    h = _north_up()
    south = NORTH - NY * RES
    scaled = np.rint((h.astype(np.float64) + 5.0) / 0.5).astype(np.uint16)
    meta = ('<GDALMetadata>\n  <Item name="OFFSET" sample="0" role="offset">-5</Item>\n'
            '  <Item name="SCALE" sample="0" role="scale">0.5</Item>\n</GDALMetadata>')
    up = [RES, 0, 0, WEST, 0, RES, 0, south, 0, 0, 0, 0, 0, 0, 0, 1]  # rows from the south
    return {
        "original": _tiff(tmp_path / "original.tif", h),
        "scale_offset": _tiff(tmp_path / "scaled.tif", scaled, gdal_metadata=meta),
        "south_up": _tiff(tmp_path / "south_up.tif", np.ascontiguousarray(h[::-1]),
                          transform=up),
        "ascii_prj": _asc(tmp_path / "grid.asc", h, xll=WEST, yll=south, cell=RES, prj=UTM_WKT),
        "ascii_center": _asc(tmp_path / "centre.asc", h, xll=WEST + RES / 2,
                             yll=south + RES / 2, cell=RES, corner=False, prj=UTM_WKT),
    }


def _same(a, b):
    assert a.resolution == pytest.approx(b.resolution, rel=1e-12)
    assert a.origin == pytest.approx(b.origin, rel=1e-12, abs=1e-9)
    assert np.array_equal(a.heights.numpy(), b.heights.numpy(), equal_nan=True)


@pytest.mark.parametrize("kind", ["scale_offset", "south_up", "ascii_prj", "ascii_center"])
def test_each_form_reads_the_originals_heights_at_the_same_world_coordinates(files, kind):
    ref = terrain.load(files["original"], dtype=F64)
    hm = terrain.load(files[kind], dtype=F64)
    _same(hm, ref)
    # the file's north-west sample, at the corner plus half a cell, is the original's row 0
    x, y = WEST + RES / 2, NORTH - RES / 2
    assert float(hm.height(x, y)) == float(_north_up()[0, 0])
    assert float(hm.height(WEST + 3.5 * RES, NORTH - 7.5 * RES)) == float(_north_up()[7, 3])
    assert 1.0 <= float(hm.heights.min()) and float(hm.heights.max()) <= 16.0


def test_a_scale_offset_file_without_its_metadata_would_read_wrong(files, tmp_path):
    """The harm the issue saw: the raw uint16 samples read as heights (12-42 m for 1-16 m)."""
    raw = tifffile.imread(files["scale_offset"])
    bare = terrain.load(_tiff(tmp_path / "bare.tif", raw), dtype=F64)
    assert float(bare.heights.min()) >= 12.0
    assert float(terrain.load(files["scale_offset"], dtype=F64).heights.max()) <= 16.0


def test_gdal_metadata_that_is_not_usable_is_refused(tmp_path):
    h = _north_up()
    for meta, match in (("<GDALMetadata><Item name='SCALE' sample='0' role='scale'>x</Item>"
                         "</GDALMetadata>", "SCALE 'x' is not a number"),
                        ("<GDALMetadata><Item name='SCALE' sample='0' role='scale'>0</Item>"
                         "</GDALMetadata>", "not a usable scale"),
                        ("<GDALMetadata><Item sample='0' role='unittype'>furlong</Item>"
                         "</GDALMetadata>", "'furlong' is not metres or feet"),
                        ("<GDAL", "GDAL_METADATA is not XML")):
        with pytest.raises(terrain.TerrainFileError, match=match):
            terrain.load(_tiff(tmp_path / "m.tif", h, gdal_metadata=meta))
    feet = "<GDALMetadata><Item sample='0' role='unittype'>ft</Item></GDALMetadata>"
    hm = terrain.load(_tiff(tmp_path / "ft.tif", h, gdal_metadata=feet), dtype=F64)
    assert np.allclose(hm.heights.numpy()[::-1], h * 0.3048)


def test_an_ascii_grid_in_degrees_needs_its_units_said(tmp_path):
    h = _north_up()
    cell = 1.0 / 3600.0  # one arc-second
    path = _asc(tmp_path / "srtm.asc", h, xll=-122.5, yll=37.5, cell=cell)
    with pytest.raises(terrain.TerrainFileError) as info:
        terrain.load(path)
    assert "srtm.prj" in str(info.value) and "crs='geographic'" in str(info.value)
    hm = terrain.load(path, crs="geographic", dtype=F64)
    east, north = terrain.geotiff.metres_per_degree(37.5 + cell / 2 + 0.5 * (NY - 1) * cell)
    assert hm.resolution == pytest.approx((cell * east, cell * north), rel=1e-12)
    assert hm.center == pytest.approx((0.0, 0.0), abs=1e-9)  # a geographic map is centred
    path.with_suffix(".prj").write_text(GEO_WKT)
    _same(terrain.load(path, dtype=F64), hm)
    with pytest.raises(terrain.TerrainFileError, match="contradicts srtm.prj"):
        terrain.load(path, crs="projected")
    with pytest.raises(terrain.TerrainFileError, match="crs='utm': give one of"):
        terrain.load(tmp_path / "srtm.asc", crs="utm")
    with pytest.raises(terrain.TerrainFileError, match="crs=.* is for ESRI ASCII grids"):
        terrain.load(_tiff(tmp_path / "t.tif", h), crs="projected")


def test_an_ascii_grid_in_feet_and_one_with_holes(tmp_path):
    h = _north_up().astype(np.float64)
    ft = UTM_WKT.replace('UNIT["Meter",1.0]]', 'UNIT["Foot_US",0.3048006096012192]]')
    hm = terrain.load(_asc(tmp_path / "ft.asc", h, xll=1000.0, yll=2000.0, cell=30.0, prj=ft),
                      dtype=F64)
    f = 0.3048006096012192
    assert hm.resolution == pytest.approx((30 * f, 30 * f), rel=1e-12)
    assert hm.origin == pytest.approx(((1000 + 15) * f, (2000 + 15) * f), rel=1e-12)
    h[2, 3] = -9999
    holes = terrain.load(_asc(tmp_path / "holes.asc", h, xll=0.0, yll=0.0, cell=1.0,
                              nodata=-9999), dtype=F64)
    assert np.isnan(holes.heights.numpy()[NY - 1 - 2, 3]) and int(holes.heights.isnan().sum()) == 1


def test_an_ascii_grid_round_trips_through_save(tmp_path):
    ref = terrain.load(_tiff(tmp_path / "o.tif", _north_up()), dtype=F64)
    terrain.save(ref, tmp_path / "copy.asc")
    _same(terrain.load(tmp_path / "copy.asc", dtype=F64), ref)


@pytest.mark.parametrize("bad, match", [
    ("ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n4 5\n", "5 heights"),
    ("nrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2\n3 4\n", "no ncols"),
    ("ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\n1 2\n3 4\n", "no cellsize"),
    ("ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize -1\n1 2\n3 4\n", "must be finite"),
    ("ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 x\n3 4\n", "not a number"),
])
def test_broken_ascii_grids_are_refused_naming_what_is_wrong(tmp_path, bad, match):
    (tmp_path / "bad.asc").write_text(bad)
    with pytest.raises(terrain.TerrainFileError, match=match):
        terrain.load(tmp_path / "bad.asc")


def test_a_query_at_utm_coordinates_equals_the_query_in_the_local_frame():
    """float32 maps keep float32 samples, but the cell index and the weights of a query given as
    numbers (or float64) are computed in float64: at 5e6 m float32 steps are 0.5 m."""
    rng = np.random.default_rng(0)
    x0, y0 = 512345.0, 4987654.0
    h = rng.normal(size=(60, 70)).astype(np.float32)
    world = terrain.HeightMap(h, resolution=(1.0, 1.0), origin=(x0, y0))
    local = world.translated(-x0, -y0)
    qx, qy = rng.uniform(0, 69, 500), rng.uniform(0, 59, 500)
    at_world = world.height(qx + x0, qy + y0)
    at_local = local.height(qx, qy)
    assert at_world.dtype == torch.float32
    # equal up to float32's rounding of the weights ((qx + x0) - x0 is qx within 1e-10 m)
    assert float((at_world - at_local).abs().max()) <= 1e-6
    g64 = terrain.HeightMap(h, resolution=(1.0, 1.0), origin=(x0, y0), dtype=F64)
    assert torch.allclose(at_world.double(), g64.height(qx + x0, qy + y0), atol=2e-6)
    for a, b in zip(world.slope(qx + x0, qy + y0), local.slope(qx, qy)):
        assert float((a - b).abs().max()) <= 1e-5
    # the harm it removes: the same query in float32 world coordinates is off by decimetres
    f32 = world.height(torch.as_tensor(qx + x0, dtype=torch.float32),
                       torch.as_tensor(qy + y0, dtype=torch.float32))
    assert float((f32 - at_local).abs().max()) > 0.05
    assert torch.equal(torch.stack(world.grid_indices(qx + x0, qy + y0)),
                       torch.stack(local.grid_indices(qx, qy)))
    # a float32 tensor stays on the float32 path (the simulator's, in the map's own frame)
    t = torch.as_tensor(qx, dtype=torch.float32)
    assert local.height(t, torch.as_tensor(qy, dtype=torch.float32)).dtype == torch.float32


@pytest.mark.parametrize("kind", ["original", "scale_offset", "south_up", "ascii_prj",
                                  "ascii_center"])
def test_gdal_reads_every_file_here_as_the_builtin_reader_does(files, kind):
    pytest.importorskip("rasterio")
    _same(terrain.load(files[kind], dtype=F64, reader="rasterio"),
          terrain.load(files[kind], dtype=F64))


@pytest.mark.parametrize("kw", [dict(nodata=-32768), dict(raster=2, units=9002, nodata=-32768),
                                dict(compression="lzw", nodata=-32768), dict(units=9003)])
def test_gdal_and_the_builtin_reader_agree_on_int16_dems_of_every_kind(tmp_path, kw):
    """PixelIsArea and PixelIsPoint, feet and US survey feet, compressed, with nodata holes."""
    pytest.importorskip("rasterio")
    raw = (np.arange(NY * NX).reshape(NY, NX) * 3).astype(np.int16)
    raw[2, 3] = -32768
    path = _tiff(tmp_path / "dem.tif", raw, **kw)
    _same(terrain.load(path, dtype=F64, reader="rasterio"), terrain.load(path, dtype=F64))


def test_gdal_and_the_builtin_reader_agree_on_the_shipped_srtm_window():
    pytest.importorskip("rasterio")
    from offroad_env import data_file

    dem = data_file("srtm1_n37w123_crop401.tif")
    a, b = terrain.load(dem, dtype=F64), terrain.load(dem, dtype=F64, reader="rasterio")
    assert a.resolution == pytest.approx(b.resolution, rel=1e-12)
    assert a.center == pytest.approx(b.center, abs=1e-6)
    assert np.array_equal(a.heights.numpy(), b.heights.numpy(), equal_nan=True)
    assert math.isclose(float(a.heights.nanmean()), float(b.heights.nanmean()))


def test_reader_rasterio_without_rasterio_says_how_to_install_it(files, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rasterio", None)  # an import of it fails
    with pytest.raises(terrain.TerrainFileError, match=r"needs rasterio: pip install "
                                                       r"'offroad-env\[geo\]'"):
        terrain.load(files["original"], reader="rasterio")
    with pytest.raises(terrain.TerrainFileError, match=r"reader='gdal': give one of"):
        terrain.load(files["original"], reader="gdal")
