"""The task's termination predicates, static tip limits and end reasons (closed forms), and the
Task on a simulator: what it owns and what one step of it reports."""

import math

import pytest
import torch

from offroad_env.task import task as tasks
from offroad_env.task.task import EndReason
from offroad_env.physics.vehicle import Vehicle, husky


def test_tip_over_predicate_by_limits_and_by_lost_support():
    roll = torch.tensor([0.1, 1.0, 0.1, 0.1])
    pitch = torch.tensor([0.1, 0.1, -1.0, 0.1])
    assert tasks.tipped_over(roll, pitch, 0.9, 0.9).tolist() == [False, True, True, False]
    lost = torch.tensor([False, False, False, True])
    assert tasks.tipped_over(roll, pitch, 0.9, 0.9, lost).tolist() == [False, True, True, True]


def test_static_tip_limits_are_atan_of_half_track_and_axle_distance_over_com_height():
    v = Vehicle(wheel_base=1.0, track_width=0.8, wheel_radius=0.1, com=(0.5, 0.0, 0.3))
    roll, pitch = tasks.static_tip_limits(v)
    assert roll == pytest.approx(math.atan2(0.4, 0.4))
    assert pitch == pytest.approx(math.atan2(0.5, 0.4))
    assert 54 < math.degrees(tasks.static_tip_limits(husky())[0]) < 57


def test_end_reason_codes_and_the_precedence_of_simultaneous_conditions():
    b = lambda *v: torch.tensor(v)  # noqa: E731
    # a hole (or the map's edge) tilts the body: the cause is reported, not the tip-over
    reason = tasks.end_reason(goal=b(True, True, True, True, False),
                              tipped=b(False, True, True, True, False),
                              off_map=b(False, False, True, True, False),
                              hole=b(False, False, False, True, False))
    assert reason.tolist() == [EndReason.GOAL_REACHED, EndReason.TIP_OVER, EndReason.OFF_MAP,
                               EndReason.HOLE, EndReason.NONE]
    assert reason.dtype == torch.int64
    # being stuck is the weakest: any other end that same step is the reason
    stuck = tasks.end_reason(goal=b(True, False, False), tipped=b(False, True, False),
                             off_map=b(False, False, False), hole=b(False, False, False),
                             stuck=b(True, True, True))
    assert stuck.tolist() == [EndReason.GOAL_REACHED, EndReason.TIP_OVER, EndReason.STUCK]


def test_end_reason_labels():
    assert [r.label for r in EndReason] == ["none", "tip_over", "off_map", "hole",
                                            "goal_reached", "time_limit", "stuck", "diverged"]
    assert tasks.REASONS[4] == "goal_reached" and EndReason(5).label == "time_limit"


# ----------------------------------------------------------------------------- the tip rule
def _on_plane(vehicle, ground, slope_x=0.0, slope_y=0.0, yaw=0.0, mu=2.0):
    """A simulator with one ``vehicle`` at rest at the origin of a plane ``z = slope_x x +
    slope_y y`` (float64; friction ``mu``, high enough not to slide first)."""
    import terrain
    from offroad_env import Simulator
    from offroad_env.sim.config import SimConfig, TaskConfig
    from offroad_env.physics.dynamics import UnicycleParams
    plane = terrain.PlaneConfig(size=(12.0, 12.0), resolution=(0.05, 0.05), slope_x=slope_x,
                                slope_y=slope_y)
    sim = Simulator(SimConfig(vehicle=vehicle, ground=ground, terrain=plane, num_maps=1,
                              dynamics_params=UnicycleParams(mu=mu),
                              task=TaskConfig(goal_distance=(1.0, 2.0), spawn_margin=1.0,
                                              tip_rule="force_angle")), 1,
                    dtype=torch.float64)
    sim.set_keys(torch.tensor([1]), torch.ones(1, dtype=torch.bool))
    sim.reset(torch.ones(1, dtype=torch.bool), torch.tensor([[0.0, 0.0, yaw]]))
    return sim


def _task_margin(sim, accel_b=None):
    st = sim.state
    m, demand = sim.task.margin(st.contact, accel_b, sim.maps, st.map_index)
    return float(m[0]), float(demand[0])


def _lever_arms(v):
    xs = [p[0] for p in v.wheel_positions]
    ys = [p[1] for p in v.wheel_positions]
    cx, cy, cz = v.com
    h = cz + v.wheel_radius
    return {"right": cy - min(ys), "left": max(ys) - cy, "rear": cx - min(xs),
            "front": max(xs) - cx}, h


@pytest.mark.parametrize("ground", ["four_wheel", "rigid_contact"])
@pytest.mark.parametrize("name", ["husky", "rc_truck"])
def test_on_a_side_slope_the_margin_reaches_zero_at_atan_t_over_h(name, ground):
    # mu = 2: the tyres hold past the tipping angle. The contact points lie a wheel radius
    # along the terrain normal from the hubs (straight down put it r sin(beta) downhill: the
    # margin reached zero near atan(t / (h - r)), 85 deg for the Husky instead of 56.5)
    from offroad_env.physics.vehicle import preset
    arm, h = _lever_arms(preset(name))
    tip = math.atan(arm["right"] / h)
    for beta_deg in (10.0, 30.0, math.degrees(tip) - 3.0, math.degrees(tip) + 2.0):
        beta = math.radians(beta_deg)
        sim = _on_plane(name, ground, slope_y=math.tan(beta))  # left up: tips to the right
        m, _ = _task_margin(sim)
        assert m == pytest.approx(tip - beta, abs=math.radians(0.5)), (beta_deg, m)


@pytest.mark.parametrize("ground", ["four_wheel", "rigid_contact"])
def test_pitching_up_or_down_a_slope_the_margin_reaches_zero_at_atan_l_over_h(ground):
    from offroad_env.physics.vehicle import preset
    arm, h = _lever_arms(preset("husky"))
    beta = math.radians(40.0)
    for yaw, side in ((0.0, "rear"), (math.pi, "front")):  # nose up: tips back; nose down
        sim = _on_plane("husky", ground, slope_x=math.tan(beta), yaw=yaw)
        m, _ = _task_margin(sim)
        want = min(math.atan(arm[side] / h) - beta, math.atan(min(arm["left"],
                                                                  arm["right"]) / h))
        assert m == pytest.approx(want, abs=math.radians(0.5)), (side, m, want)


@pytest.mark.parametrize("beta_deg", [15.0, 30.0])
def test_a_turn_on_a_side_slope_throwing_downhill_tips_at_g_t_over_h_cos_minus_sin(beta_deg):
    # a_y is the acceleration in the slope plane along the body's y axis (uphill, the inertial
    # force downhill): zero margin at a_y = g (t/h cos(beta) - sin(beta)); mu = 2 holds it
    from offroad_env.physics.vehicle import preset
    arm, h = _lever_arms(preset("husky"))
    beta = math.radians(beta_deg)
    sim = _on_plane("husky", "rigid_contact", slope_y=math.tan(beta))
    a_tip = 9.81 * (arm["right"] / h * math.cos(beta) - math.sin(beta))

    def margin(a_y):
        return _task_margin(sim, torch.tensor([[0.0, a_y, 0.0]], dtype=torch.float64))[0]
    assert margin(0.97 * a_tip) > 0 > margin(1.03 * a_tip)
    assert abs(margin(a_tip)) < math.radians(0.5)
