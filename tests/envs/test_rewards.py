"""The reward terms and their weighted sum on a hand-made step (closed forms, no simulator)."""

import dataclasses
import math
from types import SimpleNamespace

import torch

from offroad_env.task import rewards as tasks
from offroad_env.physics.models import Drive, ModelStep
from offroad_env.task.rewards import RewardWeights, StepContext


F64 = torch.float64


def quantities(**kw) -> StepContext:
    """A step of two environments; the state, the model's step and the task's judgement are
    made by hand, so each term's closed form can be checked."""
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
        tipped=torch.tensor([True, False]), stuck=torch.tensor([False, True]),
        fell=torch.tensor([False, True]),
        margin=t(0.1, 0.5), traction=t(1.5, 0.4), dt=0.05)
    base.update(kw)
    b = SimpleNamespace(**base)
    state = SimpleNamespace(prev_distance=b.prev_distance, command=b.command, gyro_s=b.gyro_s,
                            prev_action=b.prev_action, margin=b.margin,
                            traction=b.traction)
    contact = SimpleNamespace(roll=b.roll, pitch=b.pitch)
    motion = ModelStep(contact, Drive(b.kappa, b.torque, b.wheel_omega), b.body_velocity)
    return StepContext(state=state, motion=motion, action=b.action, distance=b.distance,
                       reached=b.reached, tipped=b.tipped, stuck=b.stuck, fell=b.fell,
                       nav=b.nav, dt=b.dt)


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
    torch.testing.assert_close(r["traction"], exp([0.5, 0.0]))
    torch.testing.assert_close(r["stuck"], exp([0.0, 1.0]))
    torch.testing.assert_close(r["fall"], exp([0.0, 1.0]))


def test_progress_counts_only_in_navigation_and_kinematic_models_spend_no_energy():
    r = tasks.reward_terms(quantities(nav=False, torque=None, wheel_omega=None))
    assert (r["progress"] == 0).all() and (r["energy"] == 0).all()


def test_reward_is_the_weighted_sum_of_the_terms():
    q = quantities()
    terms = tasks.reward_terms(q)
    w = RewardWeights(progress=2.0, goal_reached=5.0, tracking=0.5, tilt=-1.0, angular_rate=0.0,
                      action_rate=-0.1, slip=-0.2, energy=-0.01, tip_over=-7.0,
                      stability=-0.3, time=-0.5, traction=-2.0, stuck=-3.0, fall=-4.0)
    expected = sum(weight * terms[name] for name, weight in w.items())
    torch.testing.assert_close(tasks.weighted_reward(terms, w), expected)


