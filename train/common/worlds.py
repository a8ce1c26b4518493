"""Suites of anyone's worlds: maps from files (or a packaged dataset) with their materials, and a
task list, in place of the generator families (:class:`~train.common.suite.SuiteSpec`'s
``maps``).

A map entry (``maps`` in a suite's JSON) is one of:

* ``{"name": ..., "heights": "quarry.tif"}``: a height-map file :func:`terrain.load` reads
  (GeoTIFF, ESRI ASCII grid, PNG with its sidecar, raisim text, ``.npy``), a path relative to
  the suite file's folder, with ``terrain.load``'s placement keys where the file has none
  (``"resolution"``, ``"origin"`` or ``"center"``, ``"z_offset"``, ``"flip_y"``); and
  optionally a material map: ``"materials"`` with ``"material_names"`` (each value's name:
  ``"hard"``, a built-in surface or soil, or one the suite declares). The material map is a
  ``.npy`` of ints laid out as the loaded map's ``HeightMap.heights`` (row 0 at the smallest
  y), or an 8-bit ``.png`` label image as images are (row 0 at the top, the largest y), of the
  heights' sample counts;
* ``{"name": ..., "dataset": "verti_bench", "key": 12}``: a world of a packaged dataset
  (:data:`DATASETS`; the suite's ``dataset_options`` are its builder's keywords).

Either may carry ``"tags"`` (``{"difficulty": "low"}``): the results report every tag's values
(``by_tag``). A suite's ``materials`` declares surfaces and soils by name for every map
(:func:`terrain.materials.check_material_defs`; checked against the physical model where the
suite loads, :func:`~offroad_env.physics.soil_contact.declared_materials`). Its tasks name their
map: ``{"map": "quarry", "start": [x, y, yaw], "goal": [x, y]}`` [m, rad], optionally
``"start_ok": false`` for a start kept although it fails the braked check (a benchmark's fixed
task).

Maps of one grid (samples, spacing, placement) run in one vector env; a suite of several grids
runs a group per grid (:func:`map_groups`).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np

import terrain as terrain_pkg
from terrain import verti_bench
from terrain.materials import HARD, check_material_defs

__all__ = ["DATASETS", "MAP_KEYS", "check_maps", "check_map_tasks", "check_task_bounds",
           "load_world", "world_stack", "map_groups", "map_task_arrays"]

#: the packaged datasets a map entry may name: ``{name: builder(key, **options) -> HeightMap}``
DATASETS = {"verti_bench": verti_bench.world_map}
#: what a map entry may hold
MAP_KEYS = ("name", "heights", "dataset", "key", "tags", "materials", "material_names",
            "resolution", "origin", "center", "z_offset", "flip_y")
_LOAD_KEYS = ("resolution", "origin", "center", "z_offset", "flip_y")


def check_maps(name: str, maps, root: str | None, materials: dict) -> None:
    """ValueError naming the suite, the map and the field for a malformed map entry: an
    unknown key, a missing or duplicate name, neither or both of ``heights`` and ``dataset``,
    an unknown dataset, a file that is not there, ``materials`` without ``material_names``,
    tags that are not strings. ``materials`` (the suite's declarations) are checked too."""
    check_material_defs(materials, f"suite {name}: materials")
    from offroad_env.physics.soil_contact import declared_materials

    try:
        declared_materials(materials)
    except ValueError as exc:
        raise ValueError(f"suite {name}: materials: {exc}") from None
    if not maps:
        raise ValueError(f"suite {name}: maps is empty; give at least one map entry")
    seen = set()
    for i, m in enumerate(maps):
        where = f"suite {name}: maps[{i}]"
        if not isinstance(m, dict):
            raise ValueError(f"{where} must be an object with {MAP_KEYS}, got {m!r}")
        bad = sorted(set(m) - set(MAP_KEYS))
        if bad:
            raise ValueError(f"{where}: unknown keys {bad}; a map entry takes {list(MAP_KEYS)}")
        n = m.get("name")
        if not isinstance(n, str) or not n or n in seen:
            raise ValueError(f"{where}: name must be a distinct non-empty string, got {n!r}")
        seen.add(n)
        where = f"suite {name}: map {n!r}"
        if ("heights" in m) == ("dataset" in m):
            raise ValueError(f"{where}: give either 'heights' (a map file) or 'dataset' and "
                             "'key' (a packaged world)")
        if "dataset" in m:
            if m["dataset"] not in DATASETS:
                raise ValueError(f"{where}: unknown dataset {m['dataset']!r}; known: "
                                 f"{sorted(DATASETS)}")
            if "key" not in m:
                raise ValueError(f"{where}: a dataset map needs its 'key'")
        else:
            for key in ("heights", "materials"):
                if key in m and not _path(m[key], root).is_file():
                    raise ValueError(f"{where}: {key} file {str(_path(m[key], root))!r} not "
                                     "found (a path relative to the suite file's folder)")
            if ("materials" in m) != ("material_names" in m):
                raise ValueError(f"{where}: give 'materials' (the file) and 'material_names' "
                                 "(each value's name) together")
            from offroad_env.physics.soil import SOILS
            from offroad_env.physics.surfaces import SURFACES

            for mat in m.get("material_names", ()):
                if mat not in (HARD, *SURFACES, *SOILS, *materials):
                    raise ValueError(
                        f"{where}: material_names names {mat!r}, which is neither {HARD!r}, a "
                        f"surface {sorted(SURFACES)}, a soil {sorted(SOILS)} nor one the "
                        f"suite declares (materials: {sorted(materials)})")
        tags = m.get("tags", {})
        if not isinstance(tags, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in tags.items()):
            raise ValueError(f"{where}: tags must map strings to strings, got {tags!r}")


def check_map_tasks(name: str, maps, tasks) -> None:
    """ValueError naming the suite and the task for a task whose map is not one of ``maps``,
    or whose start or goal is not a finite ``[x, y, yaw]`` / ``[x, y]``. (Whether they lie on
    their map is checked where the maps are built: :func:`world_stack`.)"""
    names = [m["name"] for m in maps]
    if not tasks:
        raise ValueError(f"suite {name}: a suite of maps needs its tasks (each "
                         '{"map", "start": [x, y, yaw], "goal": [x, y]})')
    for k, t in enumerate(tasks):
        where = f"suite {name}: tasks[{k}]"
        if not isinstance(t, dict) or t.get("map") not in names:
            raise ValueError(f"{where}: 'map' must name one of the suite's maps {names}, got "
                             f"{t.get('map') if isinstance(t, dict) else t!r}")
        for key, n in (("start", 3), ("goal", 2)):
            v = t.get(key)
            if (not isinstance(v, (list, tuple)) or len(v) != n
                    or not all(isinstance(a, (int, float)) and math.isfinite(a) for a in v)):
                raise ValueError(f"{where}: {key} must be {n} finite numbers, got {v!r}")


def _path(p, root) -> Path:
    p = Path(p)
    return p if p.is_absolute() or root is None else Path(root) / p


def load_world(entry: dict, root: str | None, materials: dict, options: dict):
    """One map entry as a :class:`terrain.HeightMap`, with the suite's declared ``materials``
    beside its own."""
    if "dataset" in entry:
        hm = DATASETS[entry["dataset"]](entry["key"], **options)
    else:
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in entry.items()
              if k in _LOAD_KEYS}
        hm = terrain_pkg.load(_path(entry["heights"], root), **kw)
        if "materials" in entry:
            path = _path(entry["materials"], root)
            mat = _read_labels(path)
            if tuple(mat.shape) != tuple(hm.shape):
                raise ValueError(f"map {entry['name']!r}: materials {str(path)!r} is "
                                 f"{tuple(mat.shape)}, its heights {tuple(hm.shape)}")
            if path.suffix.lower() == ".png":  # an image: row 0 at the top (+y)
                mat = mat[::-1]
            try:
                hm = hm.with_materials(np.ascontiguousarray(mat),
                                       tuple(entry["material_names"]))
            except ValueError as exc:
                raise ValueError(f"map {entry['name']!r}: {exc}") from None
    if materials:
        defs = dict(hm.material_defs)
        for k, v in materials.items():
            if k in defs and dict(defs[k]) != dict(v):
                raise ValueError(f"map {entry['name']!r} declares {k!r} otherwise than the "
                                 "suite")
            defs[k] = v
        hm = hm.with_materials(material_defs=defs)
    return hm


