import math
"""The observation registry: the one list of terms, each its declared size within its bounds."""

import pytest
import torch

from offroad_env.sim.config import OBS_TERMS, HeightScanConfig, SimConfig
from offroad_env.task.observations import TERMS

from env_util import sim


def test_the_observation_registry_is_the_one_list_of_terms():
    assert OBS_TERMS == tuple(TERMS)
    with pytest.raises(ValueError, match="obs_terms"):
        SimConfig(obs_terms=("z_rel", "speedometer"))


def test_every_term_computes_its_declared_size_within_its_bounds():
    # every term a kinematic model has (energy_margin: the physical model's, below)
    cfg_terms = tuple(t for t in TERMS if t not in ("height_scan", "energy_margin"))
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


def test_the_energy_margin_is_the_physical_models_and_refused_elsewhere():
    import pytest
    with pytest.raises(ValueError, match="energy_margin observation is the physical model's"):
        sim(2, obs_terms=("energy_margin",))
    s = sim(2, obs_terms=("energy_margin",), dynamics="rigid_body")
    obs = s.step(torch.zeros(2, 2))[0]
    # at rest on flat ground: the rise left over the nearest edge of the wheels' contacts (the
    # mid-planes on level ground), sqrt(l^2 + h^2) - h, l the centre of mass's distance from
    # the edge in plan view, h its height over the ground: the Husky's axles (l = 0.256 m)
    # are nearer than its sides (0.285 m)
    v = s.vehicle
    h = float(s.state.body_pos[0, 2])
    arms = (v.track_width / 2, v.com[0], v.wheel_base - v.com[0])
    want = min(math.hypot(a, h) for a in arms) - h
    assert float(obs[0, 0]) == pytest.approx(want, rel=1e-4)


def test_goal_polar_is_the_goal_as_distance_and_bearing():
    """``goal_polar`` against ``goal``'s body-frame ``(dx, dy)``: ``(hypot, dx / d, dy / d)``,
    a unit direction whatever the distance; at the goal itself, dead ahead ``(0, 1, 0)``."""
    s = sim(5, obs_terms=("goal", "goal_polar"))
    s.step(torch.rand(5, 2, generator=torch.Generator().manual_seed(0)) * 2 - 1)
    g = TERMS["goal"].compute(s.state, s.maps, s.cfg).double()
    p = TERMS["goal_polar"].compute(s.state, s.maps, s.cfg).double()
    d = torch.hypot(g[:, 0], g[:, 1])
    torch.testing.assert_close(p[:, 0], d, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(p[:, 1] * d, g[:, 0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(p[:, 2] * d, g[:, 1], rtol=1e-5, atol=1e-5)
    # a float32 unit vector: its squared norm is 1 within a few float32 ulps (not float64's)
    torch.testing.assert_close(p[:, 1] ** 2 + p[:, 2] ** 2, torch.ones(5, dtype=p.dtype),
                               rtol=0.0, atol=8 * torch.finfo(torch.float32).eps)
    # a goal 3 m dead astern reads (3, -1, 0); one on base_link itself reads (0, 1, 0)
    st = s.state
    bp = st.contact.base_position
    c, sn = torch.cos(st.yaw), torch.sin(st.yaw)
    st.goal_w = torch.stack((bp[:, 0] - 3 * c, bp[:, 1] - 3 * sn), 1).to(st.goal_w.dtype)
    torch.testing.assert_close(TERMS["goal_polar"].compute(st, s.maps, s.cfg),
                               torch.tensor([[3.0, -1.0, 0.0]] * 5), rtol=0, atol=1e-4)
    st.goal_w = bp[:, :2].to(st.goal_w.dtype)
    torch.testing.assert_close(TERMS["goal_polar"].compute(st, s.maps, s.cfg),
                               torch.tensor([[0.0, 1.0, 0.0]] * 5), rtol=0, atol=1e-5)
