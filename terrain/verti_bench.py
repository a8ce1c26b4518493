"""Verti-Bench's 100 worlds as height maps (Xiao et al., RSS 2025; ``RobotiXX/verti_bench``, MIT
licence: ``terrain/datasets/LICENSE.verti_bench``).

Verti-Bench builds each world in Chrono from its own files; :mod:`train.verti_bench` reads them
once (:func:`read_source`) and keeps what a world needs in ``terrain/datasets/verti_bench_v1.npz``
(:func:`save_dataset`, 0.6 MB). :func:`world_map` builds a world from it, at a scale, as a
:class:`~terrain.HeightMap` with a material map and its declared materials.

**Heights.** World ``w``'s ``Worlds/w.bmp`` (129 x 129 grey) gives ``grey / 255 x max_height``
[m], ``max_height`` its config's (16 m x 0.3 / 0.6 / 1.0 for low / mid / high). Pixel ``(r, c)``
lies at ``x = c - 64``, ``y = 64 - r`` [m] (Chrono's height-map patches put the image's 129
pixels 1 m apart over 128 m, row 0 at +y). At ``scale`` s every length is s times Verti-Bench's:
the samples are s m apart and the heights s times theirs. ``upsample`` u puts u - 1 samples
between each pair, linearly interpolated (the original samples stay exact), so that the
obstacles' walls are steep.

**Ground.** 8 m patches (9 pixels, overlapping by one; 16 x 16 of them), each of a type
(:data:`TYPES`) and, when rigid, a friction:

* *rigid* worlds (1-60): Verti-Bench merges each type's patches into rectangles, greedily the
  largest first, and each rectangle takes one of its patches' friction (the last its Python set
  yields; :func:`effective_friction` repeats the merge). Chrono combines two contact materials'
  friction by the smaller, and the HMMWV's rigid tyres have 0.9: the friction is
  ``min(patch, 0.9)``. A rigid surface is declared per friction, rounded to :data:`MU_STEP`
  (``"verti_bench/mu0.540"``): a stack names at most 256 materials.
* *deformable* worlds (61-90): the labels only say which soils there are; the builder lays them
  out by rows, in the order of their names: one soil everywhere, two as the north and south
  halves (pixel rows 0-64 and 64-128), three as thirds (rows 0-43, 43-86, 86-128). A boundary
  row belongs to the southern soil here.
* *mixed* worlds (91-100): each soil's largest rectangle of patches is that soil; its other
  patches become the first rigid type's ground (the lowest of :data:`TYPES` present) with that
  type's first patch's friction; then the rigid patches merge as in a rigid world.

The soils are Verti-Bench's SCM parameters (``terrain.py``'s ``SCMParameters``), declared as
:data:`SOILS` under ``verti_bench/``: its snow is not this package's ``snow`` (Wong's values).
SCM's elastic stiffness, damping and bulldozing have no counterpart here.

**Obstacles.** Rocks are Chrono collision boxes 4.4 x 4.4 x 3.8 m times the rock's scale,
centred at its configured position (its z the ground's height there); trees 1 x 1 x 5 m. A
height map has no overhang: each box becomes a prism over the samples within its footprint, up
to the box's top (where the ground there is higher, the ground). Boxes are scaled once, by the
rock's scale and by ``scale``. Their surface is Chrono's default contact material (friction
0.6), declared ``"verti_bench/obstacle"``.

**Tasks.** Ten start/goal pairs on a circle of radius 60 m, each goal opposite its start
(:func:`world_pairs`), at ``scale``.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from .heightmap import HeightMap

__all__ = ["TYPES", "SOFT", "SOILS", "TYRE_MU", "OBSTACLE_MU", "MU_STEP", "NUM_WORLDS",
           "DATASET", "read_source", "save_dataset", "load_dataset", "effective_friction",
           "world_map", "world_pairs", "world_info", "obstacle_footprint"]

#: Verti-Bench's ground types, in the order of its labels (0-9)
TYPES = ("clay", "concrete", "dirt", "grass", "gravel", "rock", "wood", "mud", "sand", "snow")
#: the deformable types
SOFT = ("mud", "sand", "snow")
#: the soils of its SCM terrain (``SCMParameters``: ``InitializeParametersAsSoft`` snow,
#: ``...AsMid`` mud, ``...AsHard`` sand, LETE sand), declared under ``verti_bench/``
SOILS = {
    "verti_bench/snow": {"n": 1.1, "k_c": 0.0, "k_phi": 0.2e6, "c": 0.0, "phi_deg": 30.0,
                         "K": 0.01},
    "verti_bench/mud": {"n": 1.1, "k_c": 0.0, "k_phi": 2e6, "c": 0.0, "phi_deg": 30.0,
                        "K": 0.01},
    "verti_bench/sand": {"n": 0.793, "k_c": 102e3, "k_phi": 5301e3, "c": 1.3e3,
                         "phi_deg": 31.1, "K": 1.2e-2},
}
#: the HMMWV's rigid tyres' friction (Chrono takes the smaller of two materials')
TYRE_MU = 0.9
#: Chrono's default contact material (the rocks' and trees' boxes)
OBSTACLE_MU = 0.6
#: rigid frictions are declared to this step (half of it is the most a value moves)
MU_STEP = 0.005
NUM_WORLDS = 100
#: the packaged dataset
DATASET = Path(__file__).resolve().parent / "datasets" / "verti_bench_v1.npz"

_PIX = 129           # a world's pixels a side
_HALF = 64           # pixel (r, c) at x = c - 64, y = 64 - r [m]
_PATCH = 9           # a patch's pixels a side (8 m; neighbours share a row)
_NP = 16             # patches a side
_ROCK = (4.4, 4.4, 3.8)
_TREE = (1.0, 1.0, 5.0)
_DIFFICULTIES = ("low", "mid", "high")
_KINDS = ("rigid", "deformable", "mixed")


# ------------------------------------------------------------------------------- the source
def read_source(root) -> dict:
    """The essentials of Verti-Bench's 100 worlds from its checkout ``root`` (the folder
    holding ``envs/``, or ``envs/data/BenchMaps/sampled_maps`` itself): per world its BMP,
    config (difficulty, terrain type, max height, patches, rocks, trees, pairs) and the
    effective friction of the merge (:func:`effective_friction`). Needs PyYAML and Pillow.
    :class:`~terrain.placement.TerrainFileError` naming a missing or malformed file."""
    from PIL import Image

    from .placement import TerrainFileError

    try:
        import yaml
    except ImportError:  # pragma: no cover - the converter's own dependency
        raise ImportError("reading Verti-Bench's configs needs PyYAML: pip install pyyaml"
                          ) from None
    root = Path(root)
    base = root / "envs" / "data" / "BenchMaps" / "sampled_maps"
    if not base.is_dir():
        base = root
    worlds, configs = base / "Worlds", base / "Configs" / "Final"
    if not worlds.is_dir() or not configs.is_dir():
        raise TerrainFileError(f"{root}: no Verti-Bench worlds here (expected "
                               "envs/data/BenchMaps/sampled_maps/Worlds and Configs/Final)")
    out = {k: [] for k in ("world", "grey", "max_height", "difficulty", "kind", "is_flat",
                           "types", "friction", "effective_mu", "pairs")}
    rocks, trees = [], []
    for w in range(1, NUM_WORLDS + 1):
        bmp = worlds / f"{w}.bmp"
        found = sorted(configs.glob(f"config{w}_*.yaml"))
        if not bmp.is_file() or len(found) != 1:
            continue  # a partial checkout (the tests' sample): the worlds that are there
        grey = np.asarray(Image.open(bmp))
        if grey.shape != (_PIX, _PIX) or grey.dtype != np.uint8:
            raise TerrainFileError(f"{bmp}: expected 129 x 129 8-bit grey, got {grey.shape} "
                                   f"{grey.dtype}")
        cfg = yaml.safe_load(found[0].read_text())
        try:
            t = cfg["terrain"]
            types = np.full((_NP, _NP), 255, dtype=np.uint8)
            fric = np.full((_NP, _NP), np.nan)
            for p in cfg["textures"]:
                i, j = p["index"]
                types[i, j] = TYPES.index(p["terrain_type"])
                if not p["is_deformable"]:
                    fric[i, j] = float(p["friction"])
            if (types == 255).any():
                raise ValueError("textures do not cover the 16 x 16 patches")
            kind = cfg["terrain_type"]
            out["world"].append(w)
            out["grey"].append(grey)
            out["max_height"].append(float(t["max_height"]))
            out["difficulty"].append(_DIFFICULTIES.index(t["difficulty"]))
            out["kind"].append(_KINDS.index(kind))
            out["is_flat"].append(bool(t["is_flat"]))
            out["types"].append(types)
            out["friction"].append(fric)
            out["effective_mu"].append(effective_friction(types, fric, kind,
                                                          _first_frictions(cfg["textures"])))
            out["pairs"].append([[p["start"][:2], p["goal"][:2]] for p in cfg["positions"]])
            obs = cfg.get("obstacles") or {}
            if cfg.get("obstacles_flag", True):
                for r in obs.get("rocks") or ():
                    q = r["position"]
                    rocks.append((w, q["x"], q["y"], q["z"], r["scale"]))
                for r in obs.get("trees") or ():
                    q = r["position"]
                    trees.append((w, q["x"], q["y"], q["z"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise TerrainFileError(f"{found[0]}: not a Verti-Bench world config ({exc!r})"
                                   ) from None
    if not out["world"]:
        raise TerrainFileError(f"{root}: no world has both its BMP and its config")
    data = {k: np.asarray(v) for k, v in out.items()}
    data["rocks"] = np.asarray(rocks, dtype=np.float64).reshape(-1, 5)
    data["trees"] = np.asarray(trees, dtype=np.float64).reshape(-1, 4)
    return data


def _first_frictions(textures) -> dict[int, float]:
    """Each rigid type's friction in its first patch of the config (a mixed world's soil
    patches outside their rectangle take the first rigid type's)."""
    out: dict[int, float] = {}
    for p in textures:
        k = TYPES.index(p["terrain_type"])
        if not p["is_deformable"] and k not in out:
            out[k] = float(p["friction"])
    return out


