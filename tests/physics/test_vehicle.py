"""Vehicles: presets against the seed and the paper, validation, the rectangle's corners."""

import numpy as np
import pytest

from offroad_env.physics.vehicle import (Vehicle, eight_wheel_rover, husky, rectangle_corners,
                                 six_wheel_rover)


def test_presets_match_the_seed_and_the_paper():
    h = husky()
    assert (h.wheel_base, h.track_width, h.wheel_radius) == (0.5120, 0.5708, 0.1651)
    assert np.allclose(np.asarray(h.rear_axle_pose)[:3, 3], [-0.256, 0, 0.0328])
    assert 50 < h.mass < 60 and h.num_wheels == 4
    six = six_wheel_rover()
    assert six.mass == 500.0 and six.num_wheels == 6 and six.wheel_base == 1.5
    assert eight_wheel_rover().num_wheels == 8


@pytest.mark.parametrize("kw, match", [
    (dict(wheel_base=0.0), "wheel_base"),
    (dict(track_width=-1.0), "track_width"),
    (dict(wheel_radius=-0.1), "wheel_radius"),
    (dict(mass=float("nan")), "mass"),
    (dict(wheel_positions=((0, 0), (1, 0))), "K >= 3"),
    (dict(wheel_positions=((0, 0), (1, 0), (2, 0))), "collinear"),
    (dict(com=(0, 0)), "com"),
    (dict(rear_axle_pose=np.diag([2.0, 1, 1, 1]).tolist()), "rigid"),
    (dict(rear_axle_pose=np.full((4, 4), np.nan).tolist()), "finite"),
])
def test_vehicle_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        Vehicle(**kw)


def test_vehicle_is_frozen():
    v = husky()
    with pytest.raises(Exception):
        v.mass = 1.0


def test_rectangle_corners_are_the_seeds_order_and_the_default_layout():
    assert rectangle_corners(2.0, 1.0) == ((2.0, 0.5), (2.0, -0.5), (0.0, 0.5), (0.0, -0.5))
    v = Vehicle(wheel_base=2.0, track_width=1.0)
    assert v.wheel_positions == rectangle_corners(2.0, 1.0) and v.is_rectangle
    assert not six_wheel_rover().is_rectangle


def test_the_inertia_tensor_tyre_width_and_wheel_inertia_are_checked():
    from offroad_env.physics.vehicle import Vehicle
    with pytest.raises(ValueError, match="wheel_width must be a finite number >= 0"):
        Vehicle(wheel_width=-0.1)
    with pytest.raises(ValueError, match="wheel_inertia must be a finite number > 0"):
        Vehicle(wheel_inertia=0.0)
    with pytest.raises(ValueError, match="inertia must be a symmetric positive definite"):
        Vehicle(inertia=((1.0, 0.5, 0.0), (0.0, 2.0, 0.0), (0.0, 0.0, 3.0)))
    with pytest.raises(ValueError, match=r"inertia's diagonal \[1.0, 2.5\] must hold "
                                         r"inertia_roll 1.0 and inertia_pitch 2.0"):
        Vehicle(inertia=((1.0, 0.0, 0.0), (0.0, 2.5, 0.0), (0.0, 0.0, 3.0)))
    v = Vehicle(inertia=((1.0, 0.1, 0.0), (0.1, 2.0, 0.0), (0.0, 0.0, 3.0)))
    assert v.inertia[0] == (1.0, 0.1, 0.0)
