"""Golden trajectories: fixed-seed rollouts of every registered id and of the models' main
combinations, kept so that a change of behaviour shows.

Each case is a vector env of ``N_ENVS`` sub-environments (one case is the single env) driven for
up to ``STEPS`` steps by actions drawn from a fixed numpy stream (forward drive in [0.2, 1.2]
and a steering random walk, both past the [-1, 1] bound at times, so clipping is exercised),
with the default NEXT_STEP autoreset and a 100-step time limit, so episodes end (goal, hole,
off the map, time limit) and restart inside the run. A rollout gives

* continuous arrays (``CONTINUOUS``): the observations (the reset's first) and rewards;
* discrete arrays: ``terminated``, ``truncated``, ``end_reason`` and, after each step, every
  integer or boolean field of the simulator's state and of its ground placement (contact
  flags, holes, off-map wheels, settled flags, tip and stall counters, the map index).

Two uses (``tests/test_golden.py`` says why they differ):

* **Across machines** (the default tests): ``tests/golden/envelope.npz`` holds each case's
  reference over a horizon ``H`` and a tolerance per step and observation column, *measured*
  when it was recorded (:func:`measure`): the case is run again from starts nudged by one ulp
  and with one-ulp nudges at every step, and the tolerance is ``SAFETY`` times the largest
  spread seen up to that step, plus ``FLOOR_ULPS`` ulps of the column's size. ``H`` ends
  before the first step where any nudged run's discrete arrays differ from the reference, or
  a continuous column has spread past ``CHAOS`` of its size (chaos has begun), capped at
  ``STEPS``. ``python tests/golden_cases.py`` re-records every case (a
  change of the physics on purpose; the commit says why); ``--case NAME`` one case.
* **On one machine, bit for bit** (a refactor's check): ``benchmarks/golden.py --record FILE``
  before the change and ``--check FILE`` after it.
"""

from __future__ import annotations

import os
from pathlib import Path

# The kernels the records were made with (tests/test_golden.py says why); set before torch
# loads. A user's own setting is kept.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_CBWR", "COMPATIBLE")

import gymnasium as gym
import numpy as np
import torch

import offroad_env  # noqa: F401  (registers the ids)
import terrain
from offroad_env.sim.config import ImuConfig, TaskConfig

STEPS = 300
N_ENVS = 3
SEED = 123
LIMIT = 100
FILE = Path(__file__).parent / "golden" / "envelope.npz"
#: the recorded arrays compared within a tolerance; every other array must be equal
CONTINUOUS = ("obs", "reward")
#: tolerance = SAFETY x the nudged runs' largest spread so far + FLOOR_ULPS ulps of the column
SAFETY = 8.0
FLOOR_ULPS = 16.0
#: the horizon also ends where a nudged run's continuous column has spread past this share of
#: the column's size (plus 1): chaos shows there a step before the discrete arrays part
CHAOS = 1e-2
#: the nudged runs of :func:`measure`: (start nudge direction, per-step nudge seed or None)
NUDGES = ((1.0, None), (-1.0, None), (0.0, 1), (0.0, 2))
#: a horizon shorter than this makes a case useless as a check: recording refuses it
MIN_HORIZON = 30


def _randomized(randomization=None, **kw):
    from wrappers import DomainRandomization
    env = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=N_ENVS,
                       vectorization_mode="vector_entry_point", max_episode_steps=LIMIT,
                       **{"dynamics": "skid_steer",
                          "imu": ImuConfig(accel_noise=0.05, gyro_noise=0.01,
                                           accel_bias_walk=0.01), **kw})
    return DomainRandomization(env, randomization)


def case_kwargs(name: str) -> tuple[str, dict]:
    """``(env id, keyword overrides)`` of a vector case."""
    if name.startswith("id:"):
        return name[3:], {}
    env_id, kw = "offroad_env/OffroadNav-v1", {}
    if name == "skid_rigid":
        kw = dict(dynamics="skid_steer", ground="rigid_contact")
    elif name == "ackermann_rough_rigid":
        env_id = "offroad_env/OffroadNavRough-v1"
        kw = dict(dynamics="ackermann", ground="rigid_contact", action_repeat=2)
    elif name == "six_wheel_rigid_skid":
        kw = dict(vehicle="six_wheel_rover", dynamics="skid_steer", ground="rigid_contact")
    elif name == "small_map_four_wheel":  # reaches goals, drives off the map
        kw = dict(terrain=terrain.PerlinConfig(size=(8.0, 8.0), resolution=(0.1, 0.1),
                                               amplitude=0.8),
                  task=TaskConfig(goal_distance=(1.0, 3.0), goal_radius=1.0, spawn_margin=2.0))
    elif name == "rigid_body_hard":
        kw = dict(dynamics="rigid_body")
    elif name == "rigid_body_soil":
        from offroad_env.physics.rigid_params import RigidBodyParams
        kw = dict(dynamics="rigid_body", dynamics_params=RigidBodyParams(soil="dry_sand"),
                  obs_terms=("z_rel", "roll_pitch", "yaw_sincos", "body_velocity", "imu",
                             "goal", "prev_action", "soil"))
    return env_id, kw


