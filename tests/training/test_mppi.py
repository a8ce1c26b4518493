"""The MPPI planner (train.planners.mppi) on the simulator's own look-ahead."""

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv
from train.planners.mppi import MPPIConfig, mppi_policy, parse_options
from train.planners.baselines import baseline


#: the options that were MPPI's defaults before the cost-to-go objective and the path guide:
#: the env's reward, no guide, a plan every call
REWARD = dict(guide="", objective="reward", replan=1, temperature=0.3)


def _env():
    return OffroadVectorEnv(num_envs=4, terrain=terrain.FlatConfig(size=(30.0, 30.0),
                                                                   resolution=(0.25, 0.25)),
                            num_maps=1, max_episode_steps=400)


def _goal_distance(env):
    v = env.unwrapped.state_view()
    return torch.hypot(v.goal_w[:, 0] - v.x, v.goal_w[:, 1] - v.y)


def _progress(name, steps=60):
    """Each env's progress toward its goal [m] in ``steps`` steps under policy ``name``, and
    the actions taken."""
    env = _env()
    obs, _ = env.reset(seed=0)
    d0 = _goal_distance(env)
    act = (mppi_policy(env, samples=16, horizon=10, **REWARD) if name == "mppi"
           else baseline(name, env, 0))
    acts = []
    for _ in range(steps):
        acts.append(act(obs))
        obs, *_ = env.step(acts[-1])
    return d0 - _goal_distance(env), torch.stack(acts)


def test_mppi_drives_toward_the_goal_as_the_straight_line_does_and_is_deterministic():
    # flat ground, unicycle, 60 steps (3 s) from spawns facing anywhere: the straight line
    # toward the goal is the best there is, and the planner, which knows nothing of goals but
    # the env's reward, comes within 80 % of its progress in every env (measured: 91 %);
    # a random policy makes none; the same seed plans the same actions
    line, _ = _progress("heuristic")
    mppi, acts = _progress("mppi")
    rand, _ = _progress("random")
    assert bool((mppi >= 0.8 * line).all()), (mppi, line)
    assert bool((rand < 0.3 * line).all()), (rand, line)
    assert torch.equal(_progress("mppi")[1], acts)


def test_mppi_options_are_parsed_and_checked():
    assert parse_options("K=8,H=5,temperature=0.2") == {"samples": 8, "horizon": 5,
                                                         "temperature": 0.2}
    with pytest.raises(ValueError, match="name=value"):
        parse_options("lambda=1")
    with pytest.raises(ValueError, match="horizon must be an int >= 0"):
        MPPIConfig(horizon=-1)
    with pytest.raises(ValueError, match="needs a horizon"):
        MPPIConfig(horizon=0, seconds=0.0)
    with pytest.raises(ValueError, match="smoothing"):
        MPPIConfig(smoothing=1.0)
    env = _env()
    env.reset(seed=0)
    act = baseline("mppi:K=4,H=3,replan=1", env, 0)
    assert act.cfg.samples == 4 and act.horizon == 3 and act.privileged
    # the defaults: 16 samples over 2 s (40 steps of 0.05 s), scored by the cost-to-go gained,
    # the map planner as the guide, a plan every 4th step
    act = baseline("mppi", env, 0)
    c = act.cfg
    assert (c.samples, act.horizon, c.objective, c.guide, c.replan, c.model) == (
        16, 40, "cost_to_go", "path", 4, "env")
    assert act.guide is not None and act.field is act.guide
    assert baseline("mppi:guide=none,objective=progress", env, 0).guide is None
    with pytest.raises(ValueError, match="needs its policy"):
        mppi_policy(env)  # the path guide is built by baselines.baseline


def test_mppi_plans_only_the_active_rows_and_their_actions_do_not_change():
    # rows 1 and 3 active: their samples are the same draws as with every row planned (the
    # noise is drawn for all N rows), so their actions agree with the full plan's (to rounding:
    # the look-ahead batch is smaller, float32: 3e-8 seen); the others get zero actions, and the look-ahead used
    # has the active count rounded up to a multiple of ceil(N / 8) rows (here 2 of 4)
    full, part = _env(), _env()
    o1, _ = full.reset(seed=0)
    o2, _ = part.reset(seed=0)
    a_full = mppi_policy(full, samples=8, horizon=5, **REWARD)
    a_part = mppi_policy(part, samples=8, horizon=5, **REWARD)
    a_part.active = torch.tensor([False, True, False, True])
    for _ in range(3):
        u_full, u_part = a_full(o1), a_part(o2)
        torch.testing.assert_close(u_part[[1, 3]], u_full[[1, 3]], rtol=0, atol=1e-5)
        assert bool((u_part[[0, 2]] == 0).all())
        o1, *_ = full.step(u_full)
        o2, *_ = part.step(u_full)  # the same live trajectory, so the plans stay comparable
    assert set(part.unwrapped._lookaheads) == {2 * 8}
    a_part.active = torch.zeros(4, dtype=torch.bool)
    assert bool((a_part(o2) == 0).all())


