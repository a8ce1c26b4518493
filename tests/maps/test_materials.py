"""Material maps (terrain.materials): checked where they enter, carried through every operation
on a map, merged in stacks, looked up at the nearest sample, never dropped silently."""

import numpy as np
import pytest
import torch

import terrain
from terrain import HeightMap
from terrain.materials import material_at, soft_materials

H = np.zeros((5, 6))
M = np.zeros((5, 6), int)
M[:, 3:] = 1


def _map(**kw):
    return HeightMap(H, 1.0, materials=M, material_names=("hard", "dry_sand"), **kw)


def test_a_material_map_is_checked_where_it_enters():
    with pytest.raises(ValueError, match="together"):
        HeightMap(H, 1.0, materials=M)
    with pytest.raises(ValueError, match="together"):
        HeightMap(H, 1.0, material_names=("hard",))
    with pytest.raises(ValueError, match=r"shape \(1, 5, 6\)"):
        HeightMap(H, 1.0, materials=M[:, :4], material_names=("hard", "dry_sand"))
    with pytest.raises(ValueError, match=r"indices in \[0, 1\)"):
        HeightMap(H, 1.0, materials=M, material_names=("hard",))
    with pytest.raises(ValueError, match="integers"):
        HeightMap(H, 1.0, materials=M * 0.5, material_names=("hard", "dry_sand"))
    with pytest.raises(ValueError, match="distinct"):
        HeightMap(H, 1.0, materials=M, material_names=("hard", "hard"))
    with pytest.raises(ValueError, match="distinct"):
        HeightMap(H, 1.0, materials=M, material_names="hard")
    assert HeightMap(H, 1.0).materials is None and HeightMap(H, 1.0).material_names is None


def test_the_material_map_travels_with_the_map():
    hm = _map()
    assert hm.materials.dtype == torch.uint8 and hm.materials.shape == (1, 5, 6)
    for other in (hm.to(dtype=torch.float64), hm.translated(3.0, -2.0, 1.0),
                  hm.with_interpolation("triangles"), hm[0]):
        assert torch.equal(other.materials, hm.materials)
        assert other.material_names == hm.material_names
    # the nearest sample's material, in world coordinates (the map moved with its origin)
    x0, _ = hm.origin
    got = material_at(hm, torch.tensor([x0, x0 + 2.4, x0 + 2.6, x0 + 99.0]), torch.zeros(4))
    assert got.tolist() == [0, 0, 1, 1]
    moved = hm.translated(10.0, 0.0)
    assert material_at(moved, torch.tensor([x0 + 12.6]), torch.zeros(1)).tolist() == [1]
    with pytest.raises(ValueError, match="no material map"):
        material_at(HeightMap(H, 1.0), 0.0, 0.0)


def test_a_stack_merges_the_names_and_renumbers():
    snow = HeightMap(H, 1.0, materials=np.zeros((5, 6), int), material_names=("snow",))
    s = HeightMap.stack([_map(), HeightMap(H, 1.0), snow])
    assert s.material_names == ("hard", "dry_sand", "snow")
    assert s.materials[0].tolist() == torch.as_tensor(M).tolist()
    assert int(s.materials[1].max()) == 0  # a map without materials is hard ground
    assert bool((s.materials[2] == 2).all())
    assert s[2].material_names == s.material_names and bool((s[2].materials == 2).all())
    got = material_at(s, torch.tensor([0.6, 0.6, 0.6]), torch.zeros(3), torch.tensor([0, 1, 2]))
    assert got.tolist() == [1, 0, 2]
    assert soft_materials(s) == ("dry_sand", "snow") and soft_materials(s[1]) == ()
    assert soft_materials(HeightMap(H, 1.0)) == ()


def test_saving_a_map_with_materials_refuses_rather_than_drop_them(tmp_path):
    with pytest.raises(ValueError, match="material map"):
        terrain.save(_map(), tmp_path / "m.npy")


def test_previews_and_frames_tint_the_soils_and_nothing_else():
    from terrain.preview import MATERIAL_COLOURS, preview_image
    hill = np.add.outer(np.linspace(0.0, 1.0, 5), np.linspace(0.0, 0.5, 6))
    plain = preview_image(HeightMap(hill, 1.0))
    tinted = preview_image(HeightMap(hill, 1.0, materials=M, material_names=("hard", "dry_sand")))
    # row 0 of the picture is the map's last row; columns 3.. are sand
    assert np.array_equal(tinted[:, :3], plain[:, :3])
    assert (np.abs(tinted[:, 3:].astype(int) - plain[:, 3:]).sum(-1) > 20).all()
    # the tint is the first colour, half and half under the same light: yellow comes up
    assert (tinted[:, 3:, 0].astype(int) >= plain[:, 3:, 0]).all()
    assert MATERIAL_COLOURS[0] == (240, 205, 110)


def test_the_follow_view_resamples_the_material_map():
    from offroad_env import OffroadVectorEnv
    sand = np.zeros((201, 201), int)
    sand[:, 100:] = 1  # x >= 0 is sand
    hm = HeightMap(np.zeros((201, 201)), 0.1, materials=sand, material_names=("hard", "dry_sand"))
    env = OffroadVectorEnv(num_envs=1, heightmap=hm, dynamics="rigid_body", task="velocity",
                           render_mode="rgb_array", render_view="follow", render_window=4.0)
    env.reset(seed=0, options={"start_pose": torch.tensor([[-1.0, 0.0, 0.0]],
                                                           dtype=torch.float64)})
    img = env.render()[0]  # sub-env 0's frame, the vehicle at x = -1 m in a 4 m window
    h, w, _ = img.shape
    left, right = img[h // 10, w // 10].astype(int), img[h // 10, w - w // 10].astype(int)
    assert right[0] > left[0] + 20  # the sand side (east, x > 0) is yellower
