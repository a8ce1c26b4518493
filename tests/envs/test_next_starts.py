"""Next starts prepared ahead (offroad_env.core.next_starts): the same episodes as the reset they
replace, in fewer solver calls, and never used once the stream, the map range or the maps
have moved on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from offroad_env import OffroadVectorEnv
from offroad_env.sim.config import ImuConfig

from env_util import small_env

HERE = Path(__file__).resolve().parent

# Run in a process of its own with ATen's scalar kernels: a vectorised kernel may round a row by
# where it falls in the batch (a SIMD lane or the scalar tail, 1 ulp of atan2), and a prepared
# start is computed in another batch than the reset it replaces. With scalar kernels the two
# must agree bit for bit.
_SCRIPT = r"""
import json, sys, torch
sys.path.insert(0, sys.argv[1])
from env_util import small_env
from offroad_env import OffroadVectorEnv

def run(prepared):
    env = OffroadVectorEnv(num_envs=24, max_episode_steps=15, **small_env(dynamics="rigid_body"))
    if not prepared:
        env.unwrapped.sim.next_starts = None
    env.reset(seed=5)
    env.unwrapped.set_episode_steps(torch.arange(24) % 15)  # episodes end at different steps
    g = torch.Generator().manual_seed(0)
    out, resets = [], 0
    for t in range(60):
        o, r, te, tr, info = env.step(torch.rand(24, 2, generator=g) * 2 - 1)
        resets += int((te | tr).sum()) if t < 59 else 0  # reset at the next step
        out.append(torch.cat([o, r[:, None]], 1))
    st = env.unwrapped.sim.state
    out.append(torch.cat([st.body_pos, st.brake_anchor], 1))
    return torch.stack(out[:-1]), out[-1], resets, env.unwrapped.sim.next_starts

a, sa, resets, ns = run(True)
b, sb, _, _ = run(False)
print(json.dumps({"equal": bool(torch.equal(a, b) and torch.equal(sa, sb)),
                  "diff": float((a - b).abs().max()), "resets": resets, "calls": ns.calls,
                  "taken": ns.rows_taken, "prepared": ns.rows_prepared}))
"""


def test_prepared_starts_give_the_episodes_the_reset_gives_in_fewer_calls():
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", _SCRIPT, str(HERE.parent)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["equal"], out
    assert out["resets"] >= 40  # episodes of at most 15 steps: many autoresets
    assert out["taken"] == out["resets"]  # every reset row took a prepared start
    assert out["calls"] < out["resets"] / 4  # in a few batched calls


def _stepped(n=16, **kw):
    env = OffroadVectorEnv(num_envs=n, max_episode_steps=10, **small_env(dynamics="rigid_body",
                                                                          **kw))
    env.reset(seed=1)
    env.set_episode_steps(torch.arange(n) % 10)  # episodes end at different steps
    g = torch.Generator().manual_seed(0)
    for _ in range(12):
        env.step(torch.rand(n, 2, generator=g) * 2 - 1)
    return env, env.unwrapped.sim


def test_a_prepared_start_is_void_once_its_stream_or_map_range_moves_on():
    env, sim = _stepped()
    ns = sim.next_starts
    assert ns.calls >= 1 and ns.rows_taken >= 16
    ns._prepare(torch.arange(16))
    assert bool(ns.valid().all())
    # another map range for rows 0-3: their prepared starts are void, the others' are not
    lo = torch.zeros(16, dtype=torch.int64)
    sim.set_map_range(lo, torch.ones(16, dtype=torch.int64))
    assert not bool(ns.valid().any())  # no range -> a range: every row's start is void
    ns._prepare(torch.arange(16))
    sim.set_map_range(lo + (torch.arange(16) < 4), torch.ones(16, dtype=torch.int64))
    valid = ns.valid()
    assert not bool(valid[:4].any()) and bool(valid[4:].all())
    # a draw from row 5's stream moves its counter: void
    sim.state.counters = sim.state.counters.index_add(0, torch.tensor([5]), torch.tensor([1]))
    assert not bool(ns.valid()[5])
    # new keys (a reset with a seed): all void
    env.reset(seed=2)
    assert not bool(ns.valid().any())


def test_streams_that_move_during_an_episode_compute_the_reset_where_it_happens():
    # a noisy IMU draws from the streams every step: nothing is prepared
    env, sim = _stepped(imu=ImuConfig(accel_noise=0.05))
    assert sim.next_starts.calls == 0
    # per-environment parameters (domain randomization): nothing is prepared either
    env, sim = _stepped()
    calls = sim.next_starts.calls
    sim.set_params(torch.ones(16, dtype=torch.bool), friction=torch.full((16,), 0.7))
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        env.step(torch.rand(16, 2, generator=g) * 2 - 1)
    assert sim.next_starts.calls == calls


def test_a_snapshot_replays_bit_for_bit_in_a_fresh_env_with_prepared_starts():
    # N = 300 (past any SIMD width), short spread episodes: the original run takes starts
    # prepared before the snapshot, in batches a fresh env would not form by itself (a row can
    # round by 1 ulp by where it falls in a batch). The snapshot carries the prepared starts,
    # so the restored env prepares in the same batches and replays bit for bit.
    n = 300
    kw = small_env(dynamics="rigid_body")
    env = OffroadVectorEnv(num_envs=n, max_episode_steps=12, **kw)
    env.reset(seed=4)
    env.set_episode_steps(torch.arange(n) % 12)
    g = torch.Generator().manual_seed(0)
    for _ in range(15):
        env.step(torch.rand(n, 2, generator=g) * 2 - 1)
    snap = env.get_state()
    acts = [torch.rand(n, 2, generator=g) * 2 - 1 for _ in range(60)]

    def record(e):
        out = []
        for a in acts:
            o, r, te, tr, _ = e.step(a)
            out.append(torch.cat([o, r[:, None], te[:, None].float(), tr[:, None].float()], 1))
        return torch.stack(out)

    first = record(env)
    fresh = OffroadVectorEnv(num_envs=n, max_episode_steps=12, **kw)
    fresh.reset(seed=99)
    fresh.set_state(snap)
    again = record(fresh)
    assert bool((first[..., -2:] > 0).any())  # episodes ended (and restarted) in the replay
    assert torch.equal(first, again), float((first - again).abs().max())
