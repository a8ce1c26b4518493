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
