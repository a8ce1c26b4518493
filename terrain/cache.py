"""A disk cache of large generated level stacks (:class:`~terrain.families.LevelsConfig`), so
that a second env built alike (a training run's restart, the suite's maps in each run of
``train.bench``) reads its maps instead of generating them again.

A stack is cached when it holds at least :data:`MIN_SAMPLES` samples (OffroadBench v1's training
stack: 140 maps of 961 x 961), as float32 heights (what :class:`~terrain.HeightMap` keeps by
default, so a cached stack builds the same map bit for bit) and its material map. The key is a
digest of the config, the seed, NumPy's version and the terrain package's code (its comments and
docstrings left out): a change to a generator makes a new entry, never a stale read. At most
:data:`MAX_ENTRIES` entries are kept, the least recently used removed first.

Where: ``$OFFROAD_ENV_CACHE`` (``off``: no cache), else ``$XDG_CACHE_HOME/offroad_env``, else
``~/.cache/offroad_env``; a folder that cannot be written is no cache (said once).
"""

from __future__ import annotations

import ast
import hashlib
import os
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["cache_dir", "cached_levels", "code_digest", "MIN_SAMPLES", "MAX_ENTRIES", "CACHE_ENV"]

#: the environment variable naming the cache folder (``off``: no cache)
CACHE_ENV = "OFFROAD_ENV_CACHE"
#: the smallest stack [samples] worth caching
MIN_SAMPLES = 20_000_000
#: the entries kept
MAX_ENTRIES = 6


def cache_dir() -> Path | None:
    """The cache folder, or None where the cache is off."""
    where = os.environ.get(CACHE_ENV)
    if where is not None:
        return None if where.strip().lower() in ("", "off", "0", "none") else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "offroad_env"


@lru_cache(maxsize=16)
def code_digest(*paths: Path) -> str:
    """A digest of the code of the Python files ``paths`` (folders: every ``.py`` under them)
    with their comments and docstrings left out, and of NumPy's version: it changes when what
    the code computes may change, not when its words do."""
    files = sorted({f for p in map(Path, paths)
                    for f in (p.rglob("*.py") if p.is_dir() else [p])})
    h = hashlib.sha256(np.__version__.encode())
    for f in files:
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        h.update(f.name.encode())
        h.update(ast.dump(tree).encode())
    return h.hexdigest()


def _key(cfg, seed: int) -> str:
    terrain_code = code_digest(Path(__file__).resolve().parent)
    return hashlib.sha256(f"{cfg!r}|{seed}|{terrain_code}".encode()).hexdigest()[:24]


def cached_levels(cfg, seed: int, min_samples: int = MIN_SAMPLES):
    """``(heights (M, ny, nx) float32, materials (M, ny, nx) uint8 or None, names or None)`` of
    every map of the levels ``cfg`` (:func:`~terrain.families.level_maps`,
    :func:`~terrain.families.level_materials`), read from the cache where an entry is there and
    written to it after generating a stack of at least ``min_samples`` samples."""
    from .families import level_maps, level_materials

    folder = cache_dir()
    ny, nx = (int(round(s / r)) + 1 for s, r in zip(cfg.size[::-1], cfg.resolution[::-1]))
    big = cfg.num_maps * ny * nx >= min_samples
    path = None if folder is None or not big else folder / f"levels-{_key(cfg, seed)}.npz"
    if path is not None and path.exists():
        try:
            with np.load(path, allow_pickle=False) as f:
                heights = f["heights"]
                materials = f["materials"] if "materials" in f else None
                names = tuple(str(n) for n in f["names"]) if "names" in f else None
            os.utime(path)  # recently used
            return heights, materials, names
        except (OSError, ValueError, KeyError) as exc:  # a broken entry: make it again
            warnings.warn(f"terrain cache entry {path} is unreadable ({exc}); generating",
                          RuntimeWarning, stacklevel=2)
    heights = np.stack(level_maps(cfg, seed)).astype(np.float32)
    materials, names = level_materials(cfg, seed)
    if path is not None:
        _store(path, heights, materials, names)
    return heights, materials, names


def _store(path: Path, heights, materials, names) -> None:
    """Write an entry (atomically: a half-written file is never read) and keep the newest
    :data:`MAX_ENTRIES`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        extra = {} if materials is None else {"materials": materials,
                                              "names": np.asarray(names, dtype=str)}
        np.savez(tmp, heights=heights, **extra)
        os.replace(tmp, path)
        entries = sorted(path.parent.glob("levels-*.npz"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-MAX_ENTRIES]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        warnings.warn(f"terrain cache: cannot write {path} ({exc}); set {CACHE_ENV}=off to "
                      "stop trying", RuntimeWarning, stacklevel=3)
