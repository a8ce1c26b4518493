"""Verti-Bench's worlds as height maps (issue 67): the converted heights against its BMPs, the
rocks' and trees' footprints against its own obstacle maps, the ground's layout and the scaled
rules.

``tests/data/verti_bench`` holds three worlds' own files (1: rigid, 61: deformable, 95: mixed;
MIT licence, its ``LICENSE``). With ``VERTI_BENCH_DIR`` set to a checkout of
``RobotiXX/verti_bench``, the checks against the BMPs run on all 100 worlds.
"""

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from terrain import verti_bench as vb
from terrain.materials import material_at

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "verti_bench"
FULL = os.environ.get("VERTI_BENCH_DIR")


def _sources():
    """``(folder of Worlds/ and Configs/Final/, worlds)`` to check: the sample, or a checkout."""
    if FULL:
        base = Path(FULL) / "envs" / "data" / "BenchMaps" / "sampled_maps"
        return base, list(range(1, 101))
    return SAMPLE, [1, 61, 95]


def _config(base: Path, w: int) -> Path:
    (found,) = sorted((base / "Configs" / "Final").glob(f"config{w}_*.yaml"))
    return found


def test_the_converter_reads_the_sample_as_the_shipped_dataset_holds_it():
    pytest.importorskip("yaml")
    got = vb.read_source(SAMPLE)
    ship = vb.load_dataset()
    assert got["world"].tolist() == [1, 61, 95]
    rows = [int(np.flatnonzero(ship["world"] == w)[0]) for w in (1, 61, 95)]
    for k in ("grey", "max_height", "difficulty", "kind", "is_flat", "types", "friction",
              "effective_mu", "pairs"):
        assert np.array_equal(got[k], ship[k][rows], equal_nan=True), k
    for k in ("rocks", "trees"):
        mine = ship[k][np.isin(ship[k][:, 0], [1, 61, 95])]
        assert np.array_equal(got[k], mine), k


@pytest.mark.parametrize("scale", [1.0, 1 / 6])
def test_the_heights_are_grey_over_255_times_max_height_at_scale_and_orientation(scale):
    """Every world's BMP, read here with Pillow: sample ``(r, c)`` of the image lies at ``x = (c
    - 64) s``, ``y = (64 - r) s`` with height ``grey / 255 x max_height x s``; the upsampled
    map keeps those samples exactly."""
    import yaml

    base, worlds = _sources()
    for w in worlds:
        grey = np.asarray(Image.open(base / "Worlds" / f"{w}.bmp")).astype(np.float64)
        cfg = yaml.safe_load(_config(base, w).read_text())
        want = grey / 255.0 * cfg["terrain"]["max_height"] * scale
        hm = vb.world_map(w, scale=scale, upsample=2, obstacles=False, dtype=torch.float64)
        got = hm.heights.numpy()[::2, ::2]
        assert np.allclose(got[::-1], want, rtol=0, atol=1e-12), w
        # orientation: the queries at a pixel's world point give its height
        rng = np.random.default_rng(w)
        r, c = rng.integers(0, 129, 50), rng.integers(0, 129, 50)
        x, y = torch.as_tensor((c - 64) * scale), torch.as_tensor((64 - r) * scale)
        assert np.allclose(hm.height(x, y).numpy(), want[r, c], atol=1e-9), w


def _dilate(mask: np.ndarray) -> np.ndarray:
    """``mask`` grown by one pixel (8-neighbourhood)."""
    out = mask.copy()
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            out |= np.roll(np.roll(mask, dr, 0), dc, 1)
    return out


def test_rock_and_tree_footprints_match_verti_benchs_obstacle_maps_within_a_pixel():
    """Its ``obsN_*.bmp`` is the height image with each obstacle painted 255 over
    ``int(4.4 x scale)`` pixels centred at ``round(x + 64.5)``; ours is every sample within
    the box's half-width of its centre: each painted pixel lies within one pixel of ours, and
    each of ours within one of a painted one (pixels 255 in the height image already are
    left out: nothing was painted there that can be seen)."""
    base, worlds = _sources()
    for w in worlds:
        grey = np.asarray(Image.open(base / "Worlds" / f"{w}.bmp"))
        (obs_file,) = sorted((base / "Configs" / "Final").glob(f"obs{w}_*.bmp"))
        obs = np.asarray(Image.open(obs_file))
        painted = (obs == 255) & (grey != 255)
        hm = vb.world_map(w, scale=1.0, upsample=1)
        code = hm.material_names.index("verti_bench/obstacle") if (
            "verti_bench/obstacle" in hm.material_names) else -1
        ours = (hm.materials[0].numpy() == code)[::-1] & (grey != 255)
        assert painted.any() and ours.any(), w
        assert not (painted & ~_dilate(ours)).any(), w
        assert not (ours & ~_dilate(painted)).any(), w


def test_the_obstacles_are_prisms_up_to_their_boxes_tops():
    d = vb.load_dataset()
    hm = vb.world_map(1, scale=1.0, upsample=2, dtype=torch.float64)
    bare = vb.world_map(1, scale=1.0, upsample=2, obstacles=False, dtype=torch.float64)
    for w, x, y, z, s in d["rocks"][d["rocks"][:, 0] == 1][:5]:
        top = z + 0.5 * 3.8 * s
        px, py = torch.tensor([x]), torch.tensor([y])
        assert float(hm.height(px, py)) == pytest.approx(max(top, float(bare.height(px, py))))
        # just outside the footprint the ground is bare
        out = torch.tensor([x + 0.5 * 4.4 * s + 0.6])
        assert float(hm.height(out, py)) == pytest.approx(float(bare.height(out, py)))


