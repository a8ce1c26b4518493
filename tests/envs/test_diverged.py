"""The divergence guard (``EndReason.DIVERGED``): a row whose step stops being finite is cut as
a truncation with its observation, reward and terms zeroed, the other rows untouched, and the
next autoreset gives it a finite episode again; counted by the suite."""

import math

import pytest
import torch

from offroad_env import EndReason, OffroadVectorEnv
from offroad_env.task.task import contain_divergence


def test_contain_divergence_zeroes_and_ends_only_the_rows_that_are_not_finite():
    obs = torch.tensor([[1.0, 2.0], [math.nan, 0.5], [3.0, 4.0], [5.0, 6.0]])
    reward = torch.tensor([0.1, 0.2, math.inf, 0.4])
    reason = torch.tensor([0, 0, 4, 1])
    terms = {"a": torch.tensor([1.0, 1.0, 1.0, -math.inf]), "b": torch.ones(4)}
    o, r, c, t = contain_divergence(obs, reward, reason, terms)
    assert c.tolist() == [0, 7, 7, 7] and int(EndReason.DIVERGED) == 7
    assert o.tolist() == [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    assert r.tolist() == pytest.approx([0.1, 0.0, 0.0, 0.0])
    assert t["a"].tolist() == [1.0, 0.0, 0.0, 0.0] and t["b"].tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("kw,field", [({}, "x"), ({"dynamics": "rigid_body"}, "body_vel")])
def test_a_blown_up_row_is_truncated_as_diverged_and_reset_to_a_finite_episode(kw, field):
    env = OffroadVectorEnv(num_envs=3, **kw)
    ref = OffroadVectorEnv(num_envs=3, **kw)
    env.reset(seed=5)
    ref.reset(seed=5)
    st = env.unwrapped.sim.state
    v = getattr(st, field).clone()
    v[1] = math.nan  # row 1's integration has blown up
    setattr(st, field, v)
    a = torch.full((3, 2), 0.3)
    obs, rew, term, trunc, info = env.step(a)
    obs0, rew0, _, _, info0 = ref.step(a)
    assert bool(trunc[1]) and not bool(term[1])
    assert int(info["end_reason"][1]) == EndReason.DIVERGED
    assert EndReason.DIVERGED.label == "diverged"
    assert bool(torch.isfinite(obs).all()) and bool(torch.isfinite(rew).all())
    assert (obs[1] == 0).all() and float(rew[1]) == 0.0
    for k in (0, 2):  # the other rows step as they would have
        assert torch.equal(obs[k], obs0[k]) and torch.equal(rew[k], rew0[k])
    for _ in range(5):  # next-step autoreset: row 1 starts over, finite
        obs, rew, term, trunc, info = env.step(a)
        assert bool(torch.isfinite(obs).all()) and bool(torch.isfinite(rew).all())
        assert not bool((term | trunc)[1])  # the reset step, then a fresh episode
    assert bool(torch.isfinite(getattr(env.unwrapped.sim.state, field)).all())


def test_the_suite_counts_a_diverged_episode_as_a_failure_and_says_so():
    import numpy as np

    from train.bench.report import table_markdown
    from train.bench.run import _cell

    labels = np.array(["goal_reached", "diverged", "stuck", "goal_reached"])
    per = {"label": labels, "length": np.array([10, 3, 100, 20]),
           **{k: np.zeros(4) for k in ("mean_roll", "mean_pitch", "max_roll", "max_pitch",
                                      "min_margin", "energy")}}
    cell = _cell(np.ones(4, dtype=bool), per, 0.05)
    assert cell["success_rate"] == 0.5 and cell["diverged_rate"] == 0.25
    assert sum(cell[f"{k}_rate"] for k in ("success", "tip_over", "stuck", "hole", "off_map",
                                           "time_limit", "diverged")) == 1.0
    res = {"p": {"overall": cell, "by_family": {"rough": {"all": cell}}}}
    assert "(failures): p: 1" in table_markdown(res)