def test_mppi_guide_and_replan():
    # the straight line as a guide: on flat ground its line is about the best there is, and
    # the planner, free to choose it, makes at least 95 % of its progress in every env
    env = _env()
    obs, _ = env.reset(seed=0)
    d0 = _goal_distance(env)
    act = baseline("mppi:K=8,H=10,guide=heuristic,objective=reward,replan=1,T=0.3", env, 0)
    for _ in range(60):
        obs, *_ = env.step(act(obs))
    line, _ = _progress("heuristic")
    assert bool((d0 - _goal_distance(env) >= 0.95 * line).all()), (d0 - _goal_distance(env), line)
    # replan=3: one look-ahead every third call; in between, the plan's next actions
    env = _env()
    obs, _ = env.reset(seed=0)
    act = mppi_policy(env, samples=4, horizon=6, **dict(REWARD, replan=3))
    calls = []
    look = env.unwrapped.lookahead
    env.unwrapped.lookahead = lambda *a: calls.append(1) or look(*a)
    for i in range(7):
        planned_next = act.plan[:, 0].clone()
        u = act(obs)
        if i % 3:
            assert torch.equal(u, planned_next)
        obs, *_ = env.step(u)
    assert len(calls) == 3
    with pytest.raises(ValueError, match="guide must be one of"):
        baseline("mppi:guide=straight", env, 0)
    with pytest.raises(ValueError, match="needs its policy"):
        mppi_policy(env, guide="heuristic")
    with pytest.raises(ValueError, match="must not exceed the horizon"):
        MPPIConfig(horizon=4, replan=5)


def test_mppi_progress_objective_drives_toward_the_goal():
    # the planner's own objective (the approach to the goal, +-10 for the goal or a fatal
    # end) instead of the env's reward: on flat ground it makes 80 % of the straight line's
    # progress in every env too; an unknown objective is refused
    env = _env()
    obs, _ = env.reset(seed=0)
    d0 = _goal_distance(env)
    act = baseline("mppi:K=16,H=10,objective=progress,guide=none,replan=1", env, 0)
    for _ in range(60):
        obs, *_ = env.step(act(obs))
    line, _ = _progress("heuristic")
    assert bool((d0 - _goal_distance(env) >= 0.8 * line).all())
    with pytest.raises(ValueError, match="objective must be one of"):
        MPPIConfig(objective="speed")


@pytest.mark.filterwarnings("ignore:.*is out of date")
def test_mppi_with_the_reward_objective_avoids_a_hole_on_the_straight_path():
    """Four rows start 3.5 m before a hole of radius 1.5 m that lies on the straight path to
    their goals. With the ``-v1`` reward (a fall costs -10, as a tip-over) MPPI with the reward
    objective drives up to it and none falls in; with the ``-v0`` reward (a fall cost
    nothing) every row drives in, as the third user trial saw."""
    import gymnasium as gym

    from offroad_env import EndReason

    n = 121  # a flat 30 x 30 m map at 0.25 m with the hole at (5, 0)
    x = torch.linspace(-15, 15, n, dtype=torch.float64)
    h = torch.zeros(n, n, dtype=torch.float64)
    h[torch.hypot(x[None, :] - 5.0, x[:, None]) < 1.5] = float("nan")
    ys = [-0.6, -0.2, 0.2, 0.6]
    f64 = torch.float64
    ends = {}
    for version in ("v1", "v0"):
        env = gym.make_vec(f"offroad_env/OffroadNav-{version}", num_envs=4,
                           vectorization_mode="vector_entry_point",
                           terrain=(h.numpy(), 0.25), num_maps=1)
        obs, _ = env.reset(seed=0, options={
            "start_pose": torch.tensor([[0.0, y, 0.0] for y in ys], dtype=f64),
            "goal": torch.tensor([[10.0, y] for y in ys], dtype=f64)})
        act = mppi_policy(env, samples=16, horizon=15, **REWARD)
        reason = torch.zeros(4, dtype=torch.long)
        done = torch.zeros(4, dtype=torch.bool)
        furthest = torch.zeros(4, dtype=f64)
        for _ in range(100):
            obs, _, term, trunc, info = env.step(act(obs))
            new = (term | trunc) & ~done
            reason[new] = info["end_reason"][new].long()
            done |= term | trunc
            furthest = torch.maximum(furthest, env.unwrapped.state_view().x.double())
        ends[version] = (reason, done, furthest)
        env.close()
    reason, done, furthest = ends["v1"]
    assert not bool((done & (reason == int(EndReason.HOLE))).any()), reason
    assert bool((furthest > 2.0).all()), furthest  # it drove toward the hole, then held off
    reason, done, _ = ends["v0"]
    assert bool((done & (reason == int(EndReason.HOLE))).all()), reason


