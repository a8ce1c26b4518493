"""The observation registry: the one list of terms, each its declared size within its bounds."""

import pytest
import torch

from offroad_env.config import OBS_TERMS, HeightScanConfig, SimConfig
from offroad_env.observations import TERMS

from env_util import sim


def test_the_observation_registry_is_the_one_list_of_terms():
    assert OBS_TERMS == tuple(TERMS)
    with pytest.raises(ValueError, match="obs_terms"):
        SimConfig(obs_terms=("z_rel", "speedometer"))


def test_every_term_computes_its_declared_size_within_its_bounds():
    cfg_terms = tuple(t for t in TERMS if t != "height_scan")
    s = sim(3, obs_terms=cfg_terms, height_scan=HeightScanConfig(size=(0.4, 0.2)))
    obs = s.step(torch.rand(3, 2) * 2 - 1)[0]
    layout = s.obs_layout
    assert [name for name, _, _ in layout] == list(cfg_terms) + ["height_scan"]
    assert layout[0][1] == 0 and layout[-1][2] == obs.shape[1] == s.obs_dim
    for (_, _, stop), (_, start, _) in zip(layout, layout[1:]):
        assert stop == start
    lo, hi = s.obs_bounds()
    assert (obs.numpy() >= lo).all() and (obs.numpy() <= hi).all()
    for name, start, stop in layout:
        raw = TERMS[name].compute(s.state, s.maps, s.cfg)
        assert raw.shape == (3, stop - start), name