def save_dataset(data: dict, path) -> Path:
    """Write :func:`read_source`'s arrays compressed (``np.savez_compressed``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return path


@functools.lru_cache(maxsize=4)
def load_dataset(path=None) -> dict:
    """The dataset's arrays (default the packaged :data:`DATASET`), read once."""
    path = Path(DATASET if path is None else path)
    from .placement import TerrainFileError

    if not path.is_file():
        raise TerrainFileError(f"{path}: no such file (the Verti-Bench dataset; python -m "
                               "train.verti_bench convert <checkout> writes it)")
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


# ------------------------------------------------------------------ the patches' friction
def _shapes() -> list[tuple[int, int]]:
    """Rectangles of patches ``(wide, high)``, largest pixel area first, in Verti-Bench's
    order among equal areas (its ``find_regular_shape``: wide in the outer loop)."""
    out = [(wp, hp) for wp in range(1, _NP + 1) for hp in range(1, _NP + 1)]
    side = (lambda k: (k - 1) * (_PATCH - 1) + _PATCH)
    return sorted(out, key=lambda s: -side(s[0]) * side(s[1]))  # stable


def _largest_rectangle(avail: set) -> set:
    """The patches of the first rectangle, in :func:`_shapes`' order and then row-major by
    its corner, that lies wholly in ``avail`` (Verti-Bench's ``best_shape_fit``), as the set
    it builds (its iteration order decides which patch's friction a merged rectangle takes)."""
    grid = np.zeros((_NP + 1, _NP + 1), dtype=np.int64)
    for i, j in avail:
        grid[i + 1, j + 1] = 1
    cum = grid.cumsum(0).cumsum(1)  # cum[a, b]: patches in rows < a, columns < b
    max_i = max(i for i, _ in avail)
    max_j = max(j for _, j in avail)
    for wp, hp in _shapes():
        if wp > max_j + 1 or hp > max_i + 1:
            continue
        ni, nj = max_i - hp + 2, max_j - wp + 2
        a = np.arange(ni)[:, None]
        b = np.arange(nj)[None, :]
        a1, b1 = np.minimum(a + hp, _NP), np.minimum(b + wp, _NP)
        inside = cum[a1, b1] - cum[a, b1] - cum[a1, b] + cum[a, b]
        full = (inside == hp * wp) & (a + hp <= _NP) & (b + wp <= _NP)
        if full.any():
            i0, j0 = np.argwhere(full)[0]
            return {(int(i0) + i, int(j0) + j) for i in range(hp) for j in range(wp)}
    return set()


