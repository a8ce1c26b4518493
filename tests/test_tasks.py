"""Reward terms, their weighted sum, termination predicates and end reasons on hand-made
quantities (closed forms, no simulator)."""

import dataclasses
import math

import pytest
import torch

from offroad_env import tasks
from offroad_env.tasks import EndReason, RewardWeights, StepQuantities
from offroad_env.vehicle import Vehicle, husky

F64 = torch.float64


def quantities(**kw) -> StepQuantities:
    t = lambda *v: torch.tensor(v, dtype=F64)  # noqa: E731
    base = dict(
        distance=t(3.0, 1.0), prev_distance=t(3.5, 0.5), reached=torch.tensor([False, True]),
        nav=True, body_velocity=torch.tensor([[0.8, 0.1, 0.2], [0.0, 0.0, -0.3]], dtype=F64),
        command=torch.tensor([[1.0, 0.0], [0.0, -0.3]], dtype=F64), roll=t(0.1, -0.2),
        pitch=t(0.3, 0.0), gyro_s=torch.tensor([[0.5, -1.0, 2.0], [0.0, 0.2, 0.0]], dtype=F64),
        action=torch.tensor([[1.0, 0.0], [0.5, -0.5]], dtype=F64),
        prev_action=torch.tensor([[0.0, 0.0], [0.5, 0.5]], dtype=F64),
        kappa=torch.tensor([[0.1, -0.1, 0.2, 0.0], [0.0, 0.0, 0.0, 0.4]], dtype=F64),
        torque=torch.tensor([[1.0, -2.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0]], dtype=F64),
        wheel_omega=torch.tensor([[2.0, 3.0, 1.0, -4.0], [1.0, 1.0, 1.0, 1.0]], dtype=F64),
        tipped=torch.tensor([True, False]), margin=t(0.1, 0.5), dt=0.05)
    base.update(kw)
    return StepQuantities(**base)


def test_every_weight_has_exactly_one_term_in_the_same_order():
    assert tuple(tasks.REWARD_TERMS) == tuple(f.name for f in dataclasses.fields(RewardWeights))


def test_each_reward_term_has_its_closed_form():
    r = tasks.reward_terms(quantities())
    exp = lambda v: torch.tensor(v, dtype=F64)  # noqa: E731
    torch.testing.assert_close(r["progress"], exp([0.5, -0.5]))
    torch.testing.assert_close(r["goal_reached"], exp([0.0, 1.0]))
    torch.testing.assert_close(r["tracking"], exp([math.exp(-0.04 / 0.25) + math.exp(-0.04 / 0.25),
                                                   2.0]))
    torch.testing.assert_close(r["tilt"], exp([0.01 + 0.09, 0.04]))
    torch.testing.assert_close(r["angular_rate"], exp([0.25 + 1.0, 0.04]))
    torch.testing.assert_close(r["action_rate"], exp([1.0, 1.0]))
    torch.testing.assert_close(r["slip"], exp([0.1, 0.1]))
    torch.testing.assert_close(r["energy"], exp([2.0 + 6.0 + 0.0 + 2.0, 0.0]))
    torch.testing.assert_close(r["tip_over"], exp([1.0, 0.0]))
    torch.testing.assert_close(r["stability"], exp([math.radians(20) - 0.1, 0.0]))
    torch.testing.assert_close(r["time"], exp([0.05, 0.05]))


def test_progress_counts_only_in_navigation_and_kinematic_models_spend_no_energy():
    r = tasks.reward_terms(quantities(nav=False, torque=None, wheel_omega=None))
    assert (r["progress"] == 0).all() and (r["energy"] == 0).all()


def test_reward_is_the_weighted_sum_of_the_terms():
    q = quantities()
    terms = tasks.reward_terms(q)
    w = RewardWeights(progress=2.0, goal_reached=5.0, tracking=0.5, tilt=-1.0, angular_rate=0.0,
                      action_rate=-0.1, slip=-0.2, energy=-0.01, tip_over=-7.0,
                      stability=-0.3, time=-0.5)
    expected = sum(weight * terms[name] for name, weight in w.items())
    torch.testing.assert_close(tasks.weighted_reward(terms, w), expected)


def test_tip_over_predicate_by_limits_and_by_lost_support():
    roll = torch.tensor([0.1, 1.0, 0.1, 0.1])
    pitch = torch.tensor([0.1, 0.1, -1.0, 0.1])
    assert tasks.tipped_over(roll, pitch, 0.9, 0.9).tolist() == [False, True, True, False]
    stable = torch.tensor([True, True, True, False])
    assert tasks.tipped_over(roll, pitch, 0.9, 0.9, stable).tolist() == [False, True, True, True]


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


def test_end_reason_labels():
    assert [r.label for r in EndReason] == ["none", "tip_over", "off_map", "hole",
                                            "goal_reached", "time_limit"]
    assert tasks.REASONS[4] == "goal_reached" and EndReason(5).label == "time_limit"
