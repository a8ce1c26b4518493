"""Material maps: what the ground is made of, per sample of a height map.

A :class:`~terrain.heightmap.HeightMap` may carry beside its heights a material map, an integer
per sample (``(M, ny, nx)`` uint8, laid out as the heights), and the names of its materials:
sample value ``i`` is ``material_names[i]``. The names mean what the vehicle models make of them
(this package knows nothing of soils): the physical model reads ``"hard"`` (:data:`HARD`) as
rigid ground with the env's friction, a name of ``offroad_env.physics.surfaces.SURFACES``
(``"ice"``, ``"gravel"``...) as rigid ground with that surface's friction, and any other name
as a soil of ``offroad_env.physics.soil.SOILS`` (an unknown name is refused where the model
meets it).

A point's material is its nearest sample's (:func:`material_at`); maps of a stack share one name
list (:func:`merge`, used by :meth:`terrain.HeightMap.stack`, takes the union in order of appearance and
renumbers).

**Declared materials.** Beside the built-in tables a map may declare materials of its own by name
(``HeightMap(material_defs=...)``; :func:`check_material_defs`): a *surface* is rigid ground with
its own tyre friction ``mu`` and, optionally, rolling resistance coefficient ``c_rr``; a *soil*
gives the six terramechanics parameters of :data:`SOIL_KEYS` (Bekker ``n``, ``k_c``
[N/m^(n+1)], ``k_phi`` [N/m^(n+2)], cohesion ``c`` [Pa], friction angle ``phi_deg`` [deg],
Janosi shear modulus ``K`` [m]). A declared name must not be a built-in one (name them in a
namespace of your own, ``"verti_bench/snow"``: the physical model refuses a declaration that
would shadow its table). Declarations travel with the map through :meth:`~terrain.HeightMap.stack`
(the union; one name declared two ways is refused) and indexing. This package checks their form
(the keys and finite, non-negative numbers); the physical model checks what they mean (a soil's
``n`` in its range, :class:`offroad_env.physics.soil.Soil`).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import torch

__all__ = ["HARD", "MAX_MATERIALS", "SURFACE_KEYS", "SOIL_KEYS", "check_materials",
           "check_material_defs", "merge", "merge_material_defs", "material_kind",
           "material_at", "soft_materials"]

#: the material name of rigid ground
HARD = "hard"
#: the most materials a map may name (its samples are uint8)
MAX_MATERIALS = 256
#: a declared surface's parameters: ``mu`` (required), ``c_rr`` (optional: else the vehicle's)
SURFACE_KEYS = ("mu", "c_rr")
#: a declared soil's parameters, all required (units in the module docstring)
SOIL_KEYS = ("n", "k_c", "k_phi", "c", "phi_deg", "K")


def material_kind(params) -> str:
    """``"surface"`` or ``"soil"``: what a declaration's keys make it (checked ones)."""
    return "surface" if "mu" in dict(params) else "soil"


def check_material_defs(defs, where: str = "material_defs") -> tuple:
    """Declared materials in their stored form, a tuple of ``(name, ((key, value), ...))``
    sorted by name (hashable, order-free); ``defs`` is a mapping ``{name: {key: number}}`` (or
    that stored form, or None: ``()``). ValueError naming ``where``, the material and the key
    for: a name that is not a non-empty string or is :data:`HARD`; a declaration that is
    neither a surface (``mu``, optionally ``c_rr``) nor a soil (every key of
    :data:`SOIL_KEYS`), with the keys it lacks or does not know; a value that is not a finite
    number >= 0."""
    if defs is None:
        return ()
    items = defs.items() if isinstance(defs, Mapping) else defs
    out = {}
    for entry in items:
        try:
            name, params = entry
        except (TypeError, ValueError):
            raise ValueError(f"{where}: expected {{name: {{parameter: value}}}}, got "
                             f"{defs!r}") from None
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: a material's name must be a non-empty string, got "
                             f"{name!r}")
        if name == HARD:
            raise ValueError(f"{where}: {HARD!r} is the rigid ground of the env's friction; "
                             "declare a surface under another name")
        if not isinstance(params, Mapping):
            try:
                params = dict(params)
            except (TypeError, ValueError):
                raise ValueError(f"{where}[{name!r}]: expected a mapping of parameters, got "
                                 f"{params!r}") from None
        keys = set(params)
        if "mu" in keys:
            unknown, missing = keys - set(SURFACE_KEYS), set()
            kind = f"a surface takes {list(SURFACE_KEYS)} (mu required)"
        else:
            unknown, missing = keys - set(SOIL_KEYS), set(SOIL_KEYS) - keys
            kind = (f"a soil needs all of {list(SOIL_KEYS)}; a surface needs 'mu' (and may "
                    "give 'c_rr')")
        if unknown or missing:
            what = "; ".join(s for s in (f"unknown {sorted(unknown)}" if unknown else "",
                                         f"missing {sorted(missing)}" if missing else "") if s)
            raise ValueError(f"{where}[{name!r}]: {what}: {kind}")
        for k, v in params.items():
            if (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating))
                    or not math.isfinite(float(v)) or float(v) < 0):
                raise ValueError(f"{where}[{name!r}].{k} must be a finite number >= 0, got "
                                 f"{v!r}")
        out[name] = tuple(sorted((k, float(v)) for k, v in params.items()))
    return tuple(sorted(out.items()))


