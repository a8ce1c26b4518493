"""Generators: shapes, closed forms, the seed's example terrain, determinism, rng discipline."""

import dataclasses
import math

import numpy as np
import pytest

import terrain
from terrain import generators as g


ALL = [
    g.FlatConfig(size=(8.0, 6.0), resolution=0.5, height=1.0),
    g.PlaneConfig(size=(8.0, 6.0), resolution=0.5),
    g.PeaksConfig(size=(8.0, 6.0), resolution=0.5),
    g.PerlinConfig(size=(8.0, 6.0), resolution=0.5),
    g.BumpsConfig(size=(8.0, 6.0), resolution=0.5, count=5),
    g.RocksConfig(size=(8.0, 6.0), resolution=0.5, count=5),
    g.StepsConfig(size=(8.0, 6.0), resolution=0.5),
    g.HolesConfig(size=(8.0, 6.0), resolution=0.5, base=g.FlatConfig(size=(8.0, 6.0), resolution=0.5),
                  keep_center=0.0),
    g.SumConfig(size=(8.0, 6.0), resolution=0.5, parts=(
        g.PerlinConfig(size=(8.0, 6.0), resolution=0.5),
        g.RocksConfig(size=(8.0, 6.0), resolution=0.5, count=3))),
]


@pytest.mark.parametrize("cfg", ALL, ids=lambda c: type(c).__name__)
def test_shape_and_bitwise_determinism(cfg):
    a = terrain.generate(cfg, np.random.default_rng(7))
    b = terrain.generate(cfg, np.random.default_rng(7))
    assert a.shape == (13, 17) and a.dtype == np.float64
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("cfg", [c for c in ALL if isinstance(
    c, (g.PerlinConfig, g.BumpsConfig, g.RocksConfig, g.HolesConfig))], ids=lambda c: type(c).__name__)
def test_random_generators_depend_on_the_seed_not_the_global_state(cfg):
    np.random.seed(0)
    a = terrain.generate(cfg, 1)
    np.random.seed(1)
    b = terrain.generate(cfg, 1)
    c = terrain.generate(cfg, 2)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


def test_plane_closed_form_and_flat():
    cfg = g.PlaneConfig(size=(4.0, 2.0), resolution=(0.5, 0.25), slope_x=0.3, slope_y=-0.1,
                        height=2.0)
    z = terrain.generate(cfg)
    X, Y = g.grid_xy(cfg)
    np.testing.assert_allclose(z, 0.3 * X - 0.1 * Y + 2.0)
    assert X[0, 0] == -2.0 and Y[-1, 0] == 1.0  # row index grows with y
    hm = terrain.make_heightmap(cfg)
    assert hm.shape == (9, 9) and hm.center == (0.0, 0.0)
    assert np.all(terrain.generate(g.FlatConfig(size=2.0, resolution=1.0, height=-1.5)) == -1.5)


def test_peaks_is_matlab_peaks_and_the_seed_example():
    assert math.isclose(g.peaks(np.array(0.0), np.array(0.0)),
                        3 * math.exp(-1) - math.exp(-1) / 3)
    cfg = g.PeaksConfig()  # the seed: 201 x 201 samples, 40 x 40 m, 0.20 m, -2.56 ... 3.18 m
    assert cfg.samples == (201, 201)
    z = terrain.generate(cfg)
    # peaks(201), imgaussfilt(., 3) (13 taps, replicate), x 0.4: printed as [-2.56, 3.18]
    assert (round(z.min(), 2), round(z.max(), 2)) == (-2.56, 3.18)
    assert math.isclose(z.min(), -2.556120, abs_tol=1e-6)
    assert math.isclose(z.max(), 3.177565, abs_tol=1e-6)
    ranged = terrain.generate(g.PeaksConfig(scale=None, height_range=(-1.0, 2.0)))
    assert math.isclose(ranged.min(), -1.0) and math.isclose(ranged.max(), 2.0)
    # MATLAB's kernel: 2 ceil(2 sigma) + 1 taps; an impulse spreads over exactly 13 samples
    imp = np.zeros((1, 41))
    imp[0, 20] = 1.0
    spread = g.matlab_gaussian(np.repeat(imp, 41, 0), 3.0)[20]
    assert np.count_nonzero(spread > 0) == 13 and math.isclose(spread.sum(), 1.0)
    raw = g.peaks(*(np.array(v) / 20.0 * 3 for v in g.grid_xy(cfg)))
    # smoothing keeps the shape: the highest point stays on the main peak near (0, 1.6) * 20/3
    iy, ix = np.unravel_index(np.argmax(z), z.shape)
    jy, jx = np.unravel_index(np.argmax(raw), raw.shape)
    assert abs(iy - jy) <= 2 and abs(ix - jx) <= 2


