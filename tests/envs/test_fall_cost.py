"""A fall into a hole or off the map's edge is a fatal end and costs what a tip-over costs: the
``fall`` reward term (``RewardWeights.fall``, -10), reported as ``info["reward/fall"]``, in every
task of the ``-v1`` ids; the ``-v0`` ids keep 0.1's reward (a fall cost nothing) and the same
trajectories."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import offroad_env
from offroad_env import EndReason, OffroadVectorEnv, RewardTerm, TaskConfig
from offroad_env.task.rewards import RewardWeights

RES = 0.25


def _hole_map():
    """A flat 30 x 30 m map centred at (0, 0) with a hole of radius 1.5 m at (5, 0)."""
    n = int(30 / RES) + 1
    x = np.linspace(-15, 15, n)
    X, Y = np.meshgrid(x, x)
    h = np.zeros((n, n))
    h[np.hypot(X - 5.0, Y) < 1.5] = np.nan
    return h


def _drive(env_id, steps=140, **kw):
    """Two rows driving straight: row 0 at the hole, row 1 off the map's east edge."""
    env = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                       terrain=(_hole_map(), RES), num_maps=1, **kw)
    f64 = torch.float64
    env.reset(seed=0, options={"start_pose": torch.tensor([[0.0, 0.0, 0.0], [10.0, 8.0, 0.0]],
                                                          dtype=f64),
                               "goal": torch.tensor([[9.0, 0.0], [5.0, 8.0]], dtype=f64)})
    act = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    out = {"reward": [], "fall": [], "reason": [], "done": []}
    for _ in range(steps):
        _, r, term, trunc, info = env.step(act)
        out["reward"].append(r.clone())
        out["fall"].append(info["reward/fall"].clone())
        out["reason"].append(info["end_reason"].clone())
        out["done"].append(term | trunc)
    env.close()
    return {k: torch.stack(v) for k, v in out.items()}


def _end(run, row):
    """The step at which ``row``'s first episode ends, and its end reason."""
    t = int(torch.nonzero(run["done"][:, row])[0])
    return t, int(run["reason"][t, row])


@pytest.mark.filterwarnings("ignore:.*is out of date")
@pytest.mark.parametrize("task", ["Nav", "Velocity", "NavRough", "Traverse"])
def test_a_hole_end_and_an_off_map_end_cost_what_a_tip_over_costs(task):
    v1 = _drive(f"offroad_env/Offroad{task}-v1")
    v0 = _drive(f"offroad_env/Offroad{task}-v0")
    for row, reason in ((0, EndReason.HOLE), (1, EndReason.OFF_MAP)):
        t, got = _end(v1, row)
        assert got == int(reason), (task, row, got)
        assert float(v1["fall"][t, row]) == 1.0
        assert float(v1["fall"][:t, row].abs().sum()) == 0.0  # only on the ending step
        assert _end(v0, row) == (t, got)  # the same drive
        # the reward differs by the fall's weight on that step and nowhere else
        assert float(v1["reward"][t, row] - v0["reward"][t, row]) == pytest.approx(-10.0,
                                                                                  abs=1e-4)
        assert torch.equal(v1["reward"][:t, row], v0["reward"][:t, row])
    assert RewardWeights().fall == RewardWeights().tip_over == -10.0


def test_the_fall_weight_is_its_own_and_the_ids_say_their_version():
    cfg = offroad_env.make_config(TaskConfig(weights=RewardWeights(fall=-3.0)))
    assert cfg.task.weights.fall == -3.0 and cfg.task.weights.tip_over == -10.0
    assert offroad_env.env_config("offroad_env/OffroadNav-v0").task.weights.fall == 0.0
    assert offroad_env.env_config("offroad_env/OffroadTraverse-v1").task.weights.fall == -10.0
    assert sorted(offroad_env.ENV_IDS) == sorted(i.replace("-v0", "-v1")
                                                 for i in offroad_env.OLD_ENV_IDS)
    with pytest.raises(ValueError, match="version must be one of"):
        offroad_env.make_config("nav", version=2)
    env = OffroadVectorEnv(num_envs=1)  # the class builds the current version's reward
    assert env.unwrapped.config.task.weights.fall == -10.0
    assert "fall" in env.unwrapped.reward_terms and isinstance(RewardTerm, type)