def effective_friction(types: np.ndarray, friction: np.ndarray, kind: str,
                       first: dict[int, float] | None = None) -> np.ndarray:
    """``(16, 16)`` the friction each patch has in Chrono (before the tyre's 0.9; NaN: soil),
    from its config's ``types`` (indices of :data:`TYPES`) and ``friction`` (NaN for soil):
    the rigid patches merged into rectangles per type, each taking one patch's value; a mixed
    world's soil patches outside their soil's largest rectangle first become the first rigid
    type's (``first``: each rigid type's first friction in the config). Module docstring."""
    types = np.asarray(types).copy()
    fric = np.asarray(friction, dtype=np.float64).copy()
    soft = {TYPES.index(s) for s in SOFT}
    if kind == "deformable":
        return np.full((_NP, _NP), np.nan)
    if kind == "mixed":
        order = []
        for i in range(_NP):
            for j in range(_NP):
                if types[i, j] in soft and types[i, j] not in order:
                    order.append(types[i, j])
        rigid_present = sorted(int(k) for k in np.unique(types) if k not in soft)
        keep = set()
        for label in order:
            keep |= _largest_rectangle({(i, j) for i, j in zip(*np.nonzero(types == label))})
        if rigid_present:
            k0 = rigid_present[0]
            mu0 = (first or {}).get(k0, float(fric[types == k0][0]))
            for i, j in zip(*np.nonzero(np.isin(types, list(soft)))):
                if (int(i), int(j)) not in keep:
                    types[i, j], fric[i, j] = k0, mu0
    out = np.full((_NP, _NP), np.nan)
    for label in np.unique(types):
        if label in soft:
            continue
        left = {(int(i), int(j)) for i, j in zip(*np.nonzero(types == label))}
        while left:
            rect = _largest_rectangle(left)
            last = None
            for patch in rect:  # the set's own order: the patch whose value the merge keeps
                last = patch
            out[tuple(np.asarray(sorted(rect)).T)] = fric[last]
            left -= rect
    return out