def make(name: str, **overrides):
    """The case's env, with config ``overrides`` on top of its own (a sensitivity check;
    ``randomization``: the randomized case's :class:`wrappers.RandomizationConfig`)."""
    if name == "single_rough_rigid":
        return offroad_env.OffroadEnv(**{"task": "nav_rough", "max_episode_steps": LIMIT,
                                         "ground": "rigid_contact", **overrides})
    if name == "randomized_skid":
        return _randomized(**overrides)
    env_id, kw = case_kwargs(name)
    return gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode="vector_entry_point",
                        max_episode_steps=LIMIT, **{**kw, **overrides})


CASES = tuple(f"id:{i}" for i in offroad_env.ENV_IDS) + (
    "skid_rigid", "ackermann_rough_rigid", "six_wheel_rigid_skid", "randomized_skid",
    "small_map_four_wheel", "single_rough_rigid", "rigid_body_hard", "rigid_body_soil")
#: the cases whose model reads friction and mass (the kinematic ones read neither)
DYNAMIC_CASES = ("skid_rigid", "six_wheel_rigid_skid", "randomized_skid", "rigid_body_hard",
                 "rigid_body_soil")


#: integer fields that are not outcomes: the random streams' keys and counters, and the rest
#: solver's iteration count (it moves with the last bit of a start, the rest it finds does not)
NOT_OUTCOMES = ("keys", "counters", "iterations")


def _discrete_state(sim) -> dict[str, np.ndarray]:
    """Every integer or boolean tensor of the simulator's state and placement, ``(N, ...)``,
    except :data:`NOT_OUTCOMES`."""
    out = {}
    st = sim.state
    for prefix, table in (("state", {n: getattr(st, n) for n in st.fields}),
                          ("contact", vars(st.contact))):
        for name, v in table.items():
            if (isinstance(v, torch.Tensor) and not v.is_floating_point()
                    and name not in NOT_OUTCOMES):
                out[f"{prefix}.{name}"] = v
    return {k: v.detach().cpu().numpy().copy() for k, v in out.items()}


def nudge_state(sim, direction) -> None:
    """Move every floating-point state field of ``sim`` by one ulp: ``direction`` +1 or -1
    everywhere, or a ``torch.Generator`` drawing +1 or -1 per element."""
    st = sim.state
    for name in st.fields:
        v = getattr(st, name)
        if not (isinstance(v, torch.Tensor) and v.is_floating_point()):
            continue
        if isinstance(direction, torch.Generator):
            sign = torch.randint(0, 2, v.shape, generator=direction).to(v.dtype) * 2 - 1
        else:
            sign = torch.full_like(v, direction)
        # keep exact zeros (a quaternion left zero marks a fresh body; a zero bias stays off)
        moved = torch.nextafter(v, torch.where(sign > 0, torch.full_like(v, float("inf")),
                                               torch.full_like(v, float("-inf"))))
        # in the field's own memory layout (some model fields are column-major views)
        out = torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=v.device)
        setattr(st, name, out.copy_(torch.where(v == 0, v, moved)))


