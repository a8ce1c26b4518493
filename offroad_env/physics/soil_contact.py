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

Shapes ``(K, N)``; units SI.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from terrain.materials import HARD

from .slip import smooth_sign
from .soil import (SOILS, Soil, SoilView, compaction_resistance, contact_length, sinkage,
                   slip_sinkage, soil, tan_phi, thrust)
from .surfaces import SURFACES, surface_mu

__all__ = ["V_ROLL", "check_tyre_width", "soil_shear", "soil_resistance", "rut_depth",
           "SoilTable", "soil_table", "wheel_soils"]

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
    map, to the last bit)."""

    columns: torch.Tensor
    soft: torch.Tensor
    mu: torch.Tensor | None


def soil_table(names, dtype, device) -> SoilTable:
    """The :class:`SoilTable` of material ``names`` (:data:`~terrain.materials.HARD`, surfaces
    of :data:`~.surfaces.SURFACES` or soils of :data:`~.soil.SOILS`); ValueError listing the
    known names for an unknown one."""
    for name in names:
        if name != HARD and name not in SURFACES and name not in SOILS:
            raise ValueError(f"unknown material {name!r}: a material map names {HARD!r}, "
                             f"surfaces {sorted(SURFACES)} or soils {sorted(SOILS)}")
    rigid = [name == HARD or name in SURFACES for name in names]
    rows = [soil("dry_sand" if hard else name) for name, hard in zip(names, rigid)]
    cols = [[getattr(s, f) for s in rows] for f in ("n", "k_c", "k_phi", "c", "phi", "K")]
    mu = [float("nan") if surface_mu(name) is None else surface_mu(name) for name in names]
    return SoilTable(torch.tensor(cols, dtype=dtype, device=device),
                     torch.tensor([not hard for hard in rigid], device=device),
                     torch.tensor(mu, dtype=dtype, device=device)
                     if any(name in SURFACES for name in names) else None)


def wheel_soils(table: SoilTable, index: torch.Tensor, strength=None):
    """``(SoilView, soft, mu)``: the soils of material ``index`` (``(K, N)`` int64) as ``(K,
    N)`` tensors (``k_c``, ``k_phi`` and ``c`` times ``strength``, ``(N,)`` or None), the mask
    of the wheels on soil, and each wheel's surface friction (NaN: the env's; None: the map
    names no surface)."""
    n, k_c, k_phi, c, phi, K = table.columns[:, index].unbind(0)
    f = 1.0 if strength is None else strength
    return (SoilView(n=n, k_c=k_c * f, k_phi=k_phi * f, c=c * f, phi=phi, K=K, name="map"),
            table.soft[index], None if table.mu is None else table.mu[index])


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
