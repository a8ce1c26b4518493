"""The ``real`` family: windows of the packaged SRTM DEM ranked into levels by mean slope."""

import math
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("tifffile")

from terrain import FamilyConfig, family_level, level_spec  # noqa: E402
from terrain.dem_windows import LATTICE, ranked_windows  # noqa: E402

from offroad_env.sim.config import family_config  # noqa: E402
from offroad_env.data import data_file  # noqa: E402

CFG = family_config("husky", family="real", size=(24.0, 24.0), resolution=(0.1, 0.1))


def _lattice_mean_slope(z, res):
    """The window's mean slope re-measured on the generated map: the slope angle at the
    LATTICE x LATTICE lattice's samples (central differences of the map, one-sided at the
    border), averaged."""
    gy, gx = np.gradient(z, res, res)
    n = z.shape[0]
    idx = np.linspace(0, n - 1, LATTICE).round().astype(int)
    g = np.hypot(gx[np.ix_(idx, idx)], gy[np.ix_(idx, idx)])
    return float(np.degrees(np.arctan(g)).mean())


@pytest.mark.parametrize("level", [0, 4, 9])
def test_each_real_level_is_a_window_of_its_mean_slope_band(level):
    spec = level_spec(CFG, level)
    lo, hi = spec["min_mean_slope_deg"], spec["max_mean_slope_deg"]
    assert (lo, hi) == pytest.approx((4 * level, 4 * level + 4))  # 40 deg over 10 levels
    for world in range(2):
        z = family_level(CFG, level, np.random.default_rng((7, world)))
        assert z.shape == (241, 241) and np.isfinite(z).all()  # no hole reaches a window
        assert z[120, 120] == pytest.approx(0.0, abs=1e-9)  # centred on its middle
        # the bilinear DEM's creases make the finite differences differ a little
        assert lo - 0.5 <= _lattice_mean_slope(z, 0.1) <= hi + 0.5


def test_the_windows_are_real_ground_and_skip_the_dems_holes():
    import terrain
    import torch

    path = str(data_file("srtm1_n37w123_crop401.tif"))
    centres, slope = ranked_windows(path, (24.0, 24.0))
    assert np.all(np.diff(slope) >= 0) and len(slope) > 40000
    dem = terrain.load(path, dtype=torch.float64)
    # no window's square touches a nodata sample (the 6 x 9 block's cells)
    h = dem.heights.numpy()
    iy, ix = np.nonzero(np.isnan(h))
    hx = dem.origin[0] + ix * dem.resolution[0]
    hy = dem.origin[1] + iy * dem.resolution[1]
    near = ((np.abs(centres[:, None, 0] - hx) < 12 + dem.resolution[0])
            & (np.abs(centres[:, None, 1] - hy) < 12 + dem.resolution[1]))
    assert not near.any()
    # the same draw, the same window; a map is the DEM's own heights, shifted
    a = family_level(CFG, 2, np.random.default_rng(3))
    assert np.array_equal(a, family_level(CFG, 2, np.random.default_rng(3)))


def test_real_needs_a_dem_and_a_band_with_windows():
    with pytest.raises(ValueError, match="needs a DEM"):
        family_level(FamilyConfig(family="real", size=(24.0, 24.0)), 0, np.random.default_rng(0))
    steep = replace(CFG, real_max_slope_deg=89.0)
    with pytest.raises(ValueError, match="no 24.0 x 24.0 m window of mean slope"):
        family_level(steep, 9, np.random.default_rng(0))
    with pytest.raises(ValueError, match="real_max_slope_deg must be in"):
        replace(CFG, real_max_slope_deg=95.0)
    with pytest.raises(ValueError, match="too small"):
        family_level(replace(CFG, size=(8000.0, 8000.0), resolution=(50.0, 50.0)), 0,
                     np.random.default_rng(0))
    assert math.isclose(level_spec(CFG, 9)["max_mean_slope_deg"], 40.0)
