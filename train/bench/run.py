"""Running an OffroadBench suite: every task of one map grid batched in one vector env (task
``k`` is sub-env ``k``, on its own map, from its start facing its goal), each counting its first
episode; or in fixed chunks of tasks shared among torchrun ranks, each chunk's outcomes kept as it
ends so that a stopped run goes on from there.

Metrics per family and level (and per family, and overall): success rate, time to goal
(successes), tip-over, hole, off-map, time-limit and stuck rates, mean and max ``|roll|`` and
``|pitch|``, the minimum force-angle stability margin, and energy: the tractive work
``sum max(0, m (a_x - g sin(pitch)) v) dt`` [J] (kinematic models have no drive train: this is
the work that moving the body's mass along its path takes, without rolling losses). Each rate
comes with its episode count and a 95 % Wilson interval: a cell of 20 episodes says +-20 %.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

import terrain as terrain_pkg
from offroad_env.task.task import REASONS, EndReason

from train.common.logs import Progress
from train.common.outcomes import Outcomes
from train.common.suite import SuiteSpec, suite_env, suite_tasks
from train.planners.baselines import BASELINES, baseline, is_policy_name

__all__ = ["run_suite", "wilson", "OUTCOMES"]


def wilson(k: int, n: int) -> list[float]:
    """95 % Wilson score interval of ``k`` successes in ``n``."""
    if n == 0:
        return [0.0, 1.0]
    z = 1.959963984540054
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return [round(c - h, 6), round(c + h, 6)]


def _cell(sel: np.ndarray, per: dict, dt: float, extra: tuple[str, ...] = ()) -> dict:
    """The metrics of the tasks ``sel``; ``extra``: the config's own end labels (its
    termination terms), counted as the built-in ones are."""
    n = int(sel.sum())
    label = per["label"][sel]
    ok = label == EndReason.GOAL_REACHED.label
    out = {"episodes": n}
    for name, want in (("success", "goal_reached"),) + tuple((k, k) for k in OUTCOMES[1:] + extra):
        k = int((label == want).sum())
        out[f"{name}_rate"] = k / n
        out[f"{name}_ci95"] = wilson(k, n)
    out["time_to_goal_s"] = float(per["length"][sel][ok].mean() * dt) if ok.any() else None
    for key in ("roll", "pitch"):
        out[f"mean_abs_{key}_deg"] = float(per[f"mean_{key}"][sel].mean())
        out[f"max_abs_{key}_deg"] = float(per[f"max_{key}"][sel].max())
    out["min_margin_deg"] = float(per["min_margin"][sel].min())
    out["mean_min_margin_deg"] = float(per["min_margin"][sel].mean())
    out["energy_j"] = float(per["energy"][sel].mean())
    return out


def _run_group(spec: SuiteSpec, policy, device, progress: bool, label: str,
               rows: tuple[int, int] | None = None):
    """Run ``policy`` on the tasks of ``spec`` (one grid) in one vector env, or on its tasks
    ``rows = (first, end)`` only (a chunk, in rows 0, 1, ...); returns ``(tasks, per-task
    arrays, dt)``."""
    a, b = rows if rows is not None else (0, spec.num_tasks)
    env = suite_env(spec, b - a, device)
    base = env.unwrapped
    tasks = {k: v[a:b] for k, v in suite_tasks(spec, base.terrain).items()}
    T = b - a
    f64 = torch.float64
    lo = torch.as_tensor(tasks["map_index"], device=base.device)
    base.set_map_range(lo, torch.ones_like(lo))
    obs, _ = env.reset(seed=spec.seed, options={
        "start_pose": torch.as_tensor(tasks["start"], dtype=f64),
        "goal": torch.as_tensor(tasks["goal"], dtype=f64)})
    if isinstance(policy, str) and is_policy_name(policy):
        act = baseline(policy, env, spec.seed)
    elif callable(policy):
        act = policy(env)
    else:
        raise ValueError(f"policy must be one of {tuple(BASELINES)} or a function, got {policy!r}")
    cfg = base.config
    g, dt, mass = cfg.gravity, cfg.dt, base.vehicle.mass
    out = Outcomes(T)
    energy = torch.zeros(T, dtype=f64)
    min_margin = torch.full((T,), math.inf, dtype=f64)
    m0 = {n: a for n, a, _ in base.obs_layout}["stability"]
    min_margin = torch.minimum(min_margin, obs[:, m0].double().cpu())
    v_prev = base.state_view().body_velocity[:, 0].double().cpu()
    bar = Progress(base.max_episode_steps, enabled=progress, desc=label or str(policy),
                   unit="step")
    with torch.inference_mode():
        for _ in range(base.max_episode_steps):
            bar.update(1)
            obs, r, term, trunc, info = env.step(act(obs))
            view = base.state_view()
            live = out.add(r, view.roll, view.pitch, term | trunc, info["end_reason"])
            if hasattr(act, "active"):  # a planner plans only the tasks still counted
                act.active = out.active
            # the observed margin is this step's (the reset of a finished task comes later)
            min_margin = torch.where(live, torch.minimum(min_margin, obs[:, m0].double().cpu()),
                                     min_margin)
            v = view.body_velocity[:, 0].double().cpu()
            a_x = (v - v_prev) / dt
            power = (mass * (a_x - g * torch.sin(view.pitch.double().cpu())) * v).clamp_min(0)
            energy += torch.where(live, power * dt, 0.0)
            v_prev = v
            if not bool(out.active.any()):
                break
            bar.set_postfix(running=int(out.active.sum()))
    bar.close()
    env.close()
    out.finish()  # tasks that ran out of steps
    length = out.length
    labels = base.end_labels
    per = {"reason": out.reason.numpy(), "length": length.numpy(),
           "label": np.asarray([labels[int(c)] for c in out.reason.tolist()]),
           "mean_roll": np.degrees((out.roll_sum / length.clamp_min(1)).numpy()),
           "mean_pitch": np.degrees((out.pitch_sum / length.clamp_min(1)).numpy()),
           "max_roll": np.degrees(out.roll_max.numpy()),
           "max_pitch": np.degrees(out.pitch_max.numpy()),
           "min_margin": np.degrees(min_margin.numpy()), "energy": energy.numpy()}
    return tasks, per, dt


def run_suite(spec: SuiteSpec, policy, device="cpu", progress: bool = False,
              label: str = "", ranks=None, keep: Path | None = None,
              identity: str | None = None) -> dict | None:
    """Run ``policy`` on every task of ``spec``; returns the results (module docstring).

    ``policy``: ``"random"``, ``"heuristic"``, ``"careful"``, ``"physics"``, or a function
    ``(env) -> act(obs (T, D) tensor) -> (T, 2) actions``. ``progress``: a bar with its ETA
    on stderr over the episode's steps (``label`` names it; the run stops early once every task
    ends). A suite whose families have grids of their own runs one vector env per grid
    (:meth:`SuiteSpec.groups`, a bar each), or per chunk of ``spec.chunk_tasks`` tasks
    (:meth:`SuiteSpec.chunks`); the results are in the suite's family order.

    ``ranks``: a :class:`~train.common.distributed.Dist` (``torchrun``): rank i runs chunks i, i +
    world, ...; every rank's outcomes are gathered and rank 0 returns the results (the others
    None), the same as one process's where the chunks and threads are the suite's.

    ``keep``: a folder where each chunk's outcomes are stored as it ends, and read back
    instead of run again where a stored chunk's key (the suite, ``identity``: what the policy
    is, and the code of the packages) matches: a run that stopped half way (a crash, a killed
    job) goes on from its last whole chunk. Needs ``identity`` (a policy function has none of
    its own)."""
    key = None if keep is None else _chunk_key(spec, identity)
    groups = spec.groups()
    plan = spec.chunks()
    rank, world = (0, 1) if ranks is None else (ranks.rank, ranks.world)
    done = []
    for ci in range(rank, len(plan), world):
        gi, a, b = plan[ci]
        sub = groups[gi]
        name = label or str(policy)
        if len(groups) > 1:
            name += " [" + ", ".join(sub.families) + "]"
        if b - a < sub.num_tasks:
            name += f" (tasks {a}-{b - 1})"
        stored = None if key is None else _load_chunk(keep, ci, key)
        if stored is None:
            stored = _run_group(sub, policy, device, progress, name, rows=(a, b))
            if key is not None:
                _save_chunk(keep, ci, key, stored)
        elif progress:
            print(f"{name}: chunk {ci} read back from {keep}", file=sys.stderr)
        done.append((ci,) + stored)
    if ranks is not None:
        done = ranks.gather(done)
        if rank != 0:
            return None
    done.sort(key=lambda d: d[0])
    if spec.maps is not None:
        tasks, per = _map_results(spec, groups, plan, done)
        table, level_specs = _tag_table(spec, tasks, per, dt := done[0][3])
        present = list(table)
    else:
        tasks, per, present, dt = _family_results(spec, groups, plan, done)
        level_specs = {}
        for sub in groups:
            for name in sub.families:
                fc = replace(sub.levels.family, family=name)
                level_specs[name] = [terrain_pkg.level_spec(fc, lv)
                                     for lv in range(spec.num_levels)]
        level_specs = {name: level_specs[name] for name in present}
    T = spec.num_tasks
    extra = tuple(sorted(set(per["label"].tolist()) - set(REASONS.values())))
    if spec.maps is None:
        fam, lev = tasks["family"], tasks["level"]
        table = {}
        for fi, name in enumerate(present):
            table[name] = {"all": _cell(fam == fi, per, dt, extra)}
            for level in range(spec.num_levels):
                if bool(((fam == fi) & (lev == level)).any()):  # a slice's levels only
                    table[name][str(level)] = _cell((fam == fi) & (lev == level), per, dt,
                                                    extra)
    else:
        table = {name: {"all": _cell(sel, per, dt, extra)} for name, sel in table.items()}
    out_extra = {}
    if spec.maps is not None:
        ok = tasks["start_ok"].astype(bool)
        out_extra["overall_start_ok"] = _cell(ok, per, dt, extra) if ok.any() else None
        out_extra["start_ok"] = ok.tolist()
    return {
        "suite": asdict(spec), "policy": policy if isinstance(policy, str) else "function",
        "tasks": T, "overall": _cell(np.ones(T, dtype=bool), per, dt, extra), "by_family": table,
        "level_specs": level_specs, **out_extra,
        "per_task": {"end_reason": per["label"].tolist(),
                     "steps": per["length"].tolist(),
                     "max_abs_roll_deg": per["max_roll"].round(4).tolist(),
                     "max_abs_pitch_deg": per["max_pitch"].round(4).tolist(),
                     "min_margin_deg": per["min_margin"].round(4).tolist(),
                     "energy_j": per["energy"].round(4).tolist(),
                     # a slice's tasks by their index in the whole suite
                     **({} if spec.subset is None else {"task": spec.task_ids().tolist()})},
    }


def _family_results(spec, groups, plan, done):
    """The per-task arrays of a family suite's chunks, in the suite's family order:
    ``(tasks, per, families present, dt)``."""
    parts = {}
    for gi, sub in enumerate(groups):
        mine = [d for d in done if plan[d[0]][0] == gi]
        tasks = {k: np.concatenate([d[1][k] for d in mine]) for k in mine[0][1]}
        per = {k: np.concatenate([d[2][k] for d in mine]) for k in mine[0][2]}
        dt = mine[0][3]
        for fi, fam in enumerate(sub.families):
            sel = tasks["family"] == fi
            if sel.any():  # a slice may leave a family out
                parts[fam] = ({k: v[sel] for k, v in tasks.items()},
                              {k: v[sel] for k, v in per.items()})
    present = [f for f in spec.families if f in parts]
    tasks = {k: np.concatenate([parts[f][0][k] for f in present]) for k in parts[present[0]][0]}
    tasks["family"] = np.concatenate([np.full(len(parts[f][0]["family"]), i)
                                      for i, f in enumerate(present)])
    per = {k: np.concatenate([parts[f][1][k] for f in present]) for k in parts[present[0]][1]}
    return tasks, per, present, dt


def _map_results(spec, groups, plan, done):
    """The per-task arrays of a suite of maps' chunks, in the suite's task order
    (``tasks["task"]`` the suite's own index)."""
    from train.common.worlds import map_groups

    if len(groups) > 1:  # each group's task index -> the suite's
        whole = replace(spec, subset=None)
        lookup = [np.asarray(tidx) for _, tidx in map_groups(whole)]
        keep = set(spec.task_ids().tolist())
        lookup = [t for t in lookup if any(int(i) in keep for i in t)]
    tasks, per = {}, {}
    for gi in range(len(groups)):
        mine = [d for d in done if plan[d[0]][0] == gi]
        t = {k: np.concatenate([d[1][k] for d in mine]) for k in mine[0][1]}
        if len(groups) > 1:
            t["task"] = lookup[gi][t["task"]]
        for k, v in t.items():
            tasks.setdefault(k, []).append(v)
        for k in mine[0][2]:
            per.setdefault(k, []).append(np.concatenate([d[2][k] for d in mine]))
    tasks = {k: np.concatenate(v) for k, v in tasks.items()}
    per = {k: np.concatenate(v) for k, v in per.items()}
    order = np.argsort(tasks["task"], kind="stable")
    return ({k: v[order] for k, v in tasks.items()}, {k: v[order] for k, v in per.items()})


def _tag_table(spec, tasks, per, dt):
    """A suite of maps' rows: each tag's values (``"difficulty=low"``) as masks over its
    tasks, in the order the maps give them, and ``{}`` for level specs."""
    rows = {}
    for mi in tasks["map_index"]:
        for k, v in spec.maps[int(mi)].get("tags", {}).items():
            rows.setdefault(f"{k}={v}", None)
    out = {}
    for name in sorted(rows, key=lambda r: (r.split("=")[0], list(rows).index(r))):
        k, v = name.split("=", 1)
        out[name] = np.asarray([spec.maps[int(mi)].get("tags", {}).get(k) == v
                                for mi in tasks["map_index"]])
    return out, {}


#: the end reasons of a suite's cells, in the order the tables and the figure give them
OUTCOMES = ("success", "tip_over", "stuck", "hole", "off_map", "time_limit", "diverged")


def _chunk_key(spec: SuiteSpec, identity: str | None) -> str:
    """The key of a stored chunk: the suite's spec, the policy's identity, the code."""
    from terrain.cache import code_digest

    if not identity:
        raise ValueError("run_suite(keep=...) needs the policy's identity")
    root = Path(__file__).resolve().parents[2]  # the folder holding the packages
    code = code_digest(root / "offroad_env", root / "terrain", root / "train")
    text = json.dumps([asdict(spec), identity, code], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _save_chunk(folder: Path, ci: int, key: str, stored) -> None:
    """Store a chunk's ``(tasks, per-task arrays, dt)`` atomically."""
    tasks, per, dt = stored
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"chunk-{ci:04d}.{os.getpid()}.tmp.npz"
    np.savez(tmp, key=np.asarray(key), dt=np.asarray(dt),
             **{f"t/{k}": v for k, v in tasks.items()}, **{f"p/{k}": v for k, v in per.items()})
    os.replace(tmp, folder / f"chunk-{ci:04d}.npz")


def _load_chunk(folder: Path, ci: int, key: str):
    """A stored chunk ``(tasks, per-task arrays, dt)`` whose key is ``key``, else None."""
    path = folder / f"chunk-{ci:04d}.npz"
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            if str(f["key"]) != key:
                return None
            tasks = {k[2:]: f[k] for k in f.files if k.startswith("t/")}
            per = {k[2:]: f[k] for k in f.files if k.startswith("p/")}
            return tasks, per, float(f["dt"])
    except (OSError, ValueError, KeyError):
        return None  # a broken file: run the chunk again
