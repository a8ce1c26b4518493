"""Every method on flat ground, and the four-wheel seed's formulas on planes and signs."""

import math

import pytest
import torch

from offroad_env.physics.ground import four_wheel, rigid_contact
from offroad_env.physics.vehicle import Vehicle, eight_wheel_rover, husky, six_wheel_rover

from ground_util import F64, G, check_equilibrium, flat_map, plane_map


@pytest.mark.parametrize("method", ["four_wheel", "plane", "drop"])
@pytest.mark.parametrize("make", [husky, six_wheel_rover, eight_wheel_rover])
def test_flat_ground(method, make):
    v = make()
    if make is husky:  # symmetric layout for the m g / K check
        v = Vehicle(wheel_base=v.wheel_base, track_width=v.track_width,
                    wheel_radius=v.wheel_radius, mass=v.mass, com=(v.wheel_base / 2, 0, 0.1),
                    inertia_roll=v.inertia_roll, inertia_pitch=v.inertia_pitch,
                    rear_axle_pose=v.rear_axle_pose)
    hm = flat_map(height=1.25)
    x = torch.tensor([0.0, 2.0, -3.0], dtype=F64)
    yaw = torch.tensor([0.0, 1.0, -2.5], dtype=F64)
    if method == "four_wheel":
        res = four_wheel(v, hm, x, x, yaw)
    else:
        res = rigid_contact(v, hm, x, x, yaw, method=method)
    torch.testing.assert_close(res.roll, torch.zeros(3, dtype=F64), atol=1e-9, rtol=0)
    torch.testing.assert_close(res.pitch, torch.zeros(3, dtype=F64), atol=1e-9, rtol=0)
    torch.testing.assert_close(res.yaw, yaw)
    torch.testing.assert_close(res.position[:, 2], torch.full((3,), 1.25 + v.wheel_radius,
                                                              dtype=F64), atol=1e-9, rtol=0)
    K = v.num_wheels
    if v.com[0] == v.wheel_base / 2 and v.com[1] == 0:
        torch.testing.assert_close(res.normal_force, torch.full((3, K), v.mass * G / K,
                                                                dtype=F64), rtol=1e-6, atol=1e-6)
    assert res.contact.all() and res.converged.all()
    check_equilibrium(res, v)


def test_wheel_radius_zero_puts_the_frame_on_the_ground():
    v = Vehicle(wheel_radius=0.0)
    hm = flat_map(0.5)
    for res in (four_wheel(v, hm, 0.0, 0.0, 0.3), rigid_contact(v, hm, 0.0, 0.0, 0.3)):
        assert abs(res.position[0, 2].item() - 0.5) < 1e-12


# ------------------------------------------------------------------ inclined planes
SLOPES = [(0.2, 0.0), (0.0, 0.3), (-0.25, 0.15), (0.4, -0.3)]
YAWS = [0.0, 0.7, -2.0, math.pi]


@pytest.mark.parametrize("a, b", SLOPES)
def test_four_wheel_on_planes_gives_the_seed_formulas(a, b):
    v = husky()
    hm = plane_map(a, b, 0.3)
    yaw = torch.tensor(YAWS, dtype=F64)
    x = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=F64)
    y = torch.tensor([1.0, 0.0, -2.0, 3.0], dtype=F64)
    res = four_wheel(v, hm, x, y, yaw)
    a_h = a * torch.cos(yaw) + b * torch.sin(yaw)   # slope along the heading
    b_l = -a * torch.sin(yaw) + b * torch.cos(yaw)  # slope to the left
    # z_rear - z_front = -a' L, z_left - z_right = b' T on a plane
    torch.testing.assert_close(res.pitch, torch.atan(-a_h))
    torch.testing.assert_close(res.roll, torch.atan(b_l))
    # R is Rz Ry Rx of those angles
    from offroad_env.physics.rotations import rot_zyx
    torch.testing.assert_close(res.rotation, rot_zyx(yaw, res.pitch, res.roll))
    # the rear-axle origin: the wheel radius along the body z axis above the rear contact
    contact = torch.stack((x, y, a * x + b * y + 0.3), 1)
    torch.testing.assert_close(res.position, contact + v.wheel_radius * res.rotation[:, :, 2])


def test_four_wheel_lifts_along_the_body_z_axis_on_a_side_slope():
    # heading +x across a side slope z = b y: roll = atan(b), and the hub sits r along the
    # tilted body z, i.e. r (0, -sin roll, cos roll) above the contact point
    v = husky()
    b = 0.5
    res = four_wheel(v, plane_map(0.0, b, 0.0), torch.tensor([0.0], dtype=F64),
                     torch.tensor([1.0], dtype=F64), torch.tensor([0.0], dtype=F64))
    roll = math.atan(b)
    r = v.wheel_radius
    want = [0.0, 1.0 - r * math.sin(roll), b * 1.0 + r * math.cos(roll)]
    assert res.position[0].tolist() == pytest.approx(want, abs=1e-12)


def test_signs_positive_roll_lifts_left_positive_pitch_nose_down():
    v = husky()
    left_up = plane_map(0.0, 0.3, 0.0)  # rises towards +y: the left side at yaw 0
    nose_down = plane_map(-0.3, 0.0, 0.0)  # falls towards +x: ahead at yaw 0
    for fn in (four_wheel, rigid_contact):
        r1 = fn(v, left_up, 0.0, 0.0, 0.0)
        assert r1.roll.item() > 0 and abs(r1.pitch.item()) < 1e-12
        assert (r1.rotation[0] @ torch.tensor([0.0, 1.0, 0.0], dtype=F64))[2] > 0
        r2 = fn(v, nose_down, 0.0, 0.0, 0.0)
        assert r2.pitch.item() > 0
        assert (r2.rotation[0] @ torch.tensor([1.0, 0.0, 0.0], dtype=F64))[2] < 0


def test_base_link_pose_through_the_rear_axle_transform():
    v = husky()
    hm = plane_map(0.1, -0.2, 0.0)
    res = four_wheel(v, hm, 1.0, 2.0, 0.5)
    # base_link = T_rear @ inv(rear_axle_pose): base origin sits at (0.256, 0, -0.0328) in the
    # rear-axle frame
    expected = res.position[0] + res.rotation[0] @ torch.tensor([0.256, 0.0, -0.0328], dtype=F64)
    torch.testing.assert_close(res.base_position[0], expected)
    torch.testing.assert_close(res.base_rotation, res.rotation)
    flat = four_wheel(v, flat_map(0.0), 0.0, 0.0, 0.0)
    assert abs(flat.base_position[0, 2].item() - (0.1651 - 0.0328)) < 1e-12
