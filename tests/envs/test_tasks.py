"""The task's termination predicates, static tip limits and end reasons (closed forms), and the
Task on a simulator: what it owns and what one step of it reports."""

import math

import pytest
import torch

from offroad_env import tasks
from offroad_env.tasks import EndReason
from offroad_env.vehicle import Vehicle, husky


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


def test_end_reason_labels():
    assert [r.label for r in EndReason] == ["none", "tip_over", "off_map", "hole",
                                            "goal_reached", "time_limit"]
    assert tasks.REASONS[4] == "goal_reached" and EndReason(5).label == "time_limit"