def merge_material_defs(parts) -> tuple:
    """The union of several maps' stored declarations (:func:`check_material_defs`);
    ValueError for one name declared two ways."""
    out: dict = {}
    for defs in parts:
        for name, params in defs:
            if name in out and out[name] != params:
                raise ValueError(f"material {name!r} is declared two ways: {dict(out[name])} "
                                 f"and {dict(params)}")
            out[name] = params
    return tuple(sorted(out.items()))


def check_materials(materials, names, shape: tuple[int, int, int], device):
    """``(materials (M, ny, nx) uint8 on device, names tuple)``, or ``(None, None)`` when both
    are None; ValueError naming what is wrong (one given without the other, a shape unlike the
    heights' ``shape``, a value that is not an index into ``names``, names that are not distinct
    non-empty strings)."""
    if materials is None and names is None:
        return None, None
    if materials is None or names is None:
        raise ValueError("give materials and material_names together (each sample's index into "
                         f"the names), got materials={'None' if materials is None else '...'} "
                         f"and material_names={names!r}")
    if isinstance(names, str) or not isinstance(names, Sequence) or not names or not all(
            isinstance(s, str) and s for s in names) or len(set(names)) != len(names):
        raise ValueError(f"material_names must be a sequence of distinct non-empty strings, got "
                         f"{names!r}")
    if len(names) > MAX_MATERIALS:
        raise ValueError(f"at most {MAX_MATERIALS} material names, got {len(names)}")
    if isinstance(materials, torch.Tensor):
        arr = materials.detach().cpu().numpy()
    else:
        arr = np.asarray(materials)
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
        raise ValueError(f"materials must hold integers (indices into material_names), got "
                         f"dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.shape != tuple(shape):
        raise ValueError(f"materials must have the heights' shape {tuple(shape)} (or (ny, nx) "
                         f"for one map), got {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= len(names)):
        raise ValueError(f"materials must be indices in [0, {len(names)}) into material_names "
                         f"{tuple(names)}, got values in [{arr.min()}, {arr.max()}]")
    return (torch.as_tensor(arr.astype(np.uint8)).to(device).contiguous(), tuple(names))


def merge(parts: Sequence[tuple]) -> tuple:
    """``(materials (M, ny, nx), names)`` of a stack of maps, each given as ``(materials (m, ny,
    nx) or None, names or None, heights (m, ny, nx))``; a map without a material map is all
    :data:`HARD`. ``(None, None)`` when no map has one."""
    if all(m is None for m, _, _ in parts):
        return None, None
    names: list[str] = []
    for _, ns, _ in parts:
        for s in (HARD,) if ns is None else ns:
            if s not in names:
                names.append(s)
    if len(names) > MAX_MATERIALS:
        raise ValueError(f"the stack's maps name {len(names)} materials, at most "
                         f"{MAX_MATERIALS}")
    out = []
    for m, ns, h in parts:
        if m is None:
            out.append(torch.full(h.shape, names.index(HARD), dtype=torch.uint8,
                                  device=h.device))
        else:
            lut = torch.tensor([names.index(s) for s in ns], dtype=torch.uint8, device=m.device)
            out.append(lut[m.long()])
    return torch.cat(out), tuple(names)


def material_at(maps, x, y, map_index=None) -> torch.Tensor:
    """The material index (int64, into ``maps.material_names``) of the sample nearest each world
    point ``(x, y)`` [m] (clamped to the grid), on map ``map_index`` of the stack (ints
    broadcastable to the query; may be omitted for one map); ValueError for a map without a
    material map."""
    mat = maps.materials
    if mat is None:
        raise ValueError(f"{maps!r} has no material map")
    iy, ix = maps.grid_indices(x, y)
    flat = iy * maps.nx + ix
    if map_index is not None:
        flat = flat + torch.as_tensor(map_index, device=flat.device).to(torch.int64) * (
            maps.nx * maps.ny)
    elif len(maps) != 1:
        raise ValueError(f"this is a stack of {len(maps)} maps: pass map_index")
    return torch.take(mat.reshape(-1), flat).to(torch.int64)


def soft_materials(maps) -> tuple[str, ...]:
    """The names of the materials other than :data:`HARD` that some sample of ``maps`` holds
    (``()`` for a map without a material map)."""
    mat = maps.materials
    if mat is None:
        return ()
    used = torch.unique(mat).tolist()
    return tuple(maps.material_names[i] for i in used if maps.material_names[i] != HARD)
