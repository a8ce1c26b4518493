"""Terms that keep state (``state_fields``, offroad_env.task.terms): the fields join the simulator's
state, restart with each episode (or not), travel in snapshots and the compiled step, and a
term that writes one badly is refused by name. Checked against hand computations on the same
states."""

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv, make_config
from offroad_env.sim.simulator import Simulator
from offroad_env.task.terms import (FIRST_USER_CODE, EventTerm, Field, RewardTerm, TerminationTerm,
                               terms_from_plain, terms_to_plain)

THRESHOLD = 0.05  # mean |slip ratio| above which a step counts as slipping


def slip_streak(ctx, threshold=THRESHOLD):
    """Minus the number of consecutive steps (this one included) the wheels have slipped."""
    st = ctx.state
    slipping = ctx.motion.drive.kappa.abs().mean(1) > threshold
    st.streak = torch.where(slipping, st.streak + 1, torch.zeros_like(st.streak))
    return -st.streak.to(ctx.distance.dtype)


def lifetime(ctx):
    """Counts every step of the environment, across its episodes; rewards nothing."""
    ctx.state.lived = ctx.state.lived + 1
    return torch.zeros_like(ctx.distance)


def draw_target_speed(ev, mask, lo=0.2, hi=0.8):
    """At each reset, a target speed per new episode, from the env's own stream."""
    u = ev.uniform(1, mask)[:, 0]
    ev.state.put(mask, target_speed=lo + (hi - lo) * u)


def speed_error(ctx):
    return (ctx.motion.vel_b[:, 0] - ctx.state.target_speed).abs()


def long_streak(ctx, steps=4):
    return ctx.state.streak >= steps


STREAK = {"slip_streak": RewardTerm(slip_streak, weight=0.5,
                                    state_fields={"streak": Field(kind="int64")})}
LIFE = {"lifetime": RewardTerm(lifetime, weight=0.0, state_fields={
    "lived": Field(kind="int64", episodic=False)})}
TARGET = dict(events={"target": EventTerm(draw_target_speed, state_fields={
    "target_speed": Field(episodic=False)})},
    rewards={"speed_error": RewardTerm(speed_error, weight=-1.0)})


def _cfg(**terms):
    return make_config("nav", dynamics="skid_steer",
                       terrain=terrain.PerlinConfig(size=(30.0, 30.0), resolution=(0.2, 0.2),
                                                    octaves=2, frequency=0.1, amplitude=0.4),
                       num_maps=1, **terms)


