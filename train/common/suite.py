"""OffroadBench's suites: the versioned spec of a suite (``train/suites/<name>.json``) and its
tasks.

A spec names the vehicle and models, the task grid (families x levels x worlds x start/goal
pairs), the maps' grid, and the seeds; :func:`suite_tasks` draws the same tasks from it on every
machine. ``family_options`` sets the families' top levels (:class:`terrain.FamilyConfig`
fields, e.g. ``max_step``), and ``per_family`` gives a family a map grid of its own (a ledge needs a few
cm, :mod:`terrain.families`) or its own start slope; the runner (:mod:`train.bench`) runs the
families of each such setting in a vector env of their own (:meth:`SuiteSpec.groups`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

import terrain as terrain_pkg
from offroad_env import OffroadVectorEnv, SimConfig, make_config
from offroad_env import check_obs_terms, family_config

from train.common import worlds as world_suites
from train.common.tasks import start_slope_limits, suite_tasks

__all__ = ["SuiteSpec", "load_suite", "suite_tasks", "suite_env", "suite_config",
           "suite_episode_steps", "start_slope_limits", "SUITES_DIR"]

SUITES_DIR = Path(__file__).resolve().parents[1] / "suites"
_PER_FAMILY = ("size", "resolution", "max_start_slope_deg")
_FAMILY_FIELDS = {f.name for f in fields(terrain_pkg.FamilyConfig)} - {
    "size", "resolution", "family", "num_levels"}


#: what a refusal of an edited suite adds: the call that runs part of one
_SLICE = ("; to run part of a suite, slice it with SuiteSpec.select(families=, levels=, worlds=, "
          "pairs=, tasks=), which keeps every task on its own map")


@dataclass(frozen=True)
class SuiteSpec:
    """An evaluation suite (the fields of ``train/suites/<name>.json``).

    Attributes:
        name, version: the suite's name and version (a changed task set is a new version).
        vehicle, dynamics, ground: the vehicle preset and models.
        families, num_levels, worlds, pairs: the task grid (tasks = product).
        size, resolution: map grid [m].
        terrain_seed: seed of the maps (map ``i`` from ``default_rng((terrain_seed, i))``).
        pair_seed: seed of the start/goal pairs (map ``i``'s from ``default_rng((pair_seed,
            i))``).
        goal_distance: range of the start-to-goal distance [m].
        margin: starts and goals keep this far from the map border [m].
        max_start_slope_deg: starts and goals lie where the plane fitted to the ground within
            1 m (a 5 x 5 grid) is at most this steep.
        time_limit_s: episode limit [s]. seed: the env seed (the random policy's too).
        stuck_time_s: an episode without progress toward its goal for this long ends as
            ``stuck`` (``TaskConfig.stuck_time``; None: never, as in v0).
        family_options: :class:`terrain.FamilyConfig` fields beside the vehicle's figures
            (the families' top levels, ``soils``, ``dem``: a bare file name is a packaged data
            file); empty in v0.
        per_family: ``{family: {"size": [x, y], "resolution": [x, y],
            "max_start_slope_deg": d}}``, a family's own map grid and start slope (each
            default the suite's); empty in v0.
        obs_terms: the observation terms a policy sees (``SimConfig.obs_terms``; None, as in
            v0: the traverse task's). They change what a learned policy reads, not the tasks
            or how they are judged; the baselines read their terms by name.
        tasks: the tasks themselves, from v2 on (None: drawn by :func:`suite_tasks`): one
            ``{"family", "level", "world", "start": [x, y, yaw], "goal": [x, y]}`` per task,
            chosen once by :mod:`train.suite_starts` (starts that rest, braked, on the model)
            and stored, so every machine runs the same tasks.
        measured_with: the package version whose physics chose the stored tasks.
        chunk_tasks: how many tasks run together in one vector env (None: each grid group in
            one env, as v0-v2 were measured). The chunks are fixed by the suite, in task order
            within each group, so a run split across ``torchrun`` ranks (a chunk per rank in
            turn) steps every task in the same rows, and its JSON is a one-process run's.
        chunk_threads: torch threads per process of a chunked run (default 1), fixed by the
            suite for the same reason.
        reference: the privileged reference's run (``{"policy", "privileged", "success_rate",
            "note"}``; :mod:`train.reference`), whose per-task outcome each stored task keeps
            as ``"reference": {"end_reason", "steps"}``; None where there is none.
        subset: the tasks to run, as indices into the suite's task order (family, level,
            world, pair; None: all): a slice (:meth:`select`). The grid, and so every map and
            its seed, stays the whole suite's: a task runs on its own map in a slice too.
        maps: a suite of anyone's worlds (:mod:`train.common.worlds`): its map entries (files
            or a dataset's worlds) in place of the families; ``tasks`` then lists every task
            (``{"map", "start", "goal"}``, in that order: the suite's task order) and the
            family grid's fields are not used. materials: surfaces and soils it declares by
            name. dataset_options: its dataset's builder's keywords (e.g. ``scale``).
        goal_radius: the goal counts as reached within this distance [m] (None: the task's
            0.5 m). stuck_speed: None: stuck by progress (``stuck_time_s`` without 0.1 m
            nearer the goal); a speed [m/s]: stuck after ``stuck_time_s`` below it
            (``TaskConfig.stuck_speed``, Verti-Bench's rule).
        root: the folder a suite file's relative map paths start from (set by
            :func:`load_suite`).
    """

    name: str = "offroad-bench-v0"
    version: int = 0
    vehicle: str = "husky"
    dynamics: str = "unicycle"
    ground: str = "rigid_contact"
    families: tuple[str, ...] = terrain_pkg.HARD_FAMILIES
    num_levels: int = 10
    worlds: int = 2
    pairs: int = 10
    size: tuple[float, float] = (24.0, 24.0)
    resolution: tuple[float, float] = (0.1, 0.1)
    terrain_seed: int = 20261130
    pair_seed: int = 1
    goal_distance: tuple[float, float] = (8.0, 12.0)
    margin: float = 2.0
    max_start_slope_deg: float = 12.0
    time_limit_s: float = 30.0
    stuck_time_s: float | None = None
    seed: int = 0
    family_options: dict = field(default_factory=dict)
    per_family: dict = field(default_factory=dict)
    obs_terms: tuple[str, ...] | None = None
    description: str = field(default="", compare=False)
    tasks: tuple | None = field(default=None, repr=False)
    measured_with: str | None = field(default=None, compare=False)
    chunk_tasks: int | None = None
    chunk_threads: int = 1
    reference: dict | None = field(default=None, compare=False, repr=False)
    subset: tuple[int, ...] | None = None
    maps: tuple | None = field(default=None, repr=False)
    materials: dict = field(default_factory=dict)
    dataset_options: dict = field(default_factory=dict)
    goal_radius: float | None = None
    stuck_speed: float | None = None
    root: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        for name in ("num_levels", "worlds", "pairs"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"suite {self.name}: {name} must be an int >= 1, got {v!r}")
        for name in ("time_limit_s", "margin", "max_start_slope_deg"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"suite {self.name}: {name} must be a number > 0, got {v!r}")
        for name, v, none_ok in (("chunk_tasks", self.chunk_tasks, True),
                                 ("chunk_threads", self.chunk_threads, False)):
            if not ((none_ok and v is None) or (isinstance(v, int) and not isinstance(v, bool)
                                                 and v >= 1)):
                raise ValueError(f"suite {self.name}: {name} must be an int >= 1"
                                 f"{' or null' if none_ok else ''}, got {v!r}")
        for name in ("stuck_time_s", "goal_radius", "stuck_speed"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)
                                      and v > 0):
                raise ValueError(f"suite {self.name}: {name} must be a number > 0 or null, "
                                 f"got {v!r}")
        if self.stuck_speed is not None and self.stuck_time_s is None:
            raise ValueError(f"suite {self.name}: stuck_speed needs stuck_time_s")
        lo, hi = (tuple(self.goal_distance) + (None, None))[:2]
        if len(tuple(self.goal_distance)) != 2 or not (0 < lo <= hi):
            raise ValueError(f"suite {self.name}: goal_distance must be (min, max) with "
                             f"0 < min <= max, got {self.goal_distance!r}")

        bad = sorted(set(self.family_options) - _FAMILY_FIELDS)
        if bad:
            raise ValueError(f"suite {self.name}: family_options {bad} are not terrain family "
                             f"fields; known: {sorted(_FAMILY_FIELDS)}")
        for fam, own in self.per_family.items():
            if fam not in self.families or not isinstance(own, dict) or not set(own) <= set(
                    _PER_FAMILY):
                raise ValueError(f"suite {self.name}: per_family[{fam!r}] must be a family of "
                                 f"the suite with some of {_PER_FAMILY}, got {own!r}{_SLICE}")
        if self.obs_terms is not None:
            try:
                check_obs_terms(tuple(self.obs_terms))
            except ValueError as exc:
                raise ValueError(f"suite {self.name}: {exc}") from None
        if self.maps is not None:
            object.__setattr__(self, "families", ())  # a suite of maps has no families
            world_suites.check_maps(self.name, self.maps, self.root, self.materials)
            world_suites.check_map_tasks(self.name, self.maps, self.tasks)
            world_suites.check_task_bounds(self)
        elif self.tasks is not None:
            want = self.num_levels * self.worlds * self.pairs
            for fam in self.families:
                got = sum(1 for t in self.tasks if t.get("family") == fam)
                if got != want:
                    raise ValueError(f"suite {self.name}: {got} stored tasks of family "
                                     f"{fam!r}; levels x worlds x pairs = {want}{_SLICE}")
        if self.subset is not None:
            ids = tuple(self.subset)
            if (not ids or any(not isinstance(i, int) or isinstance(i, bool) for i in ids)
                    or list(ids) != sorted(set(ids)) or ids[0] < 0
                    or ids[-1] >= self.grid_tasks):
                raise ValueError(f"suite {self.name}: subset must be distinct task indices in "
                                 f"increasing order within [0, {self.grid_tasks}), got "
                                 f"{self.subset!r}")
        if self.maps is None:
            self.levels  # the families' config is checked where the spec enters

    def _family_config(self, size, resolution) -> terrain_pkg.FamilyConfig:
        opts = dict(self.family_options)
        for k, v in opts.items():
            if isinstance(v, list):
                opts[k] = tuple(v)
        dem = opts.get("dem")
        if dem is not None and not Path(dem).is_file():
            from offroad_env.data import data_file
            opts["dem"] = str(data_file(dem))  # a packaged file by its name
        return family_config(self.vehicle, size=tuple(size), resolution=tuple(resolution),
                             num_levels=self.num_levels, **opts)

    @property
    def levels(self) -> terrain_pkg.LevelsConfig:
        """The level stack of every family on the suite's own grid."""
        fam = self._family_config(self.size, self.resolution)
        return terrain_pkg.LevelsConfig(family=fam, families=tuple(self.families),
                                        worlds=self.worlds)

    def groups(self) -> list["SuiteSpec"]:
        """The suite split by its ``per_family`` settings: one spec per distinct setting (in
        the order of their first family), each with its families in the suite's order and no
        ``per_family``. A suite without them is its own single group."""
        if self.maps is not None:
            return self._map_groups()
        if not self.per_family:
            return [self]
        per = self.num_levels * self.worlds * self.pairs
        out: dict[tuple, list[str]] = {}
        for fam in self.families:
            own = self.per_family.get(fam, {})
            key = (tuple(own.get("size", self.size)),
                   tuple(own.get("resolution", self.resolution)),
                   own.get("max_start_slope_deg", self.max_start_slope_deg))
            out.setdefault(key, []).append(fam)
        groups = []
        for (size, res, slope), fams in out.items():
            subset = None
            if self.subset is not None:  # the slice's tasks, as indices of the group's own
                subset = tuple(fams.index(self.families[t // per]) * per + t % per
                               for t in self.subset if self.families[t // per] in fams)
                if not subset:
                    continue
            groups.append(replace(self, families=tuple(fams), size=size, resolution=res,
                                  max_start_slope_deg=slope, per_family={}, subset=subset))
        return groups

    def _map_groups(self) -> list["SuiteSpec"]:
        """A suite of maps by grid (:func:`~train.common.worlds.map_groups`)."""
        parts = world_suites.map_groups(self)
        if len(parts) == 1:
            return [self]
        keep = set(self.task_ids().tolist())
        out = []
        for midx, tidx in parts:
            sub = tuple(k for k, t in enumerate(tidx) if t in keep)
            if sub:
                out.append(replace(self, maps=tuple(self.maps[i] for i in midx),
                                   tasks=tuple(self.tasks[t] for t in tidx),
                                   subset=None if len(sub) == len(tidx) else sub))
        return out

    def on_one_grid(self) -> "SuiteSpec":
        """The suite with every family on one map grid: the finest resolution and the largest
        size among its :meth:`groups` (no ``per_family``). A training env holds one map stack;
        a family generated on a finer grid is the same family better resolved (its ledges stay
        edges), while a coarser one would turn a ledge into a ramp."""
        if self.maps is not None:
            gs = self.groups()
            if len(gs) > 1:
                raise ValueError(f"suite {self.name}: its maps have {len(gs)} grids; a "
                                 "training env holds one")
            return self
        gs = self.groups()
        size = tuple(max(float(g.size[i]) for g in gs) for i in range(2))
        res = tuple(min(float(g.resolution[i]) for g in gs) for i in range(2))
        return replace(self, size=size, resolution=res, per_family={})

    @property
    def grid_tasks(self) -> int:
        """Every task of the grid: families x levels x worlds x pairs (or the tasks of a suite
        of maps)."""
        if self.maps is not None:
            return len(self.tasks)
        return len(self.families) * self.num_levels * self.worlds * self.pairs

    @property
    def num_tasks(self) -> int:
        """The tasks a run runs: the grid's, or the slice's (:attr:`subset`)."""
        return self.grid_tasks if self.subset is None else len(self.subset)

    def task_ids(self) -> np.ndarray:
        """The indices of the tasks a run runs, in the suite's task order ``(T,)``."""
        return (np.arange(self.grid_tasks) if self.subset is None
                else np.asarray(self.subset, dtype=np.int64))

    def select(self, families=None, levels=None, worlds=None, pairs=None,
               tasks=None) -> "SuiteSpec":
        """A slice of the suite: the tasks whose family is in ``families`` (names), level in
        ``levels``, world in ``worlds`` and pair in ``pairs`` (each None: all), and, given
        ``tasks``, whose index (in the suite's task order: family, level, world, pair; the
        order of ``bench.json``'s ``per_task``) is in it. Every task keeps its own map and its
        stored start and goal; the results report the slice's tasks (their counts and Wilson
        intervals say how few). ValueError naming what the suite has, for a value it has not,
        or an empty slice."""
        L, W, P = self.num_levels, self.worlds, self.pairs
        fam = np.repeat(np.arange(len(self.families)), L * W * P)
        lev = np.tile(np.repeat(np.arange(L), W * P), len(self.families))
        wor = np.tile(np.repeat(np.arange(W), P), len(self.families) * L)
        pai = np.tile(np.arange(P), len(self.families) * L * W)
        if self.maps is not None:  # worlds: the maps (by name); pairs: a task's place on its map
            names = [m["name"] for m in self.maps]
            wor = world_suites.map_task_arrays(self)["world"]
            pai = np.asarray([int((wor[:k] == wor[k]).sum()) for k in range(len(wor))])
            fam = lev = np.zeros_like(wor)
            W, P = len(names), int(pai.max()) + 1
            if worlds is not None:
                worlds = [names.index(v) if v in names else v for v in (
                    [worlds] if isinstance(worlds, (str, int)) else worlds)]
        keep = np.ones(self.grid_tasks, dtype=bool)
        if self.subset is not None:
            keep[:] = False
            keep[list(self.subset)] = True
        for name, have, vals, col in (("families", self.families, families, fam),
                                      ("levels", range(L), levels, lev),
                                      ("worlds", range(W), worlds, wor),
                                      ("pairs", range(P), pairs, pai)):
            if vals is None:
                continue
            vals = [vals] if isinstance(vals, (str, int)) else list(vals)
            bad = [v for v in vals if v not in have]
            if bad or not vals:
                raise ValueError(f"suite {self.name}: {name} {bad or vals!r} not in the suite; "
                                 f"it has {list(have)}")
            idx = [list(have).index(v) for v in vals]
            keep &= np.isin(col, idx)
        if tasks is not None:
            ids = np.asarray(list(tasks), dtype=np.int64)
            if ids.size == 0 or ids.min() < 0 or ids.max() >= self.grid_tasks:
                raise ValueError(f"suite {self.name}: tasks must be indices within "
                                 f"[0, {self.grid_tasks}), got {list(tasks)!r}")
            mask = np.zeros(self.grid_tasks, dtype=bool)
            mask[ids] = True
            keep &= mask
        if not keep.any():
            raise ValueError(f"suite {self.name}: the slice holds no task")
        return replace(self, subset=tuple(int(i) for i in np.flatnonzero(keep)))

    def chunks(self) -> list[tuple[int, int, int]]:
        """The fixed chunks of a run: ``(group, first task, end task)`` (tasks counted within
        the group of :meth:`groups`), ``chunk_tasks`` tasks each, in group and task order."""
        out = []
        for gi, g in enumerate(self.groups()):
            step = self.chunk_tasks or g.num_tasks
            out += [(gi, a, min(a + step, g.num_tasks)) for a in range(0, g.num_tasks, step)]
        return out


def suite_path(name_or_path: str) -> Path:
    """The JSON file of a suite given by name (``train/suites/<name>.json``) or as a path."""
    p = Path(name_or_path)
    return SUITES_DIR / f"{name_or_path}.json" if not p.suffix else p


def load_suite(name_or_path: str) -> SuiteSpec:
    """A suite by name (``train/suites/<name>.json``) or from a JSON file."""
    p = suite_path(name_or_path)
    if not p.is_file():
        known = sorted(f.stem for f in SUITES_DIR.glob("*.json"))
        raise ValueError(f"unknown suite {name_or_path!r}; known: {known} (or a .json file)")
    try:
        raw = json.loads(p.read_text())
        raw = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        if raw.get("tasks") is not None:
            raw["tasks"] = tuple(raw["tasks"])
        for k in ("family_options", "per_family", "materials", "dataset_options"):
            raw.setdefault(k, {})
        if raw.get("maps") is not None:
            raw.setdefault("root", str(p.resolve().parent))
        return SuiteSpec(**raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"suite file {p} is not a suite spec: {exc}") from None


def suite_config(spec: SuiteSpec, terrain_seed: int | None = None, **overrides) -> SimConfig:
    """The traverse config of ``spec`` (one grid: a group of :meth:`SuiteSpec.groups`, or
    :meth:`SuiteSpec.on_one_grid`): its vehicle, models, level stack, goal distances, margin
    and stuck time, and its observation terms. ``terrain_seed``: the maps' seed (default the
    suite's own: its test maps; a training run draws other worlds of the same levels).
    ``overrides``: SimConfig fields on top (:func:`offroad_env.make_config`)."""
    seed = spec.terrain_seed if terrain_seed is None else terrain_seed
    own = {} if spec.obs_terms is None else {"obs_terms": tuple(spec.obs_terms)}
    maps = spec.levels if spec.maps is None else world_suites.world_stack(spec)
    cfg = make_config("traverse", vehicle=spec.vehicle, dynamics=spec.dynamics,
                      ground=spec.ground, terrain=maps, terrain_seed=seed, **own)
    rules = {k: v for k, v in (("goal_radius", spec.goal_radius),
                               ("stuck_speed", spec.stuck_speed)) if v is not None}
    dist, margin = tuple(spec.goal_distance), spec.margin
    if spec.maps is not None:  # its tasks are given: the env's own draws (an autoreset after
        # a task's first episode, which is not counted) need only fit the maps
        d = min(math.dist(t["start"][:2], t["goal"]) for t in spec.tasks)
        dist, margin = (0.25 * d, 0.5 * d), 0.0
    cfg = replace(cfg, task=replace(cfg.task, goal_distance=dist, spawn_margin=margin,
                                    stuck_time=spec.stuck_time_s, **rules))
    return make_config("traverse", cfg, **overrides) if overrides else cfg


def suite_episode_steps(spec: SuiteSpec, cfg: SimConfig) -> int:
    """The suite's time limit in env steps of ``cfg`` (each ``dt * action_repeat`` long)."""
    return int(round(spec.time_limit_s / (cfg.dt * cfg.action_repeat)))


def suite_env(spec: SuiteSpec, num_envs: int, device="cpu",
              compile: bool = False) -> OffroadVectorEnv:
    """A vector env of ``num_envs`` traverse tasks on the level stack of ``spec`` (one grid:
    a group of :meth:`SuiteSpec.groups`); ``compile``: its step (and look-ahead) compiled."""
    cfg = suite_config(spec)
    return OffroadVectorEnv(num_envs=num_envs, config=cfg, compile=compile,
                            max_episode_steps=suite_episode_steps(spec, cfg), device=device)


def maps_suite_json(raw: dict) -> str:
    """A suite of maps' JSON text, with a map or a task per line (``raw`` is left as it
    was)."""
    rows = {k: raw[k] for k in ("maps", "tasks")}
    text = json.dumps({k: v for k, v in raw.items() if k not in rows}, indent=1)[:-2]
    for k, items in rows.items():
        text += f',\n "{k}": [\n' + ",\n".join("  " + json.dumps(t) for t in items) + "\n ]"
    return text + "\n}\n"
