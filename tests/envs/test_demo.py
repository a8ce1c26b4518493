"""The four-wheel seed's worked example, reproduced to its printed digits."""

import numpy as np
import torch

import terrain
from offroad_env import demo


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
    from offroad_env.animation import vehicle_polygons
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