def _actions(n, steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(steps, n, 2, generator=g) * 2 - 1
    a[..., 0] = a[..., 0].abs()
    return a


def test_a_streak_counts_slipping_steps_and_restarts_with_each_episode():
    n = 32
    sim = Simulator(_cfg(rewards=STREAK,
                         terminations={"long_streak": TerminationTerm(long_streak)}), n)
    all_rows = torch.ones(n, dtype=torch.bool)
    sim.reset(all_rows)
    assert sim.state.streak.dtype == torch.int64 and torch.equal(sim.state.streak,
                                                                 torch.zeros(n, dtype=torch.int64))
    expect = torch.zeros(n, dtype=torch.int64)
    ended = 0
    for a in _actions(n, 80):
        _, reward, term, info = sim.step(a)
        slipping = sim.state.wheel_slip.abs().mean(1) > THRESHOLD  # the step's kappa
        expect = torch.where(slipping, expect + 1, torch.zeros_like(expect))
        assert torch.equal(sim.state.streak, expect)
        assert torch.equal(info["reward/slip_streak"], -expect.float())
        # the declared termination reads the field the reward term wrote this step
        long = (expect >= 4) & (info["end_reason"] >= FIRST_USER_CODE)
        assert torch.equal(long, (expect >= 4) & (info["end_reason"] == FIRST_USER_CODE))
        ended += int(term.sum())
        sim.reset(term)
        expect = torch.where(term, torch.zeros_like(expect), expect)
        assert torch.equal(sim.state.streak, expect)  # a new episode starts at 0
    assert ended > 0 and int(expect.max()) >= 1


def staggered(ctx):
    """Episodes of 3 to 7 steps by row."""
    n = ctx.distance.shape[0]
    return ctx.state.steps >= 3 + torch.arange(n, device=ctx.distance.device) % 5


def test_a_field_kept_across_episodes_survives_resets_and_prepared_starts():
    n = 24
    sim = Simulator(_cfg(rewards=LIFE, terminations={"staggered": TerminationTerm(
        staggered)}), n)
    sim.reset(torch.ones(n, dtype=torch.bool))
    assert sim.next_starts is not None
    for a in _actions(n, 40):
        _, _, term, _ = sim.step(a)
        sim.reset(term)
    assert sim.next_starts.rows_taken > 0  # resets took prepared starts
    assert torch.equal(sim.state.lived, torch.full((n,), 40, dtype=torch.int64))


def test_an_event_keeps_a_per_episode_value_that_a_reward_reads():
    n = 16
    env = OffroadVectorEnv(num_envs=n, config=_cfg(**TARGET), max_episode_steps=12)
    env.reset(seed=5)
    sim = env.unwrapped.sim
    target = sim.state.target_speed.clone()
    assert bool(((target >= 0.2) & (target < 0.8)).all()) and target.unique().numel() == n
    changed = 0
    for a in _actions(n, 30, seed=1):
        before = sim.state.target_speed.clone()
        _, r, term, trunc, info = env.step(a)
        now = sim.state.target_speed
        # the reward reads this episode's target: |forward speed - target|
        reset_step = sim.state.steps == 0
        live = ~reset_step
        want = (sim.state.vel_b[:, 0] - now).abs()  # the term; the reward weighs it by -1
        assert torch.allclose(info["reward/speed_error"][live], want[live])
        # the target changes only where a new episode started
        assert torch.equal(now[live], before[live])
        changed += int((now != before).sum())
    assert changed > 0


def test_snapshots_carry_term_state_and_replay_in_a_fresh_env():
    n = 12
    cfg = _cfg(rewards=STREAK, **{"events": TARGET["events"]})
    acts = _actions(n, 30, seed=2)
    env = OffroadVectorEnv(num_envs=n, config=cfg, max_episode_steps=20)
    env.reset(seed=1)
    for a in acts[:10]:
        env.step(a)
    snap = env.get_state()
    assert "state/streak" in snap.tensors and "state/target_speed" in snap.tensors
    first = [env.step(a)[1].clone() for a in acts[10:]]
    other = OffroadVectorEnv(num_envs=n, config=cfg, max_episode_steps=20)
    other.reset(seed=99)
    other.set_state(snap)
    assert torch.equal(other.unwrapped.sim.state.streak, snap.tensors["state/streak"])
    again = [other.step(a)[1].clone() for a in acts[10:]]
    for r1, r2 in zip(first, again):
        assert torch.equal(r1, r2)


@pytest.mark.slow
def test_the_compiled_step_keeps_term_state_as_the_eager_one():
    n = 16
    acts = _actions(n, 25, seed=3)
    out = []
    for compile in (False, True):
        sim = Simulator(_cfg(rewards=STREAK), n, compile=compile)
        sim.reset(torch.ones(n, dtype=torch.bool))
        streaks = []
        for a in acts:
            _, _, term, info = sim.step(a)
            streaks.append(sim.state.streak.clone())
            sim.reset(term)
        out.append(torch.stack(streaks))
    assert int(out[0].max()) >= 2
    # a slip ratio within rounding of the threshold can count differently; nearly all agree
    assert (out[0] == out[1]).float().mean() > 0.99


def wrong_shape(ctx):
    ctx.state.streak = torch.zeros(ctx.distance.shape[0], 2, dtype=torch.int64)
    return torch.zeros_like(ctx.distance)


def nan_write(ctx):
    ctx.state.level = torch.full_like(ctx.distance, float("nan"))
    return torch.zeros_like(ctx.distance)


def test_bad_term_state_is_refused_naming_the_term_and_field():
    with pytest.raises(ValueError, match="state field 'x' of reward term 'r' is already "
                                         "declared by the state"):
        Simulator(_cfg(rewards={"r": RewardTerm(slip_streak, state_fields={"x": ()})}), 2)
    with pytest.raises(ValueError, match="state field 'streak' of termination term 'b' is "
                                         "already declared by reward term 'slip_streak'"):
        Simulator(_cfg(rewards=STREAK, terminations={"b": TerminationTerm(
            long_streak, state_fields={"streak": ()})}), 2)
    with pytest.raises(ValueError, match="state field 'k' must be a Field or a shape"):
        RewardTerm(slip_streak, state_fields={"k": (0,)})
    with pytest.raises(ValueError, match="must be a dict"):
        RewardTerm(slip_streak, state_fields=["k"])
    for fn, field, match in ((wrong_shape, {"streak": Field(kind="int64")},
                              r"reward term 'w' wrote its state field 'streak' as \(4, 2\)"),
                             (nan_write, {"level": ()},
                              "reward term 'w' wrote NaN or inf into its state field 'level'")):
        sim = Simulator(_cfg(rewards={"w": RewardTerm(fn, state_fields=field)}), 4)
        sim.reset(torch.ones(4, dtype=torch.bool))
        with pytest.raises(ValueError, match=match):
            sim.step(torch.zeros(4, 2))


def test_a_run_records_term_state_and_rebuilds_it():
    cfg = _cfg(rewards=STREAK, events=TARGET["events"])
    plain = terms_to_plain(cfg)
    assert plain["rewards"]["slip_streak"]["state_fields"]["streak"]["kind"] == "int64"
    back = terms_from_plain(plain, allow=(__name__,))
    assert back["rewards"]["slip_streak"].state_fields == {"streak": Field(kind="int64")}
    assert back["events"]["target"].state_fields == {"target_speed": Field(episodic=False)}
    assert repr(back["rewards"]["slip_streak"]) == repr(cfg.rewards["slip_streak"])
    import json
    json.dumps(plain)  # a run's config records it as JSON
