"""Ground following against closed forms, equilibrium laws and a second method."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env.ground import four_wheel, place, rigid_contact, support_forces
from offroad_env.vehicle import Vehicle, eight_wheel_rover, husky, six_wheel_rover

F64 = torch.float64
G = 9.81


def plane_map(a, b, c, size=20.0, res=0.25):
    cfg = terrain.PlaneConfig(size=(size, size), resolution=res, slope_x=a, slope_y=b, height=c)
    return terrain.make_heightmap(cfg, dtype=F64)


def flat_map(height=0.0, size=20.0, res=0.25):
    return terrain.make_heightmap(terrain.FlatConfig(size=(size, size), resolution=res,
                                                     height=height), dtype=F64)


def rough_map(seed=0, amplitude=0.4):
    cfg = terrain.PerlinConfig(size=(30.0, 30.0), resolution=0.1, octaves=3, frequency=0.15,
                               amplitude=amplitude)
    return terrain.make_heightmap(cfg, seed, dtype=F64)


def check_equilibrium(res, vehicle, g=G, d_eps=0.01, gap_tol=1e-6, rel=1e-6):
    """The laws a rest must satisfy: forces hold the weight, moments about the CoM vanish, no
    force is negative, no wheel is below the terrain, loaded wheels are within d_eps."""
    f = res.normal_force
    W = vehicle.mass * g
    torch.testing.assert_close(f.sum(1), torch.full_like(f[:, 0], W), rtol=rel, atol=rel * W)
    com = res.position + (res.rotation @ torch.tensor(vehicle.com, dtype=F64))
    lever = res.wheel_position[..., :2] - com[:, None, :2]
    moment = (f.unsqueeze(-1) * lever).sum(1)  # (N, 2): moments of vertical forces about the CoM
    assert moment.abs().max() <= rel * W * 10, moment.abs().max()
    assert (f >= 0).all()
    assert (res.gap >= -gap_tol).all(), res.gap.min()
    loaded = f > 1e-9 * W
    assert (res.gap[loaded] <= d_eps + gap_tol).all()
    assert res.stable.all()


# ------------------------------------------------------------------ vehicle
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


# ------------------------------------------------------------------ flat ground
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
    torch.testing.assert_close(res.position[:, 2], a * x + b * y + 0.3 + v.wheel_radius)
    # R is Rz Ry Rx of those angles
    from offroad_env.rotations import rot_zyx
    torch.testing.assert_close(res.rotation, rot_zyx(yaw, res.pitch, res.roll))


def test_matmul3_and_matvec3_equal_the_matrix_product():
    from offroad_env.rotations import matmul3, matvec3
    g = torch.Generator().manual_seed(0)
    A = torch.randn(5, 2, 3, 3, dtype=F64, generator=g)
    B = torch.randn(2, 3, 3, dtype=F64, generator=g)
    v = torch.randn(5, 1, 3, dtype=F64, generator=g)
    torch.testing.assert_close(matmul3(A, B), A @ B)
    torch.testing.assert_close(matvec3(A, v), (A @ v.unsqueeze(-1)).squeeze(-1))


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


# ------------------------------------------------------------------ a step under one wheel
def step_under_front_left(v, height):
    """Flat ground with a raised block under the FL wheel of a vehicle at the origin, yaw 0."""
    hm = flat_map(0.0, size=10.0, res=0.01)
    h = hm.heights.clone()
    X, Y = np.meshgrid(hm.x_coords().numpy(), hm.y_coords().numpy())
    fl = np.asarray(v.wheel_positions[0])
    block = (np.abs(X - fl[0]) < 0.15) & (np.abs(Y - fl[1]) < 0.15)
    h[torch.from_numpy(block)] = height
    return terrain.HeightMap(h, hm.resolution, dtype=F64)


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
def off_centre(v):
    """The vehicle with its centre of mass moved off the diagonals' crossing and lowered."""
    return Vehicle(wheel_base=v.wheel_base, track_width=v.track_width,
                   wheel_radius=v.wheel_radius, wheel_positions=v.wheel_positions, mass=v.mass,
                   com=(0.35 * v.wheel_base, 0.12 * v.track_width, 0.0),
                   inertia_roll=v.inertia_roll, inertia_pitch=v.inertia_pitch)


