"""The four-wheel seed's worked example, reproduced to its printed digits."""

import numpy as np
import pytest
import torch

import terrain
from offroad_env.cli import demo


def test_the_seed_example_to_its_printed_digits(tmp_path):
    hm = terrain.make_heightmap(terrain.PeaksConfig(), 0, dtype=torch.float64)
    lo, hi = float(hm.heights.min()), float(hm.heights.max())
    assert (round(lo, 2), round(hi, 2)) == (-2.56, 3.18)  # the seed prints [-2.56, 3.18]
    terrain.save(hm, tmp_path / "t.png", z_scale=1.0)  # as the seed: zScale 1 m
    hm = terrain.load(tmp_path / "t.png", dtype=torch.float64)
    s = demo.summarise(demo.drive(hm))
    seed = demo.SEED_SUMMARY  # 62.1547 m, 25.582 deg, 23.542 deg, [-0.29073, 1.5317] m
    assert round(s["distance_m"], 4) == seed["distance_m"]
    assert round(s["max_roll_deg"], 3) == seed["max_roll_deg"]
    assert round(s["max_pitch_deg"], 3) == seed["max_pitch_deg"]
    assert round(s["z_range_m"][1], 4) == seed["z_range_m"][1]
    assert abs(s["z_range_m"][0] - seed["z_range_m"][0]) < 5e-5  # 4e-5 off, as the study found
    assert s["off_map_steps"] == 0


def test_the_seed_steering_is_the_saturated_integral_of_the_rate():
    t = np.linspace(0.0, 30.0, 300001)
    d = demo.seed_steering(t)
    # reference: a fine saturated Euler integration of 0.5 sin(2 pi 0.15 t)
    ref = np.empty_like(t)
    x = 0.0
    for k, tk in enumerate(t):
        ref[k] = x
        if k + 1 < len(t):
            x = min(max(x + 0.5 * np.sin(2 * np.pi * 0.15 * tk) * (t[k + 1] - tk),
                        -np.pi / 4), np.pi / 4)
    assert np.abs(d - ref).max() < 1e-4
    assert d.max() == np.pi / 4  # it reaches the limit and holds there


def test_the_vehicle_is_drawn_at_its_pose():
    from offroad_env import husky
    from offroad_env.drawing.animation import vehicle_polygons
    v = husky()
    polys = vehicle_polygons(v, (1.0, 2.0, 3.0), 0.0, 0.0, 0.0)
    assert len(polys) == 6 + 4  # the chassis box's faces and the four wheels
    hubs = [p.mean(0) for p in polys[6:]]
    # base_link -> hubs: the rear axle 0.256 m back and 0.0328 m up; wheels at +-track/2
    want = [(1.0 + x - 0.256, 2.0 + y, 3.0 + 0.0328) for x, y in v.wheel_positions]
    assert np.allclose(hubs, want, atol=1e-9)
    # turned by yaw = 90 deg, the front wheels sit at +y
    turned = vehicle_polygons(v, (0.0, 0.0, 0.0), np.pi / 2, 0.0, 0.0)
    assert turned[6].mean(0)[1] > 0.2 and abs(turned[6].mean(0)[0] + v.track_width / 2) < 1e-9


def _utm_map(z0=150.0):
    """A 40 m perlin map placed at UTM-like coordinates with heights near ``z0`` m."""
    hm = terrain.make_heightmap(terrain.PerlinConfig(), 0, dtype=torch.float64)
    return hm.translated(500_020.0, 4_100_020.0, z0)


def test_the_drive_logs_world_coordinates_on_a_map_far_from_the_origin():
    """A map at UTM coordinates, heights near 150 m: the simulator runs in a frame at the map's
    centre (z origin 128 m), and the log must be moved back to the world (issue 27, item 1)."""
    hm = _utm_map()
    log = demo.drive(hm, t_end=1.0)
    assert abs(log["x"][0] - 500_020.0) < 1.0 and abs(log["y"][0] - 4_100_020.0) < 0.05
    # base_link rests on the ground: its z is the ground's height plus a hub height, in world
    ground = float(hm.height(torch.tensor(log["x"][0]), torch.tensor(log["y"][0])))
    assert 0.0 < log["z"][0] - ground < 0.5
    assert 0.0 < log["axle_z"][0] - ground < 0.5
    # the same drive on the map at the origin: the same shape, shifted by the placement
    ref = demo.drive(hm.translated(-500_020.0, -4_100_020.0, 0.0), t_end=1.0)
    assert np.allclose(log["z"], ref["z"], atol=1e-6)
    assert np.allclose(log["x"] - 500_020.0, ref["x"], atol=1e-6)


def test_the_demo_starts_at_the_map_centre_and_names_a_start_off_the_map(tmp_path):
    """Issue 27, item 2: a UTM map no longer fails with 'no spawn with a goal'; the drive starts
    at the centre, and a start off the map is refused with the map's bounds."""
    hm = _utm_map()
    terrain.save(hm, tmp_path / "utm.npy")
    rep = demo.run(tmp_path / "out", envs=2, steps=2, terrain_spec=str(tmp_path / "utm.npy"),
                   plots=False, duration=1.0)
    assert rep["options"]["start"] == [500_020.0, 4_100_020.0, 0.0]
    assert 149 < rep["drive"]["four_wheel"]["z_range_m"][0] < 152
    with pytest.raises(ValueError, match=r"start_pose row 0 at world \(0.00, 0.00\) m is off "
                                         r"the map, which covers x \[500000.00, 500040.00\]"):
        demo.run(tmp_path / "out2", envs=2, steps=2, terrain_spec=str(tmp_path / "utm.npy"),
                 plots=False, duration=1.0, start=(0.0, 0.0))
    with pytest.raises(ValueError, match="start must be finite"):
        demo.run(tmp_path / "out3", terrain_spec="peaks", plots=False, start=(1.0,))
