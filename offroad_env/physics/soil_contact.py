"""The physical model's wheels on soft soil (:mod:`.soil` laws in the rigid-body step).

Each wheel carries a **rut depth** ``z`` (``(K, N)``, the state ``wheel_sinkage``): the wheel
stands on the floor of its rut, ``z`` below the terrain surface along the body's z axis, and
its suspension carries the load ``N`` onto it as on hard ground.

- **Plastic soil.** After each substep the rut deepens to the sinkage that carries ``N``
  (:func:`~.soil.sinkage`: the symmetric arc at rest, the front arc rolling, blended over
  ``|v| < v_roll``; with slip-sinkage, Lyasko's ``(1 + i) / (1 - 0.5 i)`` of it) and never
  springs back: unloading is rigid (the soil's unloading stiffness is taken as infinite; the
  measured ones are 10-100 times the loading slope, and the suspension is the only spring), so
  a wheel lifted and put down again sinks no further until its load passes the last peak, and
  sand does not bounce.
- **Fresh soil ahead.** A wheel that rolls onto undisturbed soil with less load than its rut
  held climbs out of it over its contact length: ``z`` moves toward the new sinkage by
  ``|v| h / l`` a substep (an airborne wheel's target is 0, so a wheel that lands elsewhere
  starts on the surface).
- **Shear.** The tangential laws become Janosi-Hanamoto's (:func:`~.soil.thrust`) over the
  contact length ``l = r theta_0`` and area ``b l``: longitudinally at the slip ratio (for a
  driven wheel ``i = 1 - v / (omega r)``), laterally at the slip angle's tangent; both are
  capped by the soil's shear strength ``A c + N tan(phi)`` (a friction coefficient ``tan(phi) +
  A c / N`` per wheel) in place of ``mu N``.
- **Resistance.** The compaction resistance ``b k z^(n+1) / (n + 1)`` opposes a rolling wheel
  in place of the tyre's rolling resistance, at the depth its load compacts rolling (at most
  the rut's): the soil that slip-sinkage digs out is moved behind, not compacted.

**Material maps.** Where the terrain names a material per sample (:mod:`terrain.materials`),
each wheel takes the soil of the sample nearest its hub at the start of a step
(:func:`soil_table`, :func:`wheel_soils`): a :class:`~.soil.SoilView` of ``(K, N)`` tensors and
a mask of the wheels on soil; a wheel on ``"hard"`` keeps the tyre laws and its rut is 0, and
one on a rigid surface of :data:`~.surfaces.SURFACES` keeps them with the surface's friction.
A map may declare its own surfaces (``mu``, optionally ``c_rr``: the tyre's rolling resistance
there) and soils by name (:func:`declared_materials`); the built-in tables stay the defaults.

Shapes ``(K, N)``; units SI.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from terrain.materials import HARD, check_material_defs, material_kind

from .slip import smooth_sign
from .soil import (SOILS, Soil, SoilView, compaction_resistance, contact_length, sinkage,
                   slip_sinkage, soil, tan_phi, thrust)
from .surfaces import SURFACES, surface_mu

__all__ = ["V_ROLL", "check_tyre_width", "soil_shear", "soil_resistance", "rut_depth",
           "SoilTable", "WheelSoils", "soil_table", "wheel_soils", "declared_materials"]

#: the speed [m/s] over which the support blends from the symmetric arc (at rest) to the front
#: arc (rolling)
V_ROLL = 0.05


def check_tyre_width(vehicle) -> None:
    """ValueError unless the vehicle has a tyre width (the soil contact's ``b``)."""
    if not vehicle.wheel_width > 0:
        raise ValueError(f"soil needs the vehicle's wheel_width (> 0 m: the contact's width), "
                         f"got {vehicle.wheel_width!r}")


class SoilTable(NamedTuple):
    """The soils of a material map's names, one row each: ``columns`` ``(6, S)`` holds ``n,
    k_c, k_phi, c, phi, K`` (a rigid row holds dry sand's, never used); ``soft`` ``(S,)``
    bool; ``mu`` ``(S,)`` a rigid surface's friction (NaN: the env's, for ``"hard"`` and
    soils), or None where no name is a surface (the env's friction everywhere, as without a
    map, to the last bit); ``c_rr`` ``(S,)`` a declared surface's rolling resistance (NaN: the
    vehicle's), or None where none declares one."""

    columns: torch.Tensor
    soft: torch.Tensor
    mu: torch.Tensor | None
    c_rr: torch.Tensor | None = None


class WheelSoils(NamedTuple):
    """Each wheel's ground from the material map (:func:`wheel_soils`), ``(K, N)`` each:
    ``soil`` a :class:`~.soil.SoilView`, ``soft`` the wheels on soil, ``mu`` a surface's
    friction (NaN: the env's; None: no surface), ``c_rr`` a surface's rolling resistance (NaN:
    the vehicle's; None: none declared)."""

    soil: SoilView
    soft: torch.Tensor
    mu: torch.Tensor | None
    c_rr: torch.Tensor | None


def declared_materials(defs) -> dict:
    """``{name: ("surface", (mu, c_rr or None)) or ("soil", Soil)}`` of a map's declared
    materials (``HeightMap.material_defs``, or the mapping a suite or sidecar gives;
    :func:`terrain.materials.check_material_defs` checks their form). ValueError naming the
    material for a name that is a built-in surface or soil (declare it under a name of your
    own: a declaration never shadows the tables) and for a soil the model cannot take (its
    :class:`~.soil.Soil` checks: ``n`` in range, ``phi`` below 90 deg, some bearing
    strength)."""
    out = {}
    for name, params in check_material_defs(defs):
        if name in SURFACES or name in SOILS:
            raise ValueError(f"declared material {name!r} is a built-in "
                             f"{'surface' if name in SURFACES else 'soil'}; declare yours under "
                             f"a name of its own (e.g. 'my_world/{name}')")
        p = dict(params)
        if material_kind(p) == "surface":
            out[name] = ("surface", (p["mu"], p.get("c_rr")))
            continue
        if p["phi_deg"] >= 90:
            raise ValueError(f"declared soil {name!r}: phi_deg must be below 90, got "
                             f"{p['phi_deg']!r}")
        try:
            out[name] = ("soil", Soil(n=p["n"], k_c=p["k_c"], k_phi=p["k_phi"], c=p["c"],
                                      phi=math.radians(p["phi_deg"]), K=p["K"], name=name))
        except ValueError as exc:
            raise ValueError(f"declared soil {name!r}: {exc}") from None
    return out


def soil_table(names, dtype, device, declared=()) -> SoilTable:
    """The :class:`SoilTable` of material ``names`` (:data:`~terrain.materials.HARD`, surfaces
    of :data:`~.surfaces.SURFACES`, soils of :data:`~.soil.SOILS`, or the map's ``declared``
    materials, :func:`declared_materials`); ValueError listing the known names for an unknown
    one."""
    own = declared_materials(declared)
    for name in names:
        if name != HARD and name not in SURFACES and name not in SOILS and name not in own:
            raise ValueError(f"unknown material {name!r}: a material map names {HARD!r}, "
                             f"surfaces {sorted(SURFACES)}, soils {sorted(SOILS)}"
                             + (f" or the map's declared {sorted(own)}" if own else
                                " or materials the map declares (material_defs)"))
    kinds = [own[n][0] if n in own else "surface" if n in SURFACES or n == HARD else "soil"
             for n in names]
    rigid = [k == "surface" for k in kinds]
    rows = [soil("dry_sand") if hard else own[n][1] if n in own else soil(n)
            for n, hard in zip(names, rigid)]
    cols = [[getattr(s, f) for s in rows] for f in ("n", "k_c", "k_phi", "c", "phi", "K")]

    def surface(n, i):  # mu (i = 0) or c_rr (1) of a surface; None: the env's or vehicle's
        if n in own and own[n][0] == "surface":
            return own[n][1][i]
        return surface_mu(n) if i == 0 else None

    nan = float("nan")
    mu = [nan if surface(n, 0) is None else surface(n, 0) for n in names]
    crr = [nan if surface(n, 1) is None else surface(n, 1) for n in names]
    return SoilTable(torch.tensor(cols, dtype=dtype, device=device),
                     torch.tensor([not hard for hard in rigid], device=device),
                     torch.tensor(mu, dtype=dtype, device=device)
                     if not all(math.isnan(v) for v in mu) else None,
                     torch.tensor(crr, dtype=dtype, device=device)
                     if not all(math.isnan(v) for v in crr) else None)


def wheel_soils(table: SoilTable, index: torch.Tensor, strength=None) -> WheelSoils:
    """The :class:`WheelSoils` of material ``index`` (``(K, N)`` int64): the soils as ``(K,
    N)`` tensors (``k_c``, ``k_phi`` and ``c`` times ``strength``, ``(N,)`` or None), the mask
    of the wheels on soil, each wheel's surface friction and rolling resistance."""
    n, k_c, k_phi, c, phi, K = table.columns[:, index].unbind(0)
    f = 1.0 if strength is None else strength
    return WheelSoils(SoilView(n=n, k_c=k_c * f, k_phi=k_phi * f, c=c * f, phi=phi, K=K,
                               name="map"),
                      table.soft[index], None if table.mu is None else table.mu[index],
                      None if table.c_rr is None else table.c_rr[index])


def soil_shear(s: Soil, b: float, r: float, z, kappa, v_t, v_l, N0, eps: float):
    """``(fx, fy, mu)``: the Janosi thrust along the tread [N] at the slip ratio ``kappa``, the
    lateral shear [N] at the slip angle's tangent ``v_l / |v_t|`` (against ``v_l``), both for
    the load ``N0`` [N] on the rut ``z`` [m]; and the per-wheel friction coefficient of the
    shear strength, ``tan(phi) + b l c / N0`` (``tan(phi)`` off the ground)."""
    l_c = contact_length(r, z)
    fx = thrust(s, N0, b, l_c, kappa.clamp(-1.0, 1.0))
    tan_a = (v_l / (v_t.abs() + eps)).clamp(-1.0, 1.0)
    fy = -thrust(s, N0, b, l_c, tan_a)
    loaded = N0 > 0
    mu = tan_phi(s) + torch.where(loaded, b * l_c * s.c / N0.clamp_min(1e-9),
                                       torch.zeros_like(N0))
    return fx, fy, mu


def soil_resistance(s: Soil, b: float, z, z_roll, v_t, N, v_eps: float):
    """The compaction resistance [N] of a loaded wheel, against its motion ``v_t`` (a smooth
    sign, as the tyre's rolling resistance): of the soil its load ``N`` compacts rolling
    (``z_roll``, :func:`~.soil.sinkage` of ``N``), at most its rut ``z`` deep (soil a slipping
    wheel dug out was moved, not compacted)."""
    rc = compaction_resistance(s, b, torch.minimum(z, z_roll))
    return torch.where(N > 0, -rc * smooth_sign(v_t, v_eps), torch.zeros_like(rc))


def rut_depth(s: Soil, b: float, r: float, z, N, z_roll, v_t, kappa, rim_speed, h: float,
              slip_sinks: bool):
    """The rut depth [m] after a substep ``h`` [s] in which the wheel carried ``N`` [N] moving
    at ``v_t`` [m/s] with slip ``kappa`` and rim speed ``rim_speed`` (``omega r``) [m/s]
    (module docstring; ``z_roll`` the rolling sinkage of ``N``): at once as deep as the load's
    sinkage; a slipping wheel digs toward
    the slip-sinkage as its rim passes over the soil (``|omega r| h / l`` of the way a substep:
    excavation takes a contact length of slipping rim); relaxed toward a shallower target by
    ``|v_t| h / l`` (fresh soil ahead); at most ``r``."""
    roll = (v_t.abs() / V_ROLL).clamp_max(1.0)
    z_stat = sinkage(s, b, r, N, static=True)
    z_load = (z_stat + roll * (z_roll - z_stat)).clamp_max(r)
    l_c = contact_length(r, z).clamp_min(0.01 * r)
    deeper = torch.maximum(z, z_load)
    if slip_sinks:
        dig = slip_sinkage(z_load, kappa).clamp_max(r)
        pace = (rim_speed.abs() * h / l_c).clamp_max(1.0)
        deeper = torch.where(dig > deeper, deeper + (dig - deeper) * pace, deeper)
    relax = (v_t.abs() * h / l_c).clamp_max(1.0)
    target = dig if slip_sinks else z_load
    return torch.where(target >= z, deeper, z + (target - z) * relax)
