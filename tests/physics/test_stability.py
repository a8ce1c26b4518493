"""The force-angle stability measure against its closed forms."""

import math

import pytest
import torch

from offroad_env import husky, rc_truck, six_wheel_rover
from offroad_env.physics.stability import body_acceleration, edge_table, force_angle_margin
from offroad_env.task.task import static_tip_limits

G = 9.81


def _rig(vehicle, roll=0.0, loaded=None):
    """Contact points (wheels on a plane rolled by ``roll`` about x) and CoM, float64."""
    pts = torch.tensor([(x, y, 0.0) for x, y in vehicle.wheel_positions], dtype=torch.float64)
    cx, cy, cz = vehicle.com
    com = torch.tensor([cx, cy, cz + vehicle.wheel_radius], dtype=torch.float64)
    c, s = math.cos(roll), math.sin(roll)
    R = torch.tensor([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=torch.float64)
    pts, com = pts @ R.T, R @ com
    k = len(vehicle.wheel_positions)
    load = torch.ones(1, k, dtype=torch.bool) if loaded is None else torch.tensor([loaded])
    return pts.unsqueeze(0), load, com.unsqueeze(0), R


def _margin(vehicle, accel_body=(0.0, 0.0, 0.0), roll=0.0, loaded=None):
    pts, load, com, R = _rig(vehicle, roll, loaded)
    acc = (R @ torch.tensor(accel_body, dtype=torch.float64)).unsqueeze(0)
    return float(force_angle_margin(pts, load, com, acc, G, edge_table(vehicle, "cpu")))


def _half_track_and_height(v):
    return min(max(y for _, y in v.wheel_positions) - v.com[1],
               v.com[1] - min(y for _, y in v.wheel_positions)), v.com[2] + v.wheel_radius


def test_at_rest_on_flat_ground_the_margin_is_the_static_roll_limit():
    v = husky()
    roll_limit, pitch_limit = static_tip_limits(v)
    assert _margin(v) == pytest.approx(min(roll_limit, pitch_limit), abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_lateral_acceleration_tips_at_half_track_over_height(sign):
    v = husky()
    t, h = _half_track_and_height(v)
    tip = G * t / h  # a_y / g = t / h
    for frac in (0.0, 0.5, 0.9, 1.0, 1.1):
        want = math.atan(t / h) - math.atan(frac * tip / G)
        if frac == 0.0:
            want = min(want, static_tip_limits(v)[1])
        assert _margin(v, (0.0, sign * frac * tip, 0.0)) == pytest.approx(want, abs=1e-9)
    assert _margin(v, (0.0, sign * 1.001 * tip, 0.0)) < 0
    assert _margin(v, (0.0, sign * 0.999 * tip, 0.0)) > 0


def test_a_side_slope_at_rest_tips_at_tan_beta_equal_half_track_over_height():
    v = husky()
    t, h = _half_track_and_height(v)
    beta = math.atan(t / h)
    for b in (0.2, 0.6, beta - 1e-3, beta + 1e-3):
        assert _margin(v, roll=b) == pytest.approx(math.atan(t / h) - b, abs=1e-9)
    assert _margin(v, roll=beta + 1e-3) < 0


def test_a_side_slope_and_a_lateral_acceleration_together():
    # net force in the body plane: (g sin beta + a_y) across, g cos beta down: tips at
    # (g sin beta + a_y) / (g cos beta) = t / h
    v = husky()
    t, h = _half_track_and_height(v)
    beta = 0.4
    a_tip = G * (t / h * math.cos(beta) - math.sin(beta))
    # positive roll lifts the left side: downhill is -y, and an acceleration to +y puts the
    # inertial force downhill too
    assert _margin(v, (0.0, a_tip * 0.999, 0.0), roll=beta) > 0
    assert _margin(v, (0.0, a_tip * 1.001, 0.0), roll=beta) < 0
    assert _margin(v, (0.0, a_tip, 0.0), roll=beta) == pytest.approx(0.0, abs=1e-9)


def test_a_six_wheel_rovers_polygon_and_an_unloaded_corner():
    v = six_wheel_rover()  # wheels FL, FR, ML, MR, RL, RR at x = 1.5, 0.75, 0; y = +-0.45
    h = v.com[2] + v.wheel_radius  # 0.45 m
    assert _margin(v) == pytest.approx(math.atan(0.45 / h), abs=1e-12)  # the side edges
    # FL unloaded: the polygon's left side runs ML -> RL and a diagonal FR -> ML; the CoM
    # (0.75, 0) lies 0.3375 / |(-0.75, 0.9)| from that diagonal
    d = 0.3375 / math.hypot(0.75, 0.9)
    assert _margin(v, loaded=[False, True, True, True, True, True]) == pytest.approx(
        math.atan(d / h), abs=1e-12)
    # only the left wheels (collinear): a support line the CoM is not over -> negative
    assert _margin(v, loaded=[True, False, True, False, True, False]) == pytest.approx(
        -math.atan(0.45 / h), abs=1e-12)


def test_body_acceleration_is_longitudinal_and_centripetal():
    prev = torch.tensor([[1.0, 0.0, 0.5]], dtype=torch.float64)
    now = torch.tensor([[1.2, 0.0, 0.5]], dtype=torch.float64)
    a = body_acceleration(now, prev, 0.1)
    assert a[0].tolist() == pytest.approx([2.0, 0.6, 0.0])  # dv/dt, v w


# ---------------------------------------------------------------- in the environment
def _circle(yaw_rate, vehicle="rc_truck", speed=5.0, steps=60, mu=2.0, **task):
    """Drive straight for 1 s (up to speed), then turn at ``yaw_rate`` on ground of friction
    ``mu``: (step of the tip-over after the turn began or None, end reason, last observation
    (roll, pitch, stability, traction))."""
    from offroad_env.physics.dynamics import UnicycleParams
    from offroad_env import OffroadVectorEnv, TaskConfig
    from offroad_env.sim.config import SimConfig
    import terrain
    cfg = SimConfig(vehicle=vehicle, max_speed=speed, max_yaw_rate=max(yaw_rate, 1e-3),
                    terrain=terrain.FlatConfig(size=(80.0, 80.0), resolution=(0.5, 0.5)),
                    num_maps=1, obs_terms=("roll_pitch", "stability", "traction"),
                    dynamics_params=UnicycleParams(mu=mu),
                    task=TaskConfig(goal_distance=(35.0, 35.0), spawn_margin=2.0,
                                    tip_rule="force_angle", **task))
    env = OffroadVectorEnv(num_envs=1, config=cfg, dtype=torch.float64)
    env.reset(seed=0, options={"start_pose": torch.tensor([[-30.0, -25.0, 0.0]])})
    for _ in range(20):
        _, _, term, _, _ = env.step(torch.tensor([[1.0, 0.0]], dtype=torch.float64))
        assert not bool(term[0])
    a = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    for k in range(steps):
        obs, r, term, trunc, info = env.step(a)
        if bool(term[0]):
            return k + 1, int(info["end_reason"][0]), obs
    return None, 0, obs


def test_the_rc_truck_tips_in_a_fast_turn_past_half_track_over_height_and_not_below():
    # mu = 2 > t/h = 1.25: the tyres hold, so the truck rolls over
    v = rc_truck()
    t, h = _half_track_and_height(v)
    tip = G * t / h / 5.0  # yaw rate at 5 m/s that tips it: 2.45 rad/s
    k, reason, _ = _circle(1.05 * tip)
    # EndReason.TIP_OVER, once the low-passed acceleration (0.2 s) passes the threshold and
    # the margin stays negative for the hold time (0.2 s)
    assert reason == 1 and k is not None and 10 <= k <= 40, k
    k, reason, obs = _circle(0.95 * tip, steps=100)
    assert k is None  # 5 % below the threshold it circles on
    want = math.atan(t / h) - math.atan(0.95 * tip * 5.0 / G)
    assert float(obs[0, 2]) == pytest.approx(want, abs=1e-6)  # the margin observed


def test_the_husky_never_tips_by_driving_on_flat_ground():
    k, reason, obs = _circle(1.0, vehicle="husky", speed=1.0, steps=150)
    assert k is None and float(obs[0, 2]) > math.radians(50)


def test_with_friction_below_t_over_h_no_turn_tips_a_vehicle_and_the_demand_shows_it():
    # mu = 0.8 < t/h (1.25 rc_truck, 1.51 Husky): the grip goes before the body could roll
    v = rc_truck()
    t, h = _half_track_and_height(v)
    for rate in (1.05, 2.0, 4.0):
        k, reason, obs = _circle(rate * G * t / h / 5.0, mu=0.8, steps=80)
        assert k is None, (rate, reason)
        demand = rate * G * t / h / G / 0.8  # |a_y| / (mu g) in the steady turn
        assert float(obs[0, 3]) == pytest.approx(demand, rel=1e-3)
        assert float(obs[0, 3]) > 1.0 and float(obs[0, 2]) > 0.0


def test_the_energy_margin_meets_its_closed_forms_static_and_rolling():
    # four contacts on level ground at (+-l, +-t), the centre of mass h above their centre:
    # the rise left over a side edge is sqrt(t^2 + h^2) - h; rolling about x at omega, the
    # side the roll lowers takes off (J_xx + m R^2) omega^2 / 2 over m g (R = sqrt(t^2 + h^2))
    import math
    from offroad_env.physics.stability import EdgeTable, energy_margin
    from offroad_env.physics.vehicle import Vehicle
    l, t, h, m, Jxx, g = 0.6, 0.3, 0.4, 50.0, 2.0, 9.81
    v = Vehicle(wheel_positions=((2 * l, t), (2 * l, -t), (0.0, t), (0.0, -t)),
                wheel_radius=0.1, mass=m, com=(l, 0.0, 0.3))
    table = EdgeTable(v)
    pts = torch.tensor([[[2 * l, t, 0.0], [2 * l, -t, 0.0], [0.0, t, 0.0], [0.0, -t, 0.0]]],
                       dtype=torch.float64)
    com = torch.tensor([[l, 0.0, h]], dtype=torch.float64)
    R = math.hypot(t, h)

    def about(a):
        return Jxx * a[..., 0] ** 2 + 5.0 * a[..., 1] ** 2 + 5.0 * a[..., 2] ** 2

    def margin(wx, wy=0.0, wz=0.0):
        w = torch.tensor([[wx, wy, wz]], dtype=torch.float64)
        return float(energy_margin(pts, com, w, about, m, table, g)[0])
    assert margin(0.0) == pytest.approx(R - h, rel=1e-12)
    assert margin(0.0, 0.0, 3.0) == pytest.approx(R - h, rel=1e-12)  # yaw: no tip
    for w in (0.5, -0.5):
        assert margin(w) == pytest.approx(R - h - 0.5 * (Jxx + m * R * R) * w * w / (m * g),
                                          rel=1e-12)
    w0 = math.sqrt(2 * m * g * (R - h) / (Jxx + m * R * R))  # just the energy to tip
    assert margin(w0) == pytest.approx(0.0, abs=1e-12)
    # past the edge (the centre of mass outside it): negative, the rise it has passed
    com[0, 1] = t + 0.1
    assert margin(0.0) < 0


def _margin_by_hand(plan, pts, loaded, com, force):
    """One env's force-angle margin in plain Python (float64, math.atan2 per edge): the support
    edges are the loaded pairs with every other loaded wheel on one side in plan view."""
    def sub(u, v):
        return [u[0] - v[0], u[1] - v[1], u[2] - v[2]]

    def dot(u, v):
        return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]

    def normal_part(v, a):
        k = dot(v, a)
        return [v[0] - k * a[0], v[1] - k * a[1], v[2] - k * a[2]]

    idx = [k for k in range(len(plan)) if loaded[k]]
    angles = []
    for i in idx:
        for j in idx:
            if i >= j:
                continue
            side = [(plan[j][0] - plan[i][0]) * (plan[k][1] - plan[i][1])
                    - (plan[j][1] - plan[i][1]) * (plan[k][0] - plan[i][0])
                    for k in idx if k not in (i, j)]
            if any(s > 1e-9 for s in side) and any(s < -1e-9 for s in side):
                continue  # wheels on both sides: a diagonal, not an edge
            a = sub(pts[j], pts[i])
            if any(s < -1e-9 for s in side):
                a = [-x for x in a]  # the polygon on the left of a
            n = math.sqrt(dot(a, a))
            a = [x / n for x in a]
            lv, fv = normal_part(sub(pts[i], com), a), normal_part(force, a)
            cr = [fv[1] * lv[2] - fv[2] * lv[1], fv[2] * lv[0] - fv[0] * lv[2],
                  fv[0] * lv[1] - fv[1] * lv[0]]
            c, d = dot(cr, a), dot(fv, lv)
            t = math.atan2(-c, d)
            if not any(abs(s) > 1e-9 for s in side):  # a support line: its worse side
                t = min(t, math.atan2(c, d))
            angles.append(t)
    return min(angles) if angles else -math.pi / 2


@pytest.mark.parametrize("make", [husky, rc_truck, six_wheel_rover])
def test_the_unrolled_margin_equals_a_per_env_reference_on_random_bodies(make):
    """The batched, unrolled margin against the definition written per env by hand: tilted,
    perturbed contacts, random loads (lines, points, none included), random net forces."""
    v = make()
    g = torch.Generator().manual_seed(3)
    n, k = 400, v.num_wheels
    plan = [(float(x), float(y)) for x, y in v.wheel_positions]
    pts = torch.tensor([(x, y, 0.0) for x, y in plan], dtype=torch.float64).expand(n, k, 3)
    pts = pts + 0.05 * torch.randn(n, k, 3, generator=g, dtype=torch.float64)
    loaded = torch.rand(n, k, generator=g) > 0.3
    com = torch.tensor([v.com[0], v.com[1], 0.3], dtype=torch.float64) + 0.05 * torch.randn(
        n, 3, generator=g, dtype=torch.float64)
    force = torch.tensor([0.0, 0.0, -G], dtype=torch.float64) + 4.0 * torch.randn(
        n, 3, generator=g, dtype=torch.float64)
    got = force_angle_margin(pts, loaded, com, torch.zeros(n, 3, dtype=torch.float64), G,
                             edge_table(v, "cpu"), force)
    want = torch.tensor([_margin_by_hand(plan, pts[e].tolist(), loaded[e].tolist(),
                                         com[e].tolist(), force[e].tolist()) for e in range(n)],
                        dtype=torch.float64)
    assert (loaded.sum(1) < 2).any() and (loaded.sum(1) == k).any()
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