def _read_labels(path: Path) -> np.ndarray:
    """An integer label image: ``.npy`` (ints) or an 8-bit ``.png``."""
    from terrain.placement import TerrainFileError

    if path.suffix.lower() == ".npy":
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise TerrainFileError(f"{path}: unreadable .npy ({exc})") from None
    elif path.suffix.lower() == ".png":
        from PIL import Image

        arr = np.asarray(Image.open(path))
    else:
        raise TerrainFileError(f"{path}: a material map is a .npy of ints or an 8-bit .png")
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise TerrainFileError(f"{path}: a material map is a 2-D array of ints, got "
                               f"{arr.shape} {arr.dtype}")
    return arr


@functools.lru_cache(maxsize=256)
def _world(key: str):
    k = json.loads(key)
    return load_world(k["map"], k["root"], k["materials"], k["options"])


def _world_of(spec, entry):
    """One map of the suite, built once (the suite's checks and runs share it)."""
    return _world(json.dumps({"map": entry, "root": spec.root, "materials": spec.materials,
                              "options": spec.dataset_options}, sort_keys=True, default=str))


@functools.lru_cache(maxsize=8)
def _stack(key: str):
    k = json.loads(key)
    return terrain_pkg.HeightMap.stack([
        _world(json.dumps({"map": m, "root": k["root"], "materials": k["materials"],
                           "options": k["options"]}, sort_keys=True, default=str))
        for m in k["maps"]])