def test_mppi_knots_seconds_and_iterations():
    """``knots``: the noise is linear between k knots spread over the horizon (zero second
    differences inside each span), with the knots' standard deviation; ``seconds``: the
    horizon in simulated time; ``iterations``: one look-ahead per iteration, deterministic."""
    env = _env()
    obs, _ = env.reset(seed=0)
    dt = env.unwrapped.config.dt * env.unwrapped.config.action_repeat
    act = mppi_policy(env, samples=64, seconds=13 * dt, knots=4, guide="")
    assert act.horizon == 13
    eps = act._noise(4, 64, 13, 2)  # knots at steps 0, 4, 8, 12
    second = eps[:, :, 2:] - 2 * eps[:, :, 1:-1] + eps[:, :, :-2]  # (.., 11, 2) at steps 1..11
    inside = [h - 1 for h in range(1, 12) if h % 4]
    assert float(second[:, :, inside].abs().max()) < 1e-6
    assert abs(float(eps[:, :, ::4].std()) - act.cfg.noise) < 0.05
    runs = []
    for _ in range(2):
        env = _env()
        obs, _ = env.reset(seed=0)
        act = mppi_policy(env, samples=8, horizon=6, iterations=3, objective="progress",
                          guide="", replan=1)
        calls = []
        look = env.unwrapped.lookahead
        env.unwrapped.lookahead = lambda *a: calls.append(1) or look(*a)
        runs.append(torch.stack([act(obs) for _ in range(2)]))
        assert len(calls) == 6
    assert torch.equal(*runs)
    for bad, match in (({"knots": 1}, "knots"), ({"iterations": 0}, "iterations"),
                       ({"anneal": 0.0}, "anneal"),
                       ({"stability": 1.0, "objective": "reward"}, "stability weighs"),
                       ({"seconds": -1.0}, "seconds")):
        with pytest.raises(ValueError, match=match):
            MPPIConfig(**bad)


def test_mppi_cost_to_go_objective_goes_round_a_trench():
    """``objective=cost_to_go`` scores a sample's end by the map planner's cost-to-go, which
    sees past the horizon: from 3 m before a trench (a hole 0.5 m long and 8 m wide) across
    the straight line, a 1-s horizon with the ``progress`` objective drives up to its edge and
    stays there (every sample that gains falls in), while the cost-to-go takes the rows round
    its end to the goal within 25 s; none falls in."""
    import gymnasium as gym

    from offroad_env import EndReason

    n = 161  # 40 x 40 m at 0.25 m; the wall at x = 3..3.5, |y| < 4
    x = torch.linspace(-20, 20, n, dtype=torch.float64)
    h = torch.zeros(n, n, dtype=torch.float64)
    h[(x[:, None].abs() < 4.0) & (x[None, :] >= 3.0) & (x[None, :] <= 3.5)] = float("nan")
    f64 = torch.float64
    reached, fell = {}, {}
    for objective in ("progress", "cost_to_go"):
        env = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                           vectorization_mode="vector_entry_point",
                           terrain=(h.numpy(), 0.25), num_maps=1, max_episode_steps=500)
        obs, _ = env.reset(seed=0, options={
            "start_pose": torch.tensor([[0.0, -0.5, 0.0], [0.0, 0.5, 0.0]], dtype=f64),
            "goal": torch.tensor([[7.0, -0.5], [7.0, 0.5]], dtype=f64)})
        act = baseline(f"mppi:K=16,seconds=1.0,replan=2,guide=none,objective={objective}",
                       env, 0)
        done = torch.zeros(2, dtype=torch.bool)
        hole = torch.zeros(2, dtype=torch.bool)
        for _ in range(500):
            obs, _, term, trunc, info = env.step(act(obs))
            why = env.unwrapped.end_reasons
            done |= torch.as_tensor(term) & (why == int(EndReason.GOAL_REACHED))
            hole |= why == int(EndReason.HOLE)
            if bool(done.all()):
                break
        reached[objective], fell[objective] = done, hole
    assert bool(reached["cost_to_go"].all()) and not bool(reached["progress"].any()), reached
    assert not bool(fell["cost_to_go"].any()), fell


