"""The rigid-contact methods (the plane method and the paper's drop) against closed forms, the
equilibrium laws and each other."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env.physics.ground import place, rigid_contact
from offroad_env.physics.vehicle import Vehicle, eight_wheel_rover, husky, six_wheel_rover

from ground_util import (F64, G, check_equilibrium, flat_map, off_centre,
                         plane_map, rough_map, step_under_front_left)


# ------------------------------------------------------------------ inclined planes
SLOPES = [(0.2, 0.0), (0.0, 0.3), (-0.25, 0.15), (0.4, -0.3)]
YAWS = [0.0, 0.7, -2.0, math.pi]


@pytest.mark.parametrize("method", ["plane", "drop"])
@pytest.mark.parametrize("a, b", SLOPES)
def test_rigid_contact_on_planes_has_the_exact_attitude(method, a, b):
    v = husky()
    hm = plane_map(a, b, -0.2)
    yaw = torch.tensor(YAWS, dtype=F64)
    x = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=F64)
    y = torch.tensor([1.0, 0.0, -2.0, 3.0], dtype=F64)
    res = rigid_contact(v, hm, x, y, yaw, method=method)
    a_h = a * torch.cos(yaw) + b * torch.sin(yaw)
    b_l = -a * torch.sin(yaw) + b * torch.cos(yaw)
    tol = 1e-9 if method == "plane" else 1e-5
    torch.testing.assert_close(res.pitch, -torch.atan(a_h), atol=tol, rtol=0)
    torch.testing.assert_close(res.roll, torch.atan(b_l / torch.sqrt(1 + a_h ** 2)), atol=tol,
                               rtol=0)
    assert (res.gap.abs() < 1e-4).all() and res.contact.all()  # all wheels touching
    # the hubs lie r above the plane, vertically (sphere wheels)
    hub = res.wheel_position
    torch.testing.assert_close(hub[..., 2] - v.wheel_radius, a * hub[..., 0] + b * hub[..., 1] - 0.2,
                               atol=1e-4 if method == "drop" else 1e-9, rtol=0)
    check_equilibrium(res, v, gap_tol=1e-4 if method == "drop" else 1e-9)


@pytest.mark.parametrize("method", ["plane", "drop"])
def test_step_under_one_wheel_three_wheels_carry_by_the_lever_rule(method):
    v = Vehicle(wheel_base=0.8, track_width=0.6, wheel_radius=0.1, mass=40.0,
                com=(0.5, -0.05, 0.1), inertia_roll=1.0, inertia_pitch=2.0)
    hm = step_under_front_left(v, 0.05)
    res = rigid_contact(v, hm, 0.0, 0.0, 0.0, method=method)
    f = res.normal_force[0]
    loaded = f > 1e-6
    # FL is raised: the upper hull splits along FL-RR; the CoM (right of the diagonal) lies in
    # triangle FL, FR, RR, and RL hangs in the air.
    assert loaded.tolist() == [True, True, False, True]
    assert res.gap[0, 2] > 0.01
    # lever rule: the forces are W times the barycentric coordinates of the CoM in the triangle
    # of the loaded contact points (horizontal projection).
    com = (res.position + res.rotation @ torch.tensor(v.com, dtype=F64))[0, :2].numpy()
    P = res.wheel_position[0, [0, 1, 3], :2].numpy()
    M = np.vstack([P.T, np.ones(3)])
    lam = np.linalg.solve(M, np.array([com[0], com[1], 1.0]))
    np.testing.assert_allclose(f[[0, 1, 3]].numpy(), v.mass * G * lam,
                               rtol=1e-6 if method == "plane" else 1e-3)
    check_equilibrium(res, v, gap_tol=1e-9 if method == "plane" else 1e-4)
    # the right side rests flat on the ground: the body rolls about it, left side up
    assert res.roll.item() > 0 and abs(res.pitch.item()) < 1e-9


# ------------------------------------------------------------------ the paper's vehicle
@pytest.mark.parametrize("method", ["plane", "drop"])
def test_six_wheel_500kg_forces_sum_to_4900N(method):
    v = six_wheel_rover()
    hm = rough_map(3, amplitude=0.3)
    rng = np.random.default_rng(0)
    n = 16
    x = torch.tensor(rng.uniform(-8, 8, n))
    y = torch.tensor(rng.uniform(-8, 8, n))
    yaw = torch.tensor(rng.uniform(-np.pi, np.pi, n))
    res = rigid_contact(v, hm, x, y, yaw, method=method, gravity=9.8)
    ok = res.stable & res.converged
    assert ok.float().mean() > 0.9
    torch.testing.assert_close(res.normal_force[ok].sum(1), torch.full((int(ok.sum()),), 4900.0,
                                                                        dtype=F64), rtol=1e-6, atol=1e-3)
    check_equilibrium(res[ok], v, g=9.8, gap_tol=1e-9 if method == "plane" else 1e-4)


# ------------------------------------------------------------------ plane vs drop


@pytest.mark.parametrize("make, min_unique", [
    (husky, None), (six_wheel_rover, 1),
    pytest.param(eight_wheel_rover, 5, marks=pytest.mark.slow),  # the drop of 8 wheels: slow
    (lambda: off_centre(husky()), 10), (lambda: off_centre(six_wheel_rover()), 15)])
def test_fast_plane_agrees_with_the_papers_drop(make, min_unique):
    v = make()
    hm = rough_map(1)
    rng = np.random.default_rng(1)
    n = 24
    x = torch.tensor(rng.uniform(-10, 10, n))
    y = torch.tensor(rng.uniform(-10, 10, n))
    yaw = torch.tensor(rng.uniform(-np.pi, np.pi, n))
    d_eps = 1e-4  # small, so that both methods load only wheels that really touch
    fast = rigid_contact(v, hm, x, y, yaw, method="plane", d_eps=d_eps)
    ref = rigid_contact(v, hm, x, y, yaw, method="drop", d_eps=d_eps)
    assert fast.converged.all() and ref.converged.float().mean() >= 0.9
    W = v.mass * G
    # unique rests: the same wheels loaded, each with a clear share of the weight
    def clear(res):
        f = res.normal_force
        return ((f == 0) | (f > 0.05 * W)).all(1)
    same = (fast.normal_force > 0) == (ref.normal_force > 0)
    ok = ref.converged & clear(fast) & clear(ref) & same.all(1)
    if min_unique is not None:
        assert int(ok.sum()) >= min_unique, ok
        # the drop treats wheels within d_eps as touching, so the two may differ by about d_eps
        # in height and d_eps / (wheel spacing) in angle
        span = min(v.track_width, v.wheel_base / 2)
        torch.testing.assert_close(fast.position[ok], ref.position[ok], atol=d_eps, rtol=0)
        torch.testing.assert_close(fast.ypr[ok], ref.ypr[ok], atol=2 * d_eps / span, rtol=0)
        torch.testing.assert_close(fast.normal_force[ok], ref.normal_force[ok], atol=1e-3 * W,
                                   rtol=0)
    # where they differ, both are rests of their own: the wobbly table
    check_equilibrium(fast, v, d_eps=d_eps)
    conv = ref.converged
    check_equilibrium(ref[conv], v, d_eps=d_eps, gap_tol=d_eps)  # the paper: touching within d_eps


def test_wobbly_table_two_rests_on_a_twisted_plane():
    # z = k x y twists the ground: a symmetric vehicle centred on it touches with all four wheels
    # only if the twist is zero; otherwise it balances on a diagonal.
    v = Vehicle(wheel_base=1.0, track_width=1.0, wheel_radius=0.0, mass=10.0, com=(0.5, 0.0, 0.0))
    hm0 = flat_map(0.0, size=6.0, res=0.05)
    X, Y = np.meshgrid(hm0.x_coords().numpy(), hm0.y_coords().numpy())
    hm = terrain.HeightMap(0.05 * (X - 0.5) * Y, hm0.resolution, dtype=F64)
    res = rigid_contact(v, hm, 0.0, 0.0, 0.0)
    f = res.normal_force[0]
    # the two high corners carry the weight: FL (1, .5) and RR (0, -.5) have z = +0.0125
    assert f[0] > 0.45 * v.mass * G and f[3] > 0.45 * v.mass * G
    check_equilibrium(res, v)


def test_drop_reports_iterations_honestly():
    v = husky()
    res = rigid_contact(v, rough_map(2), torch.zeros(4, dtype=F64), torch.arange(4.0, dtype=F64),
                        torch.zeros(4, dtype=F64), method="drop")
    assert res.converged.all()
    assert (res.iterations > 1).all() and (res.iterations < 2000).all()
    short = rigid_contact(v, rough_map(2), torch.zeros(4, dtype=F64),
                          torch.arange(4.0, dtype=F64), torch.zeros(4, dtype=F64),
                          method="drop", max_iter=2)
    assert not short.converged.any() and (short.iterations == 2).all()


def test_float32_default_and_unknown_method():
    hm = terrain.make_heightmap(terrain.PerlinConfig(size=(20.0, 20.0), resolution=0.1), 0)
    v = husky()
    res = rigid_contact(v, hm, torch.zeros(5), torch.linspace(-3, 3, 5), torch.zeros(5))
    assert res.position.dtype == torch.float32 and res.converged.all()
    res64 = rigid_contact(v, hm.to(dtype=F64), torch.zeros(5), torch.linspace(-3, 3, 5),
                          torch.zeros(5))
    torch.testing.assert_close(res.ypr.double(), res64.ypr, atol=1e-4, rtol=0)
    with pytest.raises(ValueError, match="method"):
        rigid_contact(v, hm, 0.0, 0.0, 0.0, method="lcp")
    with pytest.raises(ValueError, match="ground-following"):
        place("svd", v, hm, 0.0, 0.0, 0.0)


def test_closed_form_quad_path_equals_the_general_hull_search():
    v = husky()
    # the same wheels in another order: not the FL, FR, RL, RR rectangle, so the general path
    shuffled = Vehicle(wheel_base=v.wheel_base, track_width=v.track_width,
                       wheel_radius=v.wheel_radius,
                       wheel_positions=[v.wheel_positions[i] for i in (3, 1, 0, 2)],
                       mass=v.mass, com=v.com, inertia_roll=v.inertia_roll,
                       inertia_pitch=v.inertia_pitch, rear_axle_pose=v.rear_axle_pose)
    hm = rough_map(4)
    rng = np.random.default_rng(5)
    x, y = (torch.tensor(rng.uniform(-10, 10, 64)) for _ in range(2))
    yaw = torch.tensor(rng.uniform(-np.pi, np.pi, 64))
    a = rigid_contact(v, hm, x, y, yaw)
    b = rigid_contact(shuffled, hm, x, y, yaw)
    torch.testing.assert_close(a.position, b.position)
    torch.testing.assert_close(a.ypr, b.ypr)
    torch.testing.assert_close(a.normal_force[:, [3, 1, 0, 2]], b.normal_force)


def test_warm_start_converges_fast_and_keeps_the_rest():
    v = husky()
    hm = rough_map(6)
    rng = np.random.default_rng(7)
    x, y = (torch.tensor(rng.uniform(-10, 10, 256)) for _ in range(2))
    yaw = torch.tensor(rng.uniform(-np.pi, np.pi, 256))
    cold = rigid_contact(v, hm, x, y, yaw)
    assert cold.converged.float().mean() > 0.99
    # a small move from the previous rest, warm-started there, needs fewer iterations and lands
    # where the cold start lands (same rest) for unique rests
    warm = rigid_contact(v, hm, x + 0.01, y, yaw, init_roll=cold.roll, init_pitch=cold.pitch)
    ref = rigid_contact(v, hm, x + 0.01, y, yaw, max_iter=20)
    assert warm.converged.float().mean() > 0.99
    assert warm.iterations.float().mean() < 0.8 * cold.iterations.float().mean()
    same_side = (warm.normal_force > 0).eq(cold.normal_force > 0).all(1)
    assert same_side.float().mean() > 0.95  # the warm start stays on its side of a wobble
    unique = ((ref.normal_force == 0) | (ref.normal_force > 0.05 * v.mass * G)).all(1)
    ok = unique & warm.converged & same_side
    torch.testing.assert_close(warm.ypr[ok], ref.ypr[ok], atol=1e-6, rtol=0)
