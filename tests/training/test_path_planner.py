"""The map planner as a policy (issue 68): privileged candidates read their own rows' state in a
look-ahead, so ``path`` simulated from a snapshot drives as it does live; the bounded reference
looks ``horizon`` steps ahead, whatever the episode's length, and scores the rest by the
cost-to-go."""

import pytest
import torch

from train.common.suite import load_suite, suite_env, suite_tasks
from train.planners.baselines import baseline


def _world(pairs, world="world1"):
    """A vector env on one Verti-Bench world (the packaged dataset), reset on its tasks."""
    spec = load_suite("verti-bench-v1").select(worlds=[world], pairs=pairs)
    env = suite_env(spec, spec.num_tasks)
    base = env.unwrapped
    tasks = suite_tasks(spec, base.terrain)
    lo = torch.as_tensor(tasks["map_index"])
    base.set_map_range(lo, torch.ones_like(lo))
    with _quiet():
        obs, _ = env.reset(seed=0, options={
            "start_pose": torch.as_tensor(tasks["start"], dtype=torch.float64),
            "goal": torch.as_tensor(tasks["goal"], dtype=torch.float64)})
    return env, obs


class _quiet:
    """Ignore the 'no stable rest' warning of a few Verti-Bench starts."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", UserWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


def test_state_view_select_takes_rows():
    env, _ = _world([0, 1, 2])
    v = env.unwrapped.state_view()
    s = v.select(torch.tensor([2, 0]))
    assert torch.equal(s.x, v.x[[2, 0]]) and torch.equal(s.goal_w, v.goal_w[[2, 0]])
    assert torch.equal(s.map_index, v.map_index[[2, 0]]) and s.contact is None
    assert torch.equal(s.origin, v.origin)


def test_path_in_a_look_ahead_drives_as_it_does_live():
    """A privileged policy gets the look-ahead rows' own pose and goal: from a snapshot of
    every row at its own position, ``path`` simulated ahead follows the live run bit for bit
    (the look-ahead's eager rows step as the live step does)."""
    env, obs = _world([0, 3, 5])
    base = env.unwrapped
    act = baseline("path", env, 0)
    assert act.reads_state
    H = 40
    ro = base.lookahead(base.get_state(), act, horizon=H)
    live = []
    for _ in range(H):
        obs, *_ = env.step(act(obs))
        live.append(torch.stack((base.state_view().x, base.state_view().y), 1))
    live = torch.stack(live)
    assert torch.equal(ro.position, live)
    # and it moved: the policy steered by its own rows' poses, not the live env's
    assert int(((ro.position[-1] - ro.position[0]).norm(dim=1) > 0.5).sum()) >= 2


def test_the_bounded_reference_looks_its_horizon_ahead_and_scores_by_cost_to_go():
    env, obs = _world([0, 1])
    base = env.unwrapped
    planner = baseline("rollout:horizon=30,replan=10,library=map", env, 0)
    assert planner.reads_state and planner.field is not None  # path's fields score the end
    for _ in range(12):
        obs, *_ = env.step(planner(obs))
    assert planner.last_rollout.obs.shape[0] <= 30
    # progress is the cost-to-go gained: the field at the start less at the end
    v = base.state_view()
    f = planner.field.cost_to_go_at(v, v.base_position_w[:, :2])
    assert bool(torch.isfinite(f).all())
    goal_d = torch.linalg.vector_norm(v.goal_w - v.base_position_w[:, :2], dim=1)
    assert bool((f >= goal_d - 0.3).all())  # cost >= 1 per metre (to a cell's rounding)


def test_rollout_options_are_checked():
    from train.planners.rollout import RolloutConfig
    with pytest.raises(ValueError, match="keep"):
        RolloutConfig(keep=1.5)
    with pytest.raises(ValueError, match="horizon"):
        RolloutConfig(horizon=-1)


def test_path_slows_as_the_body_tilts_towards_its_tip_limit():
    """``slow_from``: full speed below that share of the static tip limit, the speed falling
    linearly to ``slow_speed`` at the limit (a roll or a pitch, whichever is the larger
    share); the turn rate is the same."""
    from offroad_env.physics.stability import static_tip_limits
    from train.planners.path import PathConfig, PathPolicy
    env, obs = _world([0, 3])
    base = env.unwrapped
    v = base.state_view()
    roll_lim, pitch_lim = static_tip_limits(base.vehicle)
    fast = PathPolicy(env, lambda s, w: torch.stack((s, w), 1))
    slow = PathPolicy(env, lambda s, w: torch.stack((s, w), 1), slow_from=0.5, slow_speed=0.2)
    flat = v._replace(roll=torch.zeros_like(v.roll), pitch=torch.zeros_like(v.pitch))
    assert torch.equal(fast(obs, flat), slow(obs, flat))
    # row 0 rolled to 3/4 of its limit: speed 1 - 0.5 (1 - 0.2) = 0.6; row 1 pitched past it
    tilt = v._replace(
        roll=torch.tensor([0.75 * roll_lim, 0.0], dtype=v.roll.dtype),
        pitch=torch.tensor([0.0, -1.1 * pitch_lim], dtype=v.pitch.dtype))
    a, b = fast(obs, tilt), slow(obs, tilt)
    assert torch.equal(a[:, 1], b[:, 1])
    expect = torch.minimum(a[:, 0].double(), torch.tensor([0.6, 0.2], dtype=torch.float64))
    torch.testing.assert_close(b[:, 0].double(), expect, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="slow_from"):
        PathConfig(slow_from=1.5)
