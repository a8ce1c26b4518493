"""Friction before roll: the rc_truck (Ackermann, every wheel driven through the electronic
differential) in a steady flat turn of R = 2.04 m, its speed ramped at 0.25 m/s^2.

The tyres are Coulomb (a friction coefficient that does not change with load), so a car whose
tyres hold tips where its own tilting table does, at ``a_y = g tan(beta_tip)``, and one whose
tyres give way first slides at ``mu g``. References: the rigid closed form ``t / h`` on the
model made rigid (no tyre width, a sag of 0.01 r), and, at the default geometry, the compliant
tilt-table angle that ``test_rigid_body`` holds the tilting table to (``compliant_side_tip``).

Each turn is driven through the public simulator (float64); the lateral acceleration is the
step's mean acceleration of the centre of mass along the body's y axis.
"""

import dataclasses
import math

import pytest

from offroad_env.physics import vehicle as vehicles
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.physics.vehicle import rc_truck
from test_rigid_body import G, _turn, compliant_side_tip

R_TURN, RAMP, MAX_SPEED, SECONDS = 2.04, 0.25, 8.0, 36.0


def _ramped_turn(vehicle_name, p):
    """Drive the turn; returns ``(a_y / g when both inside wheels are off the ground (None:
    never), the highest 1 s mean of the horizontal acceleration / g, the end reason (None:
    none))``."""
    v = vehicles.preset(vehicle_name)
    steer = math.atan(v.wheel_base / R_TURN) / p.max_steer
    dt = 0.05
    steps = int(SECONDS / dt)

    def action(f):
        return [min(0.3 + RAMP * f * SECONDS, MAX_SPEED) / MAX_SPEED, steer]

    light = 0.02 * v.mass * G / 4
    lifted, a_h, reason = None, [], None
    for a_y, ah, loads, reason in _turn(vehicle_name, p, action, SECONDS, MAX_SPEED):
        a_h.append(ah)
        if lifted is None and float(loads[0]) < light and float(loads[2]) < light:
            lifted = a_y / G  # the inside wheels: front left (0), rear left (2)
    held = max(sum(a_h[i:i + 20]) / 20 for i in range(max(1, len(a_h) - 20)))
    assert len(a_h) <= steps
    return lifted, held / G, (reason if reason else None)


@pytest.fixture
def rigid_truck(monkeypatch):
    """The rc_truck with no tyre width, registered as a preset (a config names its vehicle)."""
    monkeypatch.setitem(vehicles.PRESETS, "rc_truck_rigid", lambda: dataclasses.replace(
        rc_truck(), wheel_width=0.0, name="rc_truck_rigid"))
    return "rc_truck_rigid"


@pytest.mark.slow
def test_made_rigid_it_rolls_at_g_t_over_h(rigid_truck):
    # mu 1.5 > t / h = 1.25: both inside wheels lift at a_y = g t / h within 3 % and the
    # episode ends as a tip-over. The stiff springs need a short substep (the stable range
    # check refuses 12.5 ms)
    v = rc_truck()
    p = RigidBodyParams(mu=1.5, steering="ackermann", sag=0.01 * v.wheel_radius,
                        max_substep=0.0017)
    lifted, _, reason = _ramped_turn(rigid_truck, p)
    t_over_h = (v.track_width / 2) / (v.wheel_radius + v.com[2])
    assert lifted == pytest.approx(t_over_h, rel=0.03), (lifted, t_over_h)
    assert reason == 1  # EndReason.TIP_OVER


@pytest.mark.slow
def test_on_mu_1_5_it_rolls_where_its_tilt_table_tips():
    # mu 1.5 is above tan(beta_tip) = 1.36 (its own tilting table's 53.7 deg): the tyres hold
    # and it rolls, at a_y within 10 % of g tan(beta_tip). (Before the contact normal was the
    # ground's, the body's roll tilted the tyres' friction cones with it and it slid at 1.28 g
    # instead: tan(atan(1.5) - 4 deg).)
    want = math.tan(math.radians(compliant_side_tip(rc_truck())))
    lifted, _, reason = _ramped_turn("rc_truck", RigidBodyParams(mu=1.5, steering="ackermann"))
    assert reason == 1, (lifted, reason)
    assert lifted == pytest.approx(want, rel=0.10), (lifted, want)


@pytest.mark.slow
def test_on_mu_1_0_it_slides_at_mu_g_and_never_rolls():
    lifted, held, reason = _ramped_turn("rc_truck", RigidBodyParams(mu=1.0, steering="ackermann"))
    assert held == pytest.approx(1.0, rel=0.10), held
    assert reason is None and lifted is None, (reason, lifted)