def test_a_deformable_world_lays_its_soils_out_by_rows_and_mixed_by_rectangles():
    # world 61: mud and snow, in the order of their names: mud north (y > 0), snow south
    hm = vb.world_map(61, scale=1.0, upsample=1, obstacles=False)
    names = hm.material_names
    at = (lambda x, y: names[int(material_at(hm, torch.tensor([x]), torch.tensor([y])))])
    assert at(0.0, 30.0) == "verti_bench/mud" and at(0.0, -30.0) == "verti_bench/snow"
    assert at(-60.0, 1.0) == "verti_bench/mud" and at(60.0, 0.0) == "verti_bench/snow"
    assert hm.material_defs["verti_bench/snow"] == vb.SOILS["verti_bench/snow"]
    # world 95: snow's largest rectangle of patches (rows 0-6, columns 2-15) is snow
    d = vb.load_dataset()
    k = int(np.flatnonzero(d["world"] == 95)[0])
    soft = np.isnan(d["effective_mu"][k])
    want = np.zeros((16, 16), bool)
    want[0:7, 2:16] = True
    assert np.array_equal(soft, want)


def test_the_merge_gives_each_rectangle_one_of_its_patches_friction():
    """Rigid patches of one type merge into rectangles, greedily the largest first; each takes
    one of its own patches' friction. A world all dirt is one rectangle of one value; two types
    in halves are two."""
    rng = np.random.default_rng(0)
    dirt, clay = vb.TYPES.index("dirt"), vb.TYPES.index("clay")
    fric = rng.uniform(0.3, 0.8, (16, 16))
    one = vb.effective_friction(np.full((16, 16), dirt), fric, "rigid")
    assert np.unique(one).size == 1 and one[0, 0] in fric
    types = np.full((16, 16), dirt)
    types[:, 8:] = clay
    two = vb.effective_friction(types, fric, "rigid")
    assert np.unique(two[:, :8]).size == 1 and two[0, 0] in fric[:, :8]
    assert np.unique(two[:, 8:]).size == 1 and two[0, 8] in fric[:, 8:]
    # an L of dirt: the largest rectangle first (the 16 x 8 half), then the rest
    types = np.full((16, 16), clay)
    types[:, :8] = dirt
    types[12:, 8:] = dirt
    ell = vb.effective_friction(types, fric, "rigid")
    assert np.unique(ell[types == dirt]).size == 2


def test_every_shipped_world_builds_with_its_declared_materials():
    d = vb.load_dataset()
    assert d["world"].tolist() == list(range(1, 101))
    assert np.bincount(d["kind"]).tolist() == [60, 30, 10]
    for w in (1, 61, 95):
        hm = vb.world_map(w)
        assert set(hm.material_names) <= set(hm.material_defs)
        assert all(n.startswith("verti_bench/") for n in hm.material_names)
        mus = [v["mu"] for v in hm.material_defs.values() if "mu" in v]
        assert max(mus) <= vb.TYRE_MU
        assert hm.bounds == pytest.approx((-64 / 6, 64 / 6, -64 / 6, 64 / 6))
    with pytest.raises(ValueError, match="world 101 is not in the dataset"):
        vb.world_map(101)
    with pytest.raises(ValueError, match="scale must be a number > 0"):
        vb.world_map(1, scale=0)


def test_the_pairs_lie_on_a_circle_of_60_m_each_goal_opposite_its_start():
    p = vb.world_pairs(7, scale=1.0)
    assert np.allclose(np.hypot(p[:, 0, 0], p[:, 0, 1]), 60.0)
    assert np.allclose(p[:, 1], -p[:, 0], atol=1e-9)
    assert np.allclose(vb.world_pairs(7, scale=0.5), 0.5 * p)
    angles = np.sort(np.degrees(np.arctan2(p[:, 0, 1], p[:, 0, 0])) % 360)
    assert np.allclose(np.diff(angles), 36.0)


def test_soil_parameters_are_verti_benchs_scm_values():
    # terrain.py SCMParameters: snow (soft), mud (mid), sand (hard, LETE)
    assert vb.SOILS["verti_bench/snow"]["k_phi"] == 0.2e6
    assert vb.SOILS["verti_bench/mud"]["k_phi"] == 2e6
    sand = vb.SOILS["verti_bench/sand"]
    assert (sand["n"], sand["k_c"], sand["k_phi"], sand["c"], sand["phi_deg"], sand["K"]) == (
        0.793, 102e3, 5301e3, 1.3e3, 31.1, 0.012)
    assert math.isclose(vb.TYRE_MU, 0.9)


def test_a_husky_wheel_makes_positive_drawbar_pull_on_its_snow_and_mud_past_a_little_slip():
    """The closed form the OffroadBench guide quotes (flat ground, a Husky wheel's load): on
    Verti-Bench's snow the pull turns positive between 10 and 20 % slip, on its mud and sand
    below 10 %; the ruts: 80, 18 and 3 mm."""
    from offroad_env.physics.soil import drawbar_pull
    from offroad_env.physics.soil_contact import declared_materials
    from offroad_env.physics.vehicle import husky

    v = husky()
    W = v.mass * 9.81 / 4
    soils = {n: s for n, (_, s) in declared_materials(vb.SOILS).items()}
    i = torch.tensor([0.05, 0.1, 0.2, 1.0], dtype=torch.float64)
    for name, sign_at, rut_mm in (("verti_bench/snow", [-1, -1, 1, 1], 80.0),
                                  ("verti_bench/mud", [-1, 1, 1, 1], 18.3),
                                  ("verti_bench/sand", [-1, 1, 1, 1], 2.7)):
        pull, z = drawbar_pull(soils[name], v.wheel_width, v.wheel_radius, W, i)
        assert torch.sign(pull).tolist() == sign_at, name
        assert float(z[0]) * 1000 == pytest.approx(rut_mm, abs=0.5), name