def rollout(name: str, steps: int = STEPS, nudge=None, before=None,
            overrides: dict | None = None) -> dict[str, np.ndarray]:
    """Run case ``name`` for ``steps`` steps; ``{key: (steps + 1 or steps, N, ...)}`` arrays
    (``obs`` and the discrete state include the reset first).

    Args:
        nudge: ``(start, seed)``: after the reset move every float state field by ``start``
            ulps (+1, -1 or 0); with ``seed``, also by a random +-1 ulp after every step.
        before: ``fn(env)`` called after the reset (a sensitivity check's change), then the
            env is reset again with the same seed.
        overrides: config fields on top of the case's own (a sensitivity check's change).
    """
    torch.manual_seed(0)
    env = make(name, **(overrides or {}))
    single = name == "single_rough_rigid"
    obs, _ = env.reset(seed=SEED)
    if before is not None:
        before(env)
        obs, _ = env.reset(seed=SEED)
    sim = env.unwrapped.sim
    gen = None
    if nudge is not None:
        start, seed = nudge
        if start:
            nudge_state(sim, start)
        if seed is not None:
            gen = torch.Generator().manual_seed(seed)
    names = list(offroad_env.task.task.REASONS.values())
    rng = np.random.default_rng(7)
    out = {"obs": [np.asarray(obs)[None].copy() if single else np.asarray(obs).copy()],
           "reward": [], "terminated": [], "truncated": [],
           "end_reason": []}
    for k, v in _discrete_state(sim).items():
        out[k] = [v]
    steer = np.zeros(1 if single else N_ENVS)
    for _ in range(steps):
        steer = np.clip(steer + rng.normal(0.0, 0.3, steer.shape), -1.3, 1.3)
        a = np.stack((rng.uniform(0.2, 1.2, steer.shape), steer), 1).astype(np.float32)
        if single:
            obs, r, term, trunc, info = env.step(a[0])
            reason = names.index(info["end_reason"].label)
            if term or trunc:
                obs, _ = env.reset()
            obs, r, term, trunc = (np.asarray(obs)[None], np.float32([r]), np.array([term]),
                                   np.array([trunc]))
            reason = np.array([reason])
        else:
            obs, r, term, trunc, info = env.step(torch.as_tensor(a))
            obs, r, term, trunc = (t.numpy() for t in (obs, r, term, trunc))
            reason = np.asarray(info["end_reason"]).astype(np.int64)
        if gen is not None:
            nudge_state(sim, gen)
        out["obs"].append(np.asarray(obs).copy())
        out["reward"].append(np.asarray(r).copy())
        out["terminated"].append(np.asarray(term).copy())
        out["truncated"].append(np.asarray(trunc).copy())
        out["end_reason"].append(reason.astype(np.int64))
        for k, v in _discrete_state(sim).items():
            out[k].append(v)
    env.close()
    return {k: np.stack(v) for k, v in out.items()}


def _columns(a: np.ndarray) -> np.ndarray:
    """``(T, N, C)``: a ``(T, N, ...)`` array with its trailing axes as C columns (a
    ``(T, N)`` array as one column)."""
    return a.reshape(a.shape[0], a.shape[1], -1) if a.ndim > 2 else a.reshape(*a.shape, 1)


def measure(name: str, steps: int = STEPS) -> dict[str, np.ndarray]:
    """The reference of case ``name`` over its horizon and the tolerances of its continuous
    arrays, measured from the :data:`NUDGES` runs (module docstring). Returns the record's
    arrays: each reference array cut to the horizon H (``ref/KEY``), ``horizon``, and the
    nudged runs' largest spread from the reference per step and column of each continuous
    array (``spread/obs`` ``(H + 1, C)``, ``spread/reward`` ``(H, 1)``), from which
    :func:`tolerance` makes the tolerance."""
    ref = rollout(name, steps)
    runs = [rollout(name, steps, nudge=n) for n in NUDGES]
    spreads = {}
    for k in CONTINUOUS:
        v = _columns(ref[k]).astype(np.float64)
        spreads[k] = np.max([np.abs(_columns(run[k]).astype(np.float64) - v).max(1)
                             for run in runs], 0)
    H = min([_discrete_horizon(ref, run) for run in runs] + [_chaos_horizon(ref, spreads)])
    if H < MIN_HORIZON:
        raise SystemExit(f"{name}: the nudged runs part at step {H} (< {MIN_HORIZON}): the "
                         f"case is chaotic from the start")
    rec = {"horizon": np.int64(H)}
    for k, v in ref.items():
        rec[f"ref/{k}"] = v[:_length(v, H, steps)]
    for k in CONTINUOUS:
        rec[f"spread/{k}"] = spreads[k][:rec[f"ref/{k}"].shape[0]]
    return rec


def tolerance(rec: dict, key: str) -> np.ndarray:
    """``(T, C)`` the tolerance of continuous array ``key`` of a record per step and column:
    ``SAFETY`` x the nudged runs' largest spread up to that step + ``FLOOR_ULPS`` ulps of the
    column's largest value."""
    ref = rec[f"ref/{key}"]
    size = np.abs(_columns(ref).astype(np.float64)).max((0, 1))
    floor = FLOOR_ULPS * np.spacing(size.astype(ref.dtype)).astype(np.float64)
    return SAFETY * np.maximum.accumulate(rec[f"spread/{key}"], 0) + floor


