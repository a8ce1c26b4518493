"""Snapshots and look-ahead (offroad_env.snapshot, offroad_env.lookahead): restore and replay
bit for bit, look-ahead against live stepping, refusals that leave the env as it was."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import offroad_env
import terrain
from offroad_env import ENV_IDS, OffroadEnv, OffroadVectorEnv, Snapshot
from offroad_env.physics.models import MODELS

from env_util import small_env


def _actions(n, steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(n, 2, generator=g) * 2 - 1 for _ in range(steps)]


def _record(env, actions):
    out = []
    for a in actions:
        o, r, te, tr, info = env.step(a)
        out.append([o.clone(), r.clone(), te.clone(), tr.clone(), info["end_reason"].clone()]
                   + [v.clone() for k, v in sorted(info.items()) if k.startswith("reward/")])
    return out


def _run_single(env, acts):
    """A single (or gym.make) env stepped through ``acts``, reset where an episode ends."""
    out = []
    for a in acts:
        o, r, te, tr, _ = env.step(a)
        out.append((o.copy(), r, te, tr))
        if te or tr:
            env.reset()
    return out


def _same_single(a, b):
    return all(np.array_equal(p[0], q[0]) and p[1:] == q[1:] for p, q in zip(a, b))


def _same(a, b):
    return all(torch.equal(x, y) for p, q in zip(a, b) for x, y in zip(p, q))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_restore_and_replay_bit_for_bit_for_every_model(model):
    # 100 random steps with short episodes (resets in between), restored and replayed: the
    # same env, and a fresh env of the same config
    kw = small_env(dynamics=model)
    env = OffroadVectorEnv(num_envs=8, max_episode_steps=25, **kw)
    env.reset(seed=1)
    env.step(torch.zeros(8, 2))
    snap = env.get_state()
    acts = _actions(8, 100)
    first = _record(env, acts)
    assert sum(bool((s[2] | s[3]).any()) for s in first) >= 3  # resets happened
    env.set_state(snap)
    assert _same(_record(env, acts), first)
    fresh = OffroadVectorEnv(num_envs=8, max_episode_steps=25, **kw)
    fresh.reset(seed=99)
    fresh.set_state(snap)
    assert _same(_record(fresh, acts), first)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_every_registered_id_restores_through_gym_make_with_its_time_limit(env_id):
    env = gym.make(env_id, terrain=small_env()["terrain"], num_maps=2)
    env.reset(seed=4)
    limit = env.spec.max_episode_steps
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (60, 2)).astype(np.float32)
    for a in acts[:10]:
        env.step(a)
    snap = offroad_env.get_state(env)
    assert snap.meta["time_limits"] == [10]
    first = _run_single(env, acts)
    offroad_env.set_state(env, snap)
    assert _same_single(first, _run_single(env, acts))
    assert limit is not None


def test_the_single_env_restores_bit_for_bit():
    env = OffroadEnv(max_episode_steps=30, **small_env(dynamics="rigid_body"))
    env.reset(seed=2)
    snap = env.get_state()
    acts = [a[0].numpy() for a in _actions(1, 50)]
    first = _run_single(env, acts)
    env.set_state(snap)
    assert _same_single(first, _run_single(env, acts))


def test_a_snapshot_selects_repeats_moves_and_saves_keeping_its_layout(tmp_path):
    env = OffroadVectorEnv(num_envs=4, dynamics="rigid_body", **small_env())
    env.reset(seed=0)
    snap = env.get_state()
    pos = snap.tensors["state/body_pos"]
    assert pos.stride(0) == 1  # column-major, as the model keeps it
    rep = snap.select([2]).repeat(3)
    assert len(rep) == 3 and rep.tensors["state/body_pos"].stride(0) == 1
    assert torch.equal(rep.tensors["state/body_pos"], pos[[2, 2, 2]])
    path = tmp_path / "snap.pt"
    snap.save(path)
    back = Snapshot.load(path)
    assert back.meta == snap.meta
    assert all(torch.equal(back.tensors[k], v) for k, v in snap.tensors.items())
    # the snapshot shares no memory with the env
    env.step(torch.ones(4, 2))
    assert torch.equal(snap.tensors["state/body_pos"], back.tensors["state/body_pos"])


def test_a_snapshot_that_does_not_fit_is_refused_and_the_env_is_unchanged():
    env = OffroadVectorEnv(num_envs=4, **small_env())
    env.reset(seed=0)
    before = env.get_state()
    other = OffroadVectorEnv(num_envs=4, max_speed=2.5, **small_env())
    other.reset(seed=0)
    with pytest.raises(ValueError, match="another config"):
        env.set_state(other.get_state())
    # the same config on other maps (SimConfig.heightmap takes no part in config equality)
    hm = [terrain.make_heightmap(small_env()["terrain"], np.random.default_rng(s))
          for s in (1, 2)]
    a, b = (OffroadVectorEnv(num_envs=4, heightmap=h, **small_env()) for h in hm)
    a.reset(seed=0)
    b.reset(seed=0)
    with pytest.raises(ValueError, match="other height maps"):
        b.set_state(a.get_state())
    with pytest.raises(ValueError, match="has 2 rows"):
        env.set_state(before.select([0, 1]))
    old = Snapshot(before.tensors, dict(before.meta, format=0))
    with pytest.raises(ValueError, match="format 0"):
        env.set_state(old)
    after = env.get_state()
    assert all(torch.equal(after.tensors[k], v) for k, v in before.tensors.items())


def _assert_live_steps_match(env, acts, ro):
    """The live simulator stepped through ``acts`` ``(H, N, A)`` gives the look-ahead ``ro``'s
    observations and rewards bit for bit, each row up to its end."""
    sim = env.unwrapped.sim
    ended = torch.zeros(acts.shape[1], dtype=torch.bool)
    for h in range(acts.shape[0]):
        o, r, _, _ = sim.step(acts[h])
        live = ~ended
        assert torch.equal(o[live], ro.obs[h][live]) and torch.equal(r[live], ro.reward[h][live])
        ended |= ro.terminated[h] | ro.truncated[h]


@pytest.mark.parametrize("model", ["unicycle", "rigid_body"])
def test_look_ahead_equals_live_stepping_and_leaves_the_env_alone(model):
    env = OffroadVectorEnv(num_envs=6, max_episode_steps=200, **small_env(dynamics=model))
    env.reset(seed=5)
    env.step(torch.zeros(6, 2))
    snap = env.get_state()
    acts = torch.stack(_actions(6, 30, seed=3))
    ro = env.lookahead(snap, acts)
    assert ro.obs.shape == (30, 6, env.single_observation_space.shape[0])
    # the live env did not move
    assert all(torch.equal(env.get_state().tensors[k], v) for k, v in snap.tensors.items())
    # M = N, rows in place, eager: bit for bit with the live step (no autoreset), up to a
    # row's end
    _assert_live_steps_match(env, acts, ro)
    # one row repeated in other positions: within float rounding of its own look-ahead
    rep = env.lookahead(snap.select([4]).repeat(6), acts[:, 4:5].expand(30, 6, 2).contiguous())
    assert (rep.obs - ro.obs[:, 4:5]).abs().max() < 1e-4


def test_an_ended_row_stays_ended_in_a_look_ahead():
    env = OffroadVectorEnv(num_envs=4, max_episode_steps=5, **small_env())
    env.reset(seed=0)
    ro = env.lookahead(env.get_state(), torch.zeros(12, 4, 2))
    assert bool(ro.truncated[4].all()) and bool(ro.truncated[-1].all())
    assert float(ro.reward[5:].abs().max()) == 0.0
    assert torch.equal(ro.obs[-1], ro.obs[4])
    # the rows are not simulated past their end: driving on after the time limit moves none
    ro = env.lookahead(env.get_state(), torch.ones(12, 4, 2))
    assert torch.equal(ro.position[-1], ro.position[4])
    la = env.unwrapped._lookaheads[4]
    assert torch.equal(
        ro.position[-1], torch.stack((la.sim.state.x, la.sim.state.y), 1).double()
        + torch.as_tensor(la.sim.origin[:2], dtype=torch.float64))


def test_bad_look_ahead_actions_are_refused():
    env = OffroadVectorEnv(num_envs=4, **small_env())
    env.reset(seed=0)
    snap = env.get_state()
    with pytest.raises(ValueError, match=r"\(H, 4, 2\)"):
        env.lookahead(snap, torch.zeros(3, 4, 3))
    bad = torch.zeros(3, 4, 2)
    bad[1, 2, 0] = float("nan")
    with pytest.raises(ValueError, match=r"NaN or inf at \(step, row\) \[\[1, 2\]\]"):
        env.lookahead(snap, bad)


@pytest.mark.parametrize("model", ["unicycle", "rigid_body"])
def test_a_closed_loop_look_ahead_equals_live_stepping_with_the_policy(model):
    # a policy run inside the look-ahead (M = N, rows in place, eager) is the live env driven
    # by the same policy, bit for bit up to each row's end; its actions replayed open loop give
    # the same rollout; it stops once every row has ended
    env = OffroadVectorEnv(num_envs=6, max_episode_steps=40, **small_env(dynamics=model))
    obs, _ = env.reset(seed=7)
    snap = env.get_state()
    w = torch.linspace(-1.0, 1.0, 6).unsqueeze(1)
    seen = []

    def policy(o):
        seen.append(o)
        return torch.cat((0.8 - 0.1 * o[:, :1].clamp(-1, 1), w), 1)

    ro = env.lookahead(snap, policy, horizon=60)
    assert torch.equal(seen[0], obs)  # the snapshot's own observation comes first
    assert ro.obs.shape[0] == 40 and bool((ro.terminated[-1] | ro.truncated[-1]).all())
    acts = torch.stack([policy(o) for o in [obs, *ro.obs[:-1]]])
    _assert_live_steps_match(env, acts, ro)
    env.set_state(snap)
    again = env.lookahead(snap, acts)
    assert torch.equal(again.obs, ro.obs) and torch.equal(again.end_reason, ro.end_reason)


def test_a_bad_look_ahead_policy_is_refused():
    env = OffroadVectorEnv(num_envs=4, **small_env())
    env.reset(seed=0)
    snap = env.get_state()
    with pytest.raises(ValueError, match="horizon an int >= 1"):
        env.lookahead(snap, lambda o: torch.zeros(4, 2))
    with pytest.raises(ValueError, match=r"must return \(4, 2\) floats"):
        env.lookahead(snap, lambda o: torch.zeros(4, 3), horizon=5)
    with pytest.raises(ValueError, match=r"actions at step 0 hold NaN"):
        env.lookahead(snap, lambda o: torch.full((4, 2), float("nan")), horizon=5)
    with pytest.raises(ValueError, match="horizon is for a policy"):
        env.lookahead(snap, torch.zeros(3, 4, 2), horizon=3)
    assert all(torch.equal(env.get_state().tensors[k], v) for k, v in snap.tensors.items())
