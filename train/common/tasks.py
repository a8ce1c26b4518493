"""The tasks of an OffroadBench suite (a :class:`~train.common.suite.SuiteSpec`, ``spec`` below): drawn from its seeds on its level stack, or stored in its
spec (v2 on; a suite of maps always), in the suite's task order, sliced to its subset."""

from __future__ import annotations

import math

import numpy as np
import torch

import terrain as terrain_pkg
from offroad_env.core.spawn import ground_slope

from train.common import worlds as world_suites

__all__ = ["suite_tasks", "start_slope_limits"]


def suite_tasks(spec, maps: terrain_pkg.HeightMap,
                min_pairs: int | None = None) -> dict[str, np.ndarray]:
    """The suite's tasks on its level stack ``maps``: ``map_index`` ``(T,)``, ``start``
    ``(T, 3)`` (x, y, yaw facing the goal) and ``goal`` ``(T, 2)`` [m], ``family``, ``level``,
    ``world`` ``(T,)``; tasks in the order family, level, world, pair. ``min_pairs``: a map
    may give fewer than ``spec.pairs``, down to this many (candidates for
    :mod:`train.suite_starts`; default ``spec.pairs``)."""
    if spec.maps is not None:
        return _sliced(spec, world_suites.map_task_arrays(spec))
    lv = spec.levels
    if spec.tasks is not None:
        return _sliced(spec, _stored_tasks(spec, lv))
    x0, x1, y0, y1 = maps.bounds
    m = spec.margin
    tan_max = math.tan(math.radians(spec.max_start_slope_deg))
    out = {k: [] for k in ("map_index", "start", "goal", "family", "level", "world")}
    for fi in range(len(spec.families)):
        for level in range(spec.num_levels):
            for w in range(spec.worlds):
                i = lv.map_index(fi, level, w)
                rng = np.random.default_rng((spec.pair_seed, i))
                k = 4096
                sx, sy = rng.uniform(x0 + m, x1 - m, k), rng.uniform(y0 + m, y1 - m, k)
                d = rng.uniform(*spec.goal_distance, k)
                b = rng.uniform(-math.pi, math.pi, k)
                gx, gy = sx + d * np.cos(b), sy + d * np.sin(b)
                ok = (gx >= x0 + m) & (gx <= x1 - m) & (gy >= y0 + m) & (gy <= y1 - m)
                for px, py in ((sx, sy), (gx, gy)):  # the plane fitted under a 2 x 2 m patch
                    ok &= ground_slope(maps, torch.from_numpy(px), torch.from_numpy(py),
                                       torch.full((k,), i)).numpy() <= tan_max
                picked = np.flatnonzero(ok)[:spec.pairs]
                if picked.size < (spec.pairs if min_pairs is None else min_pairs):
                    raise ValueError(f"suite {spec.name}: map {i} (family "
                                     f"{spec.families[fi]}, level {level}) has only "
                                     f"{picked.size} start/goal pairs with ground under "
                                     f"{spec.max_start_slope_deg} deg; raise "
                                     "max_start_slope_deg")
                for j in picked:
                    out["map_index"].append(i)
                    out["start"].append((sx[j], sy[j], math.atan2(gy[j] - sy[j], gx[j] - sx[j])))
                    out["goal"].append((gx[j], gy[j]))
                    out["family"].append(fi)
                    out["level"].append(level)
                    out["world"].append(w)
    return _sliced(spec, {k: np.asarray(v) for k, v in out.items()})


def _sliced(spec, tasks: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``tasks`` (every task of the grid, in order) with the suite's task index ``task``
    added, cut to the slice's (:attr:`SuiteSpec.subset`)."""
    tasks["task"] = np.arange(len(tasks["map_index"]))
    if spec.subset is None:
        return tasks
    ids = spec.task_ids()
    return {k: v[ids] for k, v in tasks.items()}


def _stored_tasks(spec, lv) -> dict[str, np.ndarray]:
    """The stored tasks of ``spec``'s families (its :attr:`~SuiteSpec.tasks`), in the order
    family, level, world, pair, as :func:`suite_tasks` returns them."""
    out = {k: [] for k in ("map_index", "start", "goal", "family", "level", "world")}
    for fi, fam in enumerate(spec.families):
        mine = [t for t in spec.tasks if t["family"] == fam]
        mine.sort(key=lambda t: (t["level"], t["world"]))  # stable: pairs keep their order
        for t in mine:
            out["map_index"].append(lv.map_index(fi, t["level"], t["world"]))
            out["start"].append(tuple(t["start"]))
            out["goal"].append(tuple(t["goal"]))
            out["family"].append(fi)
            out["level"].append(t["level"])
            out["world"].append(t["world"])
    return {k: np.asarray(v) for k, v in out.items()}


def start_slope_limits(spec) -> tuple[float, ...]:
    """The start and goal slope limit [deg] of each map of :meth:`SuiteSpec.on_one_grid`'s
    level stack, by its family (its ``per_family`` ``max_start_slope_deg``, else the suite's):
    the ``TaskConfig.max_start_slope_deg`` that draws training's starts and goals where the
    suite's lie (``train.ppo --suite``). A suite of maps: the suite's limit on each map."""
    if spec.maps is not None:
        return tuple(float(spec.max_start_slope_deg) for _ in spec.maps)
    own = {f: spec.per_family.get(f, {}).get("max_start_slope_deg", spec.max_start_slope_deg)
           for f in spec.families}
    return tuple(float(own[f]) for f in spec.families
                 for _ in range(spec.num_levels * spec.worlds))
