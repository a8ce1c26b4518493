"""Starts that are starts: choose a suite's tasks whose starts rest on the model, braked, and
store them as a new suite version (issue 44, item 6).

A task's start is kept when, reset there with the brake on (the model's own rest,
:mod:`offroad_env.physics.rest`):

* the rest check passes (it settles, friction holds it, and it does not tip: the placement's
  ``converged`` and ``stable``), and
* held braked for ``hold_steps`` steps (10 s), its episode does not end and its base moves
  less than ``max_creep`` (1 cm).

Candidates are the suite's own draws (the plane-fit filter of :func:`~train.common.suite.suite_tasks`
first, ``candidates`` times the pairs a map needs, in draw order); each map keeps the first
``pairs`` that pass. The chosen tasks are written into the new spec (``tasks``), so every
machine runs the same tasks whatever its last bit.

    python -m train.suite_starts --from offroad-bench-v1 --to offroad-bench-v2
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from importlib.metadata import version as package_version

import numpy as np
import torch

from offroad_env import OffroadVectorEnv

from train.common.suite import SuiteSpec, load_suite, suite_config, suite_path, suite_tasks

__all__ = ["braked_check", "choose_tasks", "main"]


def braked_check(spec: SuiteSpec, tasks: dict, hold_steps: int = 200,
                 max_creep: float = 0.01, maps=None, chunk: int = 1024
                 ) -> dict[str, np.ndarray]:
    """Reset every task of ``tasks`` (on the level stack of ``spec``, one grid) braked and hold
    it ``hold_steps`` steps with the stuck rule off. Returns ``(T,)`` arrays: ``rest_ok`` (the
    reset's rest check), ``ended`` (end reason code, 0: none), ``moved`` [m] (the rear axle's
    horizontal displacement while the episode ran) and ``ok`` (all three pass). ``maps``: the
    level stack, where the caller has it (else it is generated). The hold is the env's
    look-ahead (``env.lookahead``: no autoreset, an ended task stays as it ended), ``chunk``
    rows at a time."""
    cfg = suite_config(spec)
    cfg = replace(cfg, task=replace(cfg.task, stuck_time=None, stuck_speed=None),
                  heightmap=maps)
    T = len(tasks["map_index"])
    env = OffroadVectorEnv(num_envs=T, config=cfg, max_episode_steps=hold_steps + 1)
    base = env.unwrapped
    lo = torch.as_tensor(tasks["map_index"])
    base.set_map_range(lo, torch.ones_like(lo))
    env.reset(seed=spec.seed, options={
        "start_pose": torch.as_tensor(np.asarray(tasks["start"]), dtype=torch.float64),
        "goal": torch.as_tensor(np.asarray(tasks["goal"]), dtype=torch.float64)})
    view = base.state_view()
    rest_ok = (view.contact.converged & view.contact.stable).numpy()
    p0 = torch.stack((view.x, view.y), 1)
    ended = np.zeros(T, dtype=np.int64)
    moved = np.zeros(T)
    snap = env.get_state()
    A = base.action_space.shape[-1]
    with torch.inference_mode():  # the look-ahead: no autoreset, an ended task stays ended
        for lo_row in range(0, T, chunk):
            rows = torch.arange(lo_row, min(T, lo_row + chunk))
            ro = base.lookahead(snap.select(rows), torch.zeros(hold_steps, len(rows), A))
            ended[rows.numpy()] = ro.end_reason[-1].numpy()
            moved[rows.numpy()] = (ro.position[-1] - p0[rows]).norm(dim=1).numpy()
    env.close()
    return {"rest_ok": rest_ok, "ended": ended, "moved": moved,
            "ok": rest_ok & (ended == 0) & (moved < max_creep)}


def choose_tasks(spec: SuiteSpec, candidates: int = 3, hold_steps: int = 200,
                 progress: bool = True) -> tuple[list[dict], dict]:
    """The tasks of ``spec`` whose starts pass :func:`braked_check`, ``spec.pairs`` per map
    from ``candidates x pairs`` draws that pass the suite's plane-fit filter, in draw order;
    a map where fewer pass (a steep real window) fills up from its other draws (start and
    goal without the plane-fit limit), the starts checked the same way. Returns ``(tasks, counts
    per family)``."""
    chosen, counts = [], {}
    for g in spec.groups():
        env = OffroadVectorEnv(num_envs=1, config=suite_config(g))
        maps = env.unwrapped.terrain
        env.close()
        cand = suite_tasks(replace(g, pairs=g.pairs * candidates), maps, min_pairs=0)
        check = braked_check(g, cand, hold_steps, maps=maps)
        # every draw with its goal in bounds: fills the maps that lack starts
        more = suite_tasks(replace(g, pairs=4096, max_start_slope_deg=89.9), maps, min_pairs=0)
        keyed = lambda t, fi, lv, w: np.flatnonzero(  # noqa: E731
            (t["family"] == fi) & (t["level"] == lv) & (t["world"] == w))
        short, extra_rows = {}, []
        for fi in range(len(g.families)):
            for lv in range(g.num_levels):
                for w in range(g.worlds):
                    rows = keyed(cand, fi, lv, w)
                    if int(check["ok"][rows].sum()) < g.pairs:
                        seen = {tuple(cand["start"][j]) for j in rows}
                        mk = [j for j in keyed(more, fi, lv, w)
                              if tuple(more["start"][j]) not in seen][:4 * g.pairs]
                        short[(fi, lv, w)] = (len(extra_rows), len(mk))
                        extra_rows += mk
        if extra_rows:
            sub = {k: v[extra_rows] for k, v in more.items()}
            chk = braked_check(g, sub, hold_steps, maps=maps)
        for fi, fam in enumerate(g.families):
            c = counts.setdefault(fam, {"candidates": 0, "refused": 0, "filled_up": 0})
            for level in range(g.num_levels):
                for w in range(g.worlds):
                    rows = keyed(cand, fi, level, w)
                    good = [(cand, j) for j in rows[check["ok"][rows]]]
                    c["candidates"] += len(rows)
                    c["refused"] += int((~check["ok"][rows]).sum())
                    if (fi, level, w) in short:
                        at, k = short[(fi, level, w)]
                        c["candidates"] += k
                        c["refused"] += int((~chk["ok"][at:at + k]).sum())
                        fill = [(more, extra_rows[at + i]) for i in range(k)
                                if chk["ok"][at + i]][:max(0, g.pairs - len(good))]
                        good += fill
                        c["filled_up"] += len(fill)
                    if len(good) < g.pairs:
                        raise ValueError(f"{fam} level {level} world {w}: only {len(good)} "
                                         "starts rest braked; raise --candidates")
                    for t, j in good[:g.pairs]:
                        chosen.append({"family": fam, "level": level, "world": w,
                                       "start": [float(v) for v in t["start"][j]],
                                       "goal": [float(v) for v in t["goal"][j]]})
            # of the first `pairs` draws (the previous version's tasks), how many fail
            first = np.concatenate([np.flatnonzero((cand["family"] == fi) & (cand["level"] == lv)
                                                   & (cand["world"] == w))[:g.pairs]
                                    for lv in range(g.num_levels) for w in range(g.worlds)])
            c["old_tasks_refused"] = int((~check["ok"][first]).sum())
        if progress:
            print(f"group {g.families}: {len(cand['map_index'])} candidates checked",
                  flush=True)
    return chosen, counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", default="offroad-bench-v1",
                    help="the suite to draw from: a name or a JSON file")
    ap.add_argument("--to", dest="dst", default="offroad-bench-v2",
                    help="the new suite: a name (written to train/suites/) or a JSON file")
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--hold-steps", type=int, default=200)
    args = ap.parse_args(argv)
    src = load_suite(args.src)
    tasks, counts = choose_tasks(src, args.candidates, args.hold_steps)
    raw = json.loads(suite_path(args.src).read_text())
    out = suite_path(args.dst)
    raw.update(name=out.stem, version=src.version + 1, tasks=tasks,
               measured_with=package_version("offroad-env"))
    raw["description"] = (raw["description"] + f" Version {src.version + 1}: the same maps and "
                          "draws, each start checked on the physical model (it rests braked "
                          f"for {args.hold_steps} steps: no end, under 1 cm of creep; "
                          "train.suite_starts), the tasks stored.")
    out.write_text(json.dumps(raw, indent=1) + "\n")
    print(json.dumps(counts, indent=1))
    print(f"wrote {out} ({len(tasks)} tasks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