# Symmetric presets balance on a diagonal or an axle (the wobbly table) at most random poses, so
# few of their rests are unique; moving the centre of mass off the crossing makes most unique.
@pytest.mark.parametrize("make, min_unique", [
    (husky, 0), (six_wheel_rover, 0), (eight_wheel_rover, 0),
    (lambda: off_centre(husky()), 6), (lambda: off_centre(six_wheel_rover()), 4)])
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
    assert ok.sum() >= min_unique, ok
    # the drop treats wheels within d_eps as touching, so the two may differ by about d_eps in
    # height and d_eps / (wheel spacing) in angle
    span = min(v.track_width, v.wheel_base / 2)
    torch.testing.assert_close(fast.position[ok], ref.position[ok], atol=d_eps, rtol=0)
    torch.testing.assert_close(fast.ypr[ok], ref.ypr[ok], atol=2 * d_eps / span, rtol=0)
    torch.testing.assert_close(fast.normal_force[ok], ref.normal_force[ok], atol=1e-3 * W, rtol=0)
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


# ------------------------------------------------------------------ holes, off map, stacks
@pytest.mark.parametrize("method", ["four_wheel", "rigid_contact"])
def test_hole_under_a_wheel_is_flagged_never_nan(method):
    v = husky()
    hm = flat_map(0.0, size=10.0, res=0.05)
    h = hm.heights.clone()
    X, Y = np.meshgrid(hm.x_coords().numpy(), hm.y_coords().numpy())
    fl = np.asarray(v.wheel_positions[0])
    h[torch.from_numpy((np.abs(X - fl[0]) < 0.2) & (np.abs(Y - fl[1]) < 0.2))] = float("nan")
    holey = terrain.HeightMap(h, hm.resolution, dtype=F64)
    res = place(method, v, holey, torch.tensor([0.0, 3.0], dtype=F64),
                torch.tensor([0.0, 3.0], dtype=F64), torch.zeros(2, dtype=F64))
    assert res.hole.tolist() == [True, False]
    assert res.wheel_hole[0].tolist() == [True, False, False, False]
    for name in ("position", "rotation", "ypr", "gap", "normal_force", "ground_height"):
        assert torch.isfinite(getattr(res, name)).all(), name
    assert res.normal_force[0, 0] == 0.0  # no support from a hole


@pytest.mark.parametrize("method", ["four_wheel", "rigid_contact"])
def test_off_map_is_flagged(method):
    v = husky()
    hm = flat_map(0.0, size=4.0)
    res = place(method, v, hm, torch.tensor([0.0, 1.9, -2.5], dtype=F64),
                torch.tensor([0.0, 0.0, -2.5], dtype=F64), torch.zeros(3, dtype=F64))
    assert res.off_map.tolist() == [False, True, True]
    assert torch.isfinite(res.position).all()


@pytest.mark.parametrize("method", ["four_wheel", "rigid_contact"])
def test_batched_over_a_stack_of_maps(method):
    v = husky()
    maps = terrain.HeightMap.stack([flat_map(float(k)) for k in range(3)])
    res = place(method, v, maps, torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64),
                torch.zeros(3, dtype=F64), map_index=torch.tensor([2, 0, 1]))
    torch.testing.assert_close(res.position[:, 2], torch.tensor([2.0, 0.0, 1.0], dtype=F64)
                               + v.wheel_radius)


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


def test_support_forces_release_a_wheel_that_would_pull():
    # four wheels on a unit square, CoM at (0.9, 0.5): a min-norm solution would pull on the
    # far wheels; releasing gives two-wheel support only if it balances.
    wx = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=F64)
    wy = torch.tensor([[1.0, 0.0, 1.0, 0.0]], dtype=F64)
    one = torch.ones(1, 4, dtype=torch.bool)
    f, stable = support_forces(wx, wy, torch.tensor([0.9], dtype=F64),
                               torch.tensor([0.5], dtype=F64), one, 100.0)
    assert (f >= 0).all() and stable.all()
    torch.testing.assert_close(f.sum(), torch.tensor(100.0, dtype=F64))
    # CoM outside the support polygon: no non-negative solution
    _, unstable = support_forces(wx, wy, torch.tensor([1.5], dtype=F64),
                                 torch.tensor([0.5], dtype=F64), one, 100.0)
    assert not unstable.any()


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
