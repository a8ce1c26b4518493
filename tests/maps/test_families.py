"""Terrain families: each level holds what it states, levels grow, maps are reproducible."""

import math
from dataclasses import replace

import numpy as np
import pytest

from terrain import FAMILIES, FamilyConfig, LevelsConfig, family_level, level_maps, level_spec

CFG = FamilyConfig(size=(16.0, 16.0), resolution=(0.05, 0.05))


def _max_slope_deg(z, res):
    gy, gx = np.gradient(z, res, res)
    return math.degrees(math.atan(float(np.hypot(gx, gy).max())))


@pytest.mark.parametrize("level", [0, 3, 6, 9])
def test_each_level_holds_its_stated_feature(level):
    res = CFG.resolution[0]
    rng = lambda: np.random.default_rng(level)  # noqa: E731
    fc = replace(CFG, family="slopes")
    spec = level_spec(fc, level)
    assert _max_slope_deg(family_level(fc, level, rng()), res) == pytest.approx(
        spec["max_slope_deg"], rel=0.03)
    fc = replace(CFG, family="ditches")
    spec, z = level_spec(fc, level), family_level(fc, level, rng())
    assert z.min() == pytest.approx(-spec["depth"]) and z.max() == 0.0
    # the walls are planes of the stated angle (central differences on them, off the edges)
    gy, gx = np.gradient(z, res, res)
    steep = np.degrees(np.arctan(np.hypot(gx, gy)))
    assert np.percentile(steep[steep > 0.5 * spec["wall_deg"]], 50) == pytest.approx(
        spec["wall_deg"], rel=0.02)
    fc = replace(CFG, family="boulders")
    spec, z = level_spec(fc, level), family_level(fc, level, rng())
    assert z.min() == 0.0 and z.max() == pytest.approx(spec["boulder_height"], rel=0.01)
    fc = replace(CFG, family="steps")
    spec, z = level_spec(fc, level), family_level(fc, level, rng())
    jumps = np.concatenate((np.abs(np.diff(z, axis=0)).ravel(), np.abs(np.diff(z, axis=1)).ravel()))
    jumps = jumps[jumps > 1e-12]
    assert np.allclose(jumps, spec["step_height"])  # every ledge is one rise, nothing else
    fc = replace(CFG, family="rough")
    spec, z = level_spec(fc, level), family_level(fc, level, rng())
    assert z.std() == pytest.approx(spec["sigma"]) and abs(z.mean()) < 1e-12


def test_the_top_levels_pass_the_vehicles_limits_and_levels_grow():
    lim = min(CFG.roll_limit_deg, CFG.pitch_limit_deg)
    top = CFG.num_levels - 1
    top_slope = level_spec(replace(CFG, family="slopes"), top)["max_slope_deg"]
    assert top_slope == pytest.approx(1.2 * lim)
    assert level_spec(replace(CFG, family="ditches"), top)["wall_deg"] > CFG.pitch_limit_deg
    # a boulder under one side rolls the body past its limit: b / track > tan(roll limit)
    b = level_spec(replace(CFG, family="boulders"), top)["boulder_height"]
    assert math.degrees(math.atan(b / CFG.track_width)) > CFG.roll_limit_deg
    assert level_spec(replace(CFG, family="steps"), top)["step_height"] > CFG.wheel_radius
    for fam in FAMILIES:
        fc = replace(CFG, family=fam)
        vals = [list(level_spec(fc, lv).values())[0] for lv in range(fc.num_levels)]
        assert all(a < b for a, b in zip(vals, vals[1:])), fam
    with pytest.raises(ValueError, match="level"):
        level_spec(CFG, 10)
    with pytest.raises(ValueError, match="family"):
        FamilyConfig(family="cliffs")


def test_a_level_stack_is_reproducible_map_by_map():
    cfg = LevelsConfig(family=replace(CFG, size=(8.0, 8.0), resolution=(0.2, 0.2), num_levels=3),
                       families=("slopes", "steps"), worlds=2)
    maps = level_maps(cfg, seed=5)
    assert len(maps) == cfg.num_maps == 12
    assert cfg.map_index(1, 2, 1) == 11
    again = level_maps(cfg, seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(maps, again))
    assert not np.array_equal(maps[0], level_maps(cfg, seed=6)[0])
    # the two worlds of a level differ, the map does not depend on the others in the stack
    assert not np.array_equal(maps[0], maps[1])
    one = level_maps(replace(cfg, families=("slopes",)), seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(one, maps[:6]))


@pytest.mark.parametrize("level", [0, 4, 9])
def test_the_soft_soil_levels_hold_their_slope_and_soil_cover(level):
    from terrain import family_materials
    fc = replace(CFG, family="soft_soil")
    spec = level_spec(fc, level)
    z = family_level(fc, level, np.random.default_rng(level))
    assert _max_slope_deg(z, CFG.resolution[0]) == pytest.approx(spec["max_slope_deg"], rel=0.03)
    sl = replace(CFG, family="slopes")  # a family on hard ground has no material map
    assert spec["max_slope_deg"] == pytest.approx((level + 1) / 10 * CFG.soil_slope_deg)
    mat, names = family_materials(fc, level, np.random.default_rng(level))
    assert names == ("hard",) + CFG.soils == ("hard", "dry_sand", "clayey_soil")
    cover = float((mat > 0).mean())
    assert cover == pytest.approx(spec["soil_cover"], abs=0.002)
    shares = [float((mat == i).mean()) for i in (1, 2)]
    assert all(s > 0.25 * cover for s in shares) and family_materials(sl, level, None) is None
    assert spec["soil_cover"] == pytest.approx((level + 1) / 10 * CFG.max_soil_cover)


def test_a_stack_with_soft_soil_carries_its_material_map_and_v0s_families_stay_hard():
    from terrain import HARD_FAMILIES, level_materials
    assert "soft_soil" in FAMILIES and "soft_soil" not in HARD_FAMILIES
    assert LevelsConfig().families == HARD_FAMILIES == ("slopes", "ditches", "boulders", "steps",
                                                       "rough")
    cfg = LevelsConfig(family=replace(CFG, size=(8.0, 8.0), resolution=(0.2, 0.2), num_levels=2),
                       families=("slopes", "soft_soil"), worlds=1)
    mat, names = level_materials(cfg, seed=3)
    assert mat.shape == (4, 41, 41) and names == ("hard", "dry_sand", "clayey_soil")
    assert int(mat[:2].max()) == 0 and int(mat[3].max()) == 2
    again, _ = level_materials(cfg, seed=3)
    assert np.array_equal(mat, again)
    assert level_materials(replace(cfg, families=("slopes",)), seed=3) == (None, None)
    with pytest.raises(ValueError, match="soils"):
        replace(CFG, soils=("hard",))