# ------------------------------------------------------------------------------ the worlds
def _row(data: dict, world: int) -> int:
    idx = np.flatnonzero(data["world"] == world)
    if idx.size != 1:
        raise ValueError(f"Verti-Bench world {world!r} is not in the dataset (it has "
                         f"{data['world'].min()}-{data['world'].max()}, "
                         f"{data['world'].size} worlds)")
    return int(idx[0])


def world_info(world: int, dataset=None) -> dict:
    """``{"world", "difficulty", "terrain", "max_height", "rocks", "trees"}`` of a world."""
    d = load_dataset(dataset)
    k = _row(d, world)
    return {"world": world, "difficulty": _DIFFICULTIES[int(d["difficulty"][k])],
            "terrain": _KINDS[int(d["kind"][k])], "max_height": float(d["max_height"][k]),
            "rocks": int((d["rocks"][:, 0] == world).sum()),
            "trees": int((d["trees"][:, 0] == world).sum())}


def world_pairs(world: int, scale: float = 1.0, dataset=None) -> np.ndarray:
    """``(10, 2, 2)`` the world's start and goal ``(x, y)`` [m] at ``scale``."""
    d = load_dataset(dataset)
    return d["pairs"][_row(d, world)] * float(scale)


def obstacle_footprint(x, y, half, xs, ys) -> np.ndarray:
    """``(ny, nx)`` bool: the samples ``(ys[:, None], xs[None, :])`` within ``half`` [m] of
    ``(x, y)`` on both axes (a box's footprint)."""
    return (np.abs(ys[:, None] - y) <= half) & (np.abs(xs[None, :] - x) <= half)