def check_task_bounds(spec, margin: float = 0.0) -> None:
    """ValueError naming the task, its map and the map's bounds for a start or goal off its
    map (each map built once: :func:`world_stack` reuses them)."""
    maps = {m["name"]: m for m in spec.maps}
    bounds = {}
    for k, t in enumerate(spec.tasks):
        if t["map"] not in bounds:
            try:
                bounds[t["map"]] = _world_of(spec, maps[t["map"]]).bounds
            except ValueError as exc:
                raise ValueError(f"suite {spec.name}: map {t['map']!r}: {exc}") from None
        x0, x1, y0, y1 = bounds[t["map"]]
        for key in ("start", "goal"):
            x, y = t[key][:2]
            if not (x0 + margin <= x <= x1 - margin and y0 + margin <= y <= y1 - margin):
                raise ValueError(f"suite {spec.name}: tasks[{k}] {key} ({x}, {y}) is off its "
                                 f"map {t['map']!r}, which spans x [{x0}, {x1}], y [{y0}, "
                                 f"{y1}] m")


def world_stack(spec):
    """The maps of a suite of maps (one grid; :func:`map_groups`) as one stack, in the order of
    ``spec.maps``, built once per spec. ValueError naming the map for maps of several grids."""
    key = json.dumps({"maps": list(spec.maps), "root": spec.root,
                      "materials": spec.materials, "options": spec.dataset_options},
                     sort_keys=True, default=str)
    try:
        return _stack(key)
    except ValueError as exc:
        if "a stack needs equal" in str(exc):
            raise ValueError(f"suite {spec.name}: its maps have several grids; run it by "
                             "SuiteSpec.groups() (one vector env per grid)") from None
        raise


def map_groups(spec) -> list[tuple[list[int], list[int]]]:
    """The suite's maps by grid: ``[(map indices, task indices)]``, each grid's maps in the
    suite's order (one group when every map shares a grid: no map is built then only to say
    so where they are all of one dataset)."""
    maps = list(spec.maps)
    if all("dataset" in m for m in maps) and len({m["dataset"] for m in maps}) == 1:
        keys = [0] * len(maps)  # a dataset's worlds share their grid
    else:
        keys = []
        for m in maps:
            hm = _world_of(spec, m)
            keys.append((hm.shape, hm.resolution, hm.origin))
    order = list(dict.fromkeys(keys))
    out = []
    names = [m["name"] for m in maps]
    for key in order:
        idx = [i for i, k in enumerate(keys) if k == key]
        mine = {names[i] for i in idx}
        out.append((idx, [t for t, task in enumerate(spec.tasks) if task["map"] in mine]))
    return out


def map_task_arrays(spec) -> dict[str, np.ndarray]:
    """The tasks of a suite of maps as :func:`~train.common.suite.suite_tasks` gives them:
    ``map_index`` (the map's place in ``spec.maps``), ``start`` ``(T, 3)``, ``goal`` ``(T,
    2)``, ``family`` 0, ``level`` 0, ``world`` (the map's index), ``start_ok`` (bool)."""
    names = [m["name"] for m in spec.maps]
    mi = np.asarray([names.index(t["map"]) for t in spec.tasks], dtype=np.int64)
    return {"map_index": mi,
            "start": np.asarray([t["start"] for t in spec.tasks], dtype=np.float64),
            "goal": np.asarray([t["goal"] for t in spec.tasks], dtype=np.float64),
            "family": np.zeros(len(mi), dtype=np.int64),
            "level": np.zeros(len(mi), dtype=np.int64), "world": mi,
            "start_ok": np.asarray([bool(t.get("start_ok", True)) for t in spec.tasks])}