def test_perlin_is_zero_free_but_bounded_and_octaves_add_detail():
    base = dict(size=(20.0, 20.0), resolution=0.1, frequency=0.2, amplitude=1.0)
    one = terrain.generate(g.PerlinConfig(octaves=1, **base), 3)
    assert np.abs(one).max() <= 1.0 / math.sqrt(2) + 1e-9
    assert one.std() > 0.05
    four = terrain.generate(g.PerlinConfig(octaves=4, **base), 3)
    # higher octaves add high-frequency energy: mean squared second difference grows
    def rough(z):
        return np.mean(np.diff(z, 2, axis=1) ** 2)
    assert rough(four) > 2 * rough(one)


def test_steps_and_holes():
    cfg = g.StepsConfig(size=(4.0, 2.0), resolution=0.5, step_height=0.2, step_length=1.0,
                        count=2, start=0.0)
    z = terrain.generate(cfg)
    X, _ = g.grid_xy(cfg)
    assert np.all(z[:, X[0] < 0] == 0.0)
    assert np.all(z[:, (X[0] >= 0) & (X[0] < 1)] == 0.2)
    assert np.all(z[:, X[0] >= 1] == 0.4)
    h = terrain.generate(g.HolesConfig(size=(20.0, 20.0), resolution=0.25, count=30,
                                       keep_center=3.0), 0)
    assert np.isnan(h).any()
    X, Y = g.grid_xy(g.FlatConfig(size=(20.0, 20.0), resolution=0.25))
    assert not np.isnan(h[np.hypot(X, Y) < 3.0]).any()


def test_rocks_heights_within_range():
    cfg = g.RocksConfig(size=(10.0, 10.0), resolution=0.05, count=10, height_range=(0.1, 0.3))
    z = terrain.generate(cfg, 5)
    assert z.min() == 0.0 and 0.1 * 0.9 <= z.max() <= 0.3


@pytest.mark.parametrize("make, match", [
    (lambda: g.FlatConfig(size=(0.0, 1.0)), "size"),
    (lambda: g.FlatConfig(resolution=(-0.1, 0.1)), "resolution"),
    (lambda: g.FlatConfig(size=(0.1, 0.1), resolution=1.0), "at least 2"),
    (lambda: g.PerlinConfig(octaves=0), "octaves"),
    (lambda: g.PerlinConfig(frequency=float("nan")), "frequency"),
    (lambda: g.PeaksConfig(height_range=(2.0, 1.0)), "height_range"),
    (lambda: g.BumpsConfig(sigma_range=(0.0, 1.0)), "sigma_range"),
    (lambda: g.RocksConfig(elongation=0.0), "elongation"),
    (lambda: g.StepsConfig(step_length=0.0), "step_length"),
    (lambda: g.HolesConfig(size=(10.0, 10.0), base=g.FlatConfig()), "must match"),
    (lambda: g.SumConfig(parts=()), "at least one"),
])
def test_bad_configs(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_configs_are_frozen_and_generate_checks_its_inputs():
    cfg = g.FlatConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.height = 2.0
    with pytest.raises(TypeError, match="rng"):
        terrain.generate(cfg, "seed")
    with pytest.raises(TypeError, match="no generator"):
        terrain.generate(g.TerrainConfig())