def _soil_rows(types: np.ndarray) -> list[tuple[str, int, int]]:
    """A deformable world's soils as ``(name, first row, end row)`` of pixels."""
    names = sorted({TYPES[int(k)] for k in np.unique(types) if TYPES[int(k)] in SOFT})
    cuts = {1: [0, _PIX], 2: [0, _PIX // 2, _PIX], 3: [0, _PIX // 3, 2 * (_PIX // 3), _PIX]}
    c = cuts[len(names)]
    return [(n, c[i], c[i + 1]) for i, n in enumerate(names)]


def _mu_name(mu: float) -> tuple[str, float]:
    q = round(min(float(mu), TYRE_MU) / MU_STEP) * MU_STEP
    return f"verti_bench/mu{q:.3f}", round(q, 6)


def world_map(world: int, scale: float = 1 / 6, upsample: int = 2, obstacles: bool = True,
              dtype=None, device=None, dataset=None) -> HeightMap:
    """Verti-Bench world ``world`` (1-100) as a height map at ``scale`` (module docstring):
    ``(128 u + 1)`` samples a side, ``scale / u`` m apart, centred on the origin; a material
    map of its ground (``"verti_bench/..."`` names, declared in the map); with ``obstacles``
    its rocks and trees as prisms."""
    import torch

    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a number > 0, got {scale!r}")
    if isinstance(upsample, bool) or not isinstance(upsample, int) or upsample < 1:
        raise ValueError(f"upsample must be an int >= 1, got {upsample!r}")
    d = load_dataset(dataset)
    k = _row(d, world)
    s, u = float(scale), upsample
    n = (_PIX - 1) * u + 1
    pix = np.arange(n) / u                       # the samples in source pixels
    grey = d["grey"][k].astype(np.float64) / 255.0 * float(d["max_height"][k]) * s
    # rows of the map grow with y: row ``i`` of the map is pixel row 128 - i / u
    img = grey[::-1]
    lo = np.minimum(np.floor(pix).astype(int), _PIX - 2)
    f = pix - lo
    h = img[lo] * (1 - f)[:, None] + img[lo + 1] * f[:, None]
    h = h[:, lo] * (1 - f)[None, :] + h[:, lo + 1] * f[None, :]
    xs = (pix - _HALF) * s                       # world x of the columns, y of the rows
    ys = xs
    # the ground's material: by patch (rigid) or by the builder's rows (soil)
    r_src = _HALF - ys / s                       # source pixel row of each map row
    pi = np.minimum((r_src // (_PATCH - 1)).astype(int), _NP - 1)
    pj = np.minimum((pix // (_PATCH - 1)).astype(int), _NP - 1)
    kind = _KINDS[int(d["kind"][k])]
    mu = d["effective_mu"][k]
    types = d["types"][k]
    names: list[str] = []
    defs: dict[str, dict] = {}

    def code(name, spec):
        if name not in names:
            names.append(name)
            defs[name] = spec
        return names.index(name)

    patch_code = np.zeros((_NP, _NP), dtype=np.int64)
    for i in range(_NP):
        for j in range(_NP):
            if np.isfinite(mu[i, j]):
                name, q = _mu_name(mu[i, j])
                patch_code[i, j] = code(name, {"mu": q})
            else:
                soil = f"verti_bench/{TYPES[int(types[i, j])]}"
                patch_code[i, j] = code(soil, SOILS[soil])
    mat = patch_code[pi[:, None], pj[None, :]]
    if kind == "deformable":
        for soil, r0, r1 in _soil_rows(types):
            c = code(f"verti_bench/{soil}", SOILS[f"verti_bench/{soil}"])
            rows = (r_src >= r0) & (r_src < r1) if r1 < _PIX else (r_src >= r0)
            mat[rows, :] = c
    if obstacles:
        oc = None
        for table, box, has_scale in ((d["rocks"], _ROCK, True), (d["trees"], _TREE, False)):
            for row in table[table[:, 0] == world]:
                x, y, z = row[1:4]
                sc = row[4] if has_scale else 1.0
                half = 0.5 * box[0] * sc * s
                top = (z + 0.5 * box[2] * sc) * s
                fp = obstacle_footprint(x * s, y * s, half, xs, ys)
                if fp.any():
                    h[fp] = np.maximum(h[fp], top)
                    oc = code("verti_bench/obstacle", {"mu": OBSTACLE_MU}) if oc is None else oc
                    mat[fp] = oc
    kw = {} if dtype is None else {"dtype": dtype}
    return HeightMap(torch.as_tensor(h), s / u, origin=(xs[0], ys[0]), device=device,
                     materials=mat.astype(np.uint8), material_names=tuple(names),
                     material_defs=defs, **kw)
