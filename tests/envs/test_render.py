"""Rendered frames on real maps (issue 27, item 11): the follow view, the vehicle to scale with
a least size, holes in a colour no vehicle uses, the world position in the label."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env import OffroadEnv, data_file
from offroad_env.drawing.render import MIN_VEHICLE_PX

VEHICLE = (230, 60, 40)


def _pixels(frame, colour):
    return int((frame == np.array(colour, dtype=np.uint8)).all(-1).sum())


def _env(**kw):
    env = OffroadEnv(render_mode="rgb_array", **kw)
    env.reset(seed=0)
    return env


def test_a_dem_renders_a_window_that_follows_the_vehicle():
    # the SRTM window: 9.9 x 12.3 km at 24.6 m; the Husky (0.99 m) would be 0.04 px on it
    env = _env(terrain=str(data_file("srtm1_n37w123_crop401.tif")))
    assert env._renderer.resolved_view() == "follow"
    frame = env.render()
    n = _pixels(frame, VEHICLE)
    # drawn at its least size: 8 px long, its width in proportion (the Husky is 0.99 x 0.67 m)
    v = env.sim.vehicle
    length = max(p[0] for p in v.wheel_positions) - min(p[0] for p in v.wheel_positions) \
        + 2 * v.wheel_radius
    width = max(p[1] for p in v.wheel_positions) - min(p[1] for p in v.wheel_positions)
    want = MIN_VEHICLE_PX ** 2 * width / length
    assert 0.3 * want < n < 2.0 * want
    # the whole map, asked for: the vehicle is still drawn at the least size
    env2 = _env(terrain=str(data_file("srtm1_n37w123_crop401.tif")), render_view="map")
    assert 0.3 * want < _pixels(env2.render(), VEHICLE) < 2.0 * want


def test_the_follow_window_is_to_scale():
    # a 10 m window over 480 px: 48 px per metre, the Husky's footprint 0.99 x 0.67 m -> ~1500 px
    env = _env(terrain=terrain.FlatConfig(size=(30.0, 30.0), resolution=(0.25, 0.25)),
               render_view="follow", render_window=10.0)
    frame = env.render()
    assert frame.shape[:2] == (320, 320)
    v = env.sim.vehicle
    xs = [p[0] for p in v.wheel_positions]
    ys = [p[1] for p in v.wheel_positions]
    area_m2 = (max(xs) - min(xs) + 2 * v.wheel_radius) * (max(ys) - min(ys))
    want = area_m2 * (319 / 10.0) ** 2
    assert abs(_pixels(frame, VEHICLE) - want) < 0.15 * want
    # off the map's edge the window is grey, not terrain
    env.sim.state.x[0] = 14.0
    assert _pixels(env.render(), (90, 90, 90)) > 0


def test_holes_are_drawn_in_a_colour_no_vehicle_uses():
    hm = terrain.make_heightmap(terrain.HolesConfig(size=(30.0, 30.0), resolution=(0.25, 0.25),
                                                    count=12), 0)
    env = _env(terrain=hm, render_view="map")
    frame = env.render()
    assert terrain.HOLE_COLOUR != VEHICLE
    assert _pixels(frame, terrain.HOLE_COLOUR) > 0 and _pixels(frame, VEHICLE) > 0


def test_the_auto_view_keeps_the_whole_map_where_the_vehicle_shows():
    env = _env()  # the 40 m peaks map at 0.2 m: the Husky is ~5 px per metre
    assert env._renderer.resolved_view() == "map"


@pytest.mark.parametrize("kw, match", [({"render_view": "chase"}, "render_view must be one of"),
                                       ({"render_window": 0.0}, "render_window must be a positive"),
                                       ({"render_window": math.nan}, "render_window")])
def test_bad_render_options_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        OffroadEnv(**kw)