def _chaos_horizon(ref: dict, spreads: dict) -> int:
    """Steps before the first step where a continuous column of the nudged runs has spread
    past ``CHAOS`` of its size (plus 1): a contact met a step earlier in one run than in
    another, whose discrete arrays have not shown it yet."""
    T = ref["reward"].shape[0]
    first = T
    for k, spread in spreads.items():
        size = np.abs(_columns(ref[k]).astype(np.float64)).max((0, 1))
        bad = np.nonzero((spread > CHAOS * (1.0 + size)).any(1))[0]
        if bad.size:
            lag = 1 if ref[k].shape[0] == T + 1 else 0
            first = min(first, int(bad[0]) - lag)
    return max(first, 0)


def _length(v: np.ndarray, H: int, steps: int) -> int:
    """Rows of ``key`` within ``H`` steps: H + 1 where the array starts with the reset."""
    return H + 1 if v.shape[0] == steps + 1 else H


def _discrete_horizon(ref: dict, run: dict) -> int:
    """Steps before the first step whose discrete arrays differ between two rollouts."""
    T = ref["reward"].shape[0]
    first = T
    for k, v in ref.items():
        if k in CONTINUOUS:
            continue
        lag = 1 if v.shape[0] == T + 1 else 0  # arrays that start with the reset
        bad = np.nonzero((v != run[k]).reshape(v.shape[0], -1).any(1))[0]
        if bad.size:
            first = min(first, int(bad[0]) - lag)  # the step that produced the row
    return max(first, 0)


def compare(got: dict, rec: dict) -> list[str]:
    """The ways rollout ``got`` leaves the record ``rec`` (:func:`measure`): a discrete array
    not equal over the horizon, or a continuous value outside its tolerance; [] when none. A
    ``got`` shorter than the horizon is compared over its own steps."""
    H = int(rec["horizon"])
    fails = []
    for key in sorted(k[4:] for k in rec if k.startswith("ref/")):
        if key not in got:
            fails.append(f"{key}: missing")
            continue
        n = min(got[key].shape[0], rec[f"ref/{key}"].shape[0])
        val, ref = got[key][:n], rec[f"ref/{key}"][:n]
        if val.shape != ref.shape:
            fails.append(f"{key}: shape {val.shape} against {ref.shape}")
            continue
        if key in CONTINUOUS:
            d = np.abs(_columns(val).astype(np.float64) - _columns(ref).astype(np.float64))
            tol = tolerance(rec, key)[:n, None, :]
            out = ~(d <= tol)  # NaN where the record has a number fails too
            both_nan = np.isnan(_columns(val)) & np.isnan(_columns(ref))
            out &= ~both_nan
            if out.any():
                t, n, c = np.argwhere(out)[0]
                fails.append(f"{key}: step {t} env {n} column {c}: |diff| {d[t, n, c]:.3g} > "
                             f"tolerance {tol[t, 0, c]:.3g} ({int(out.sum())} values outside, "
                             f"horizon {H})")
        elif not np.array_equal(val, ref):
            t = int(np.nonzero((val != ref).reshape(val.shape[0], -1).any(1))[0][0])
            fails.append(f"{key}: differs first at row {t} (horizon {H})")
    return fails


def load(path: Path = FILE) -> dict[str, dict[str, np.ndarray]]:
    """``{case: record}`` of an envelope file."""
    out: dict[str, dict] = {}
    with np.load(path) as f:
        for k in f.files:
            case, rest = k.split("|", 1)
            out.setdefault(case, {})[rest] = f[k]
    return out


def record(path: Path = FILE, cases: tuple = ()) -> None:
    """Measure and store every case, or only ``cases`` (``--case NAME``), keeping the
    others' records."""
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; cases: {list(CASES)}")
    recs = load(path) if cases and path.exists() else {}
    for case in cases or CASES:
        recs[case] = measure(case)
        print(f"{case}: horizon {int(recs[case]['horizon'])}", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{f"{c}|{k}": v for c, r in recs.items() for k, v in r.items()})
    print(f"recorded {len(cases or CASES)} case(s) to {path}")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Record the golden envelope (every case, or the "
                                 "cases named) into tests/golden/envelope.npz.")
    ap.add_argument("--case", action="append", default=[], metavar="NAME",
                    help=f"a case to re-record (repeatable); one of {list(CASES)}")
    record(cases=tuple(ap.parse_args().case))
