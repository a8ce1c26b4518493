"""The disk cache of level stacks (terrain.cache): a stack read back is the one generated, bit
for bit, heights and materials; the key follows the config and the seed; the cache can be off;
a broken entry is made again; old entries are pruned."""

import numpy as np
import pytest
import torch

import terrain
from terrain import cache

LEVELS = terrain.LevelsConfig(family=terrain.FamilyConfig(size=(6.0, 6.0), resolution=(0.2, 0.2),
                                                          num_levels=3),
                              families=("slopes", "soft_soil"), worlds=1)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    return tmp_path


def _fresh(cfg, seed):
    return (np.stack(terrain.level_maps(cfg, seed)),) + tuple(terrain.level_materials(cfg, seed))


def test_a_cached_stack_is_the_generated_one_bit_for_bit(folder):
    h1, m1, n1 = cache.cached_levels(LEVELS, 7, min_samples=0)
    assert len(list(folder.glob("levels-*.npz"))) == 1
    h2, m2, n2 = cache.cached_levels(LEVELS, 7, min_samples=0)  # read back
    fresh_h, fresh_m, fresh_n = _fresh(LEVELS, 7)
    assert h2.dtype == np.float32 and np.array_equal(h2, fresh_h.astype(np.float32),
                                                     equal_nan=True)
    assert np.array_equal(m2, fresh_m) and n2 == tuple(fresh_n) == n1
    # the HeightMap built from it is the one built from the float64 stack
    a = terrain.HeightMap(torch.from_numpy(h2), LEVELS.resolution, materials=m2,
                          material_names=n2)
    b = terrain.HeightMap(fresh_h, LEVELS.resolution, materials=fresh_m,
                          material_names=fresh_n)
    assert torch.equal(a.heights.nan_to_num(-9.0), b.heights.nan_to_num(-9.0))
    assert torch.equal(a.materials, b.materials)


def test_the_key_follows_the_config_and_the_seed_and_small_stacks_are_not_kept(folder):
    cache.cached_levels(LEVELS, 7, min_samples=0)
    cache.cached_levels(LEVELS, 8, min_samples=0)
    other = terrain.LevelsConfig(family=LEVELS.family, families=("slopes",), worlds=1)
    cache.cached_levels(other, 7, min_samples=0)
    assert len(list(folder.glob("levels-*.npz"))) == 3
    cache.cached_levels(terrain.LevelsConfig(family=LEVELS.family, worlds=1), 7)  # small
    assert len(list(folder.glob("levels-*.npz"))) == 3


def test_the_cache_can_be_off_and_a_broken_entry_is_made_again(folder, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    cache.cached_levels(LEVELS, 7, min_samples=0)
    assert not list(folder.glob("*.npz"))
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    cache.cached_levels(LEVELS, 7, min_samples=0)
    (entry,) = folder.glob("levels-*.npz")
    entry.write_bytes(b"not a zip")
    with pytest.warns(RuntimeWarning, match="unreadable"):
        h, _, _ = cache.cached_levels(LEVELS, 7, min_samples=0)
    assert np.array_equal(h, _fresh(LEVELS, 7)[0].astype(np.float32), equal_nan=True)


def test_old_entries_are_pruned(folder, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    for seed in range(4):
        cache.cached_levels(LEVELS, seed, min_samples=0)
    assert len(list(folder.glob("levels-*.npz"))) == 2