@pytest.mark.filterwarnings("ignore:.*no stable rest")
@pytest.mark.parametrize("obstacle", ["hole", "ledge"])
def test_mppi_at_its_defaults_goes_round_a_hole_and_over_a_ledge_under_the_limit(obstacle):
    """The physical model (a Husky) and MPPI at its default objective, guide and samples, its
    samples rolled on the kinematic twin (``model=twin``: the test's time): a hole of radius
    1.5 m on the straight line to the goal is driven round (none falls in), and a ledge of 5 cm
    across the whole map (a 0.05-m grid, so the step is a step and not a ramp), under the
    Husky's quasi-static climb limit of 7.6 cm at mu 0.8
    (:func:`~offroad_env.physics.stability.ledge_climb_limit`), is climbed: both rows reach
    their goals 6-7 m away within 20 s. (A 20-cm ledge, above the wheel radius, stops even the
    straight line at full speed: the world, not the planner, decides what can be climbed.)"""
    import gymnasium as gym

    from offroad_env import EndReason

    f64 = torch.float64
    if obstacle == "hole":  # 30 x 30 m at 0.25 m, the hole at (3.5, 0)
        res, x = 0.25, torch.linspace(-15, 15, 121, dtype=f64)
        h = torch.zeros(121, 121, dtype=f64)
        h[torch.hypot(x[None, :] - 3.5, x[:, None]) < 1.5] = float("nan")
        start, goal = 0.0, 7.0
    else:  # 20 x 20 m at 0.05 m, the ledge at x = 1 m
        res, x = 0.05, torch.linspace(-10, 10, 401, dtype=f64)
        h = torch.zeros(401, 401, dtype=f64)
        h[:, x >= 1.0] = 0.05
        start, goal = -2.0, 4.0
    env = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                       vectorization_mode="vector_entry_point", dynamics="rigid_body",
                       terrain=(h.numpy(), res), num_maps=1, max_episode_steps=400)
    obs, _ = env.reset(seed=0, options={
        "start_pose": torch.tensor([[start, -0.3, 0.0], [start, 0.3, 0.0]], dtype=f64),
        "goal": torch.tensor([[goal, -0.3], [goal, 0.3]], dtype=f64)})
    act = baseline("mppi:model=twin", env, 0)
    reached = torch.zeros(2, dtype=torch.bool)
    fell = torch.zeros(2, dtype=torch.bool)
    for _ in range(400):
        obs, _, term, trunc, info = env.step(act(obs))
        why = env.unwrapped.end_reasons
        reached |= torch.as_tensor(term) & (why == int(EndReason.GOAL_REACHED))
        fell |= why == int(EndReason.HOLE)
        if bool(reached.all()):
            break
    assert bool(reached.all()) and not bool(fell.any()), (reached, fell)


def test_mppi_update_best_takes_the_best_sample_as_the_plan():
    """``update=best`` (predictive sampling): the action taken is the first of the sample that
    scored best, not a weighted mean; an unknown update is refused."""
    env = _env()
    obs, _ = env.reset(seed=0)
    act = mppi_policy(env, samples=8, horizon=6, guide="", replan=1, objective="progress",
                      update="best")
    for _ in range(3):
        u = act(obs)
        best = act.last_weights.argmax(1)
        torch.testing.assert_close(u, act.last_samples[torch.arange(4), best, 0], rtol=0,
                                   atol=0)
        obs, *_ = env.step(u)
    with pytest.raises(ValueError, match="update must be one of"):
        MPPIConfig(update="median")
