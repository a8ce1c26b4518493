"""Soft soil: Bekker-Wong terramechanics of a rigid wheel, elementwise in torch.

A rigid wheel of radius r (diameter D = 2 r) and width b sunk z into soil with the Bekker
parameters ``n``, ``k_c``, ``k_phi`` and the Mohr-Coulomb/Janosi ones ``c``, ``phi``, ``K``
(:class:`Soil`):

- **Pressure-sinkage** (Bekker): ``p(z) = (k_c / b + k_phi) z^n = k z^n``.
- **The contact arc.** The rim meets the undisturbed surface at ``theta_0 = acos(1 - z / r)``
  from the bottom; the rim point at angle ``theta`` (from the bottom) lies ``r (cos theta -
  cos theta_0)`` below the surface.
- **Support.** The vertical part of the normal pressure over the arc (Bekker's; the shear's
  vertical part is neglected): a rolling wheel carries its load on the front arc,
  ``W = b r int_0^theta_0 p(r (cos theta - cos theta_0)) cos theta dtheta = b k r^(n+1) F_n(u)``
  with ``u = z / r`` and ``F_n(u) = int_0^theta_0 (cos theta - cos theta_0)^n cos theta
  dtheta``; a wheel at rest on the symmetric arc, ``2 b k r^(n+1) F_n(u)``, so it sinks less
  (by ``1 - 2^(-1 / (n + 1/2))``, 35 % on dry sand, at small sinkage). :func:`support` computes
  ``F_n`` by Gauss-Legendre quadrature; :func:`sinkage` inverts it through a table of
  ``log u`` against ``n`` and ``log(F) / (n + 1/2)`` (a smooth function: ``F_n ~ u^(n+1/2)``)
  that is built once by bisection on that quadrature.
- **The classical closed form** (:func:`sinkage_closed_form`), ``z0 = (3 W / ((3 - n) (k_c + b
  k_phi) sqrt(D)))^(2 / (2 n + 1))``, replaces the arc by a parabola and ``int z^n dx`` by a
  further approximation; it is good to a few % where ``z0 <= 0.1 D``.
- **Compaction resistance**: ``R_c = b int_0^z p dz = b k z^(n+1) / (n + 1)``.
- **Thrust** (Janosi-Hanamoto shear ``tau = (c + sigma tan phi) (1 - exp(-j / K))``, the shear
  displacement growing as ``j = i x`` from the front of a contact of length ``l``, area ``A =
  b l``, the normal stress uniform): ``F = (A c + W tan phi) (1 - K / (i l) (1 - exp(-i l /
  K)))`` for the slip ``i = 1 - v / (omega r)``; ``l`` is the arc's length ``r theta_0``
  (rolling) or ``2 r theta_0`` (at rest).
- **Drawbar pull** ``DP = F - R_c``: zero at the slip where thrust meets the resistance.
- **Slip-sinkage** (Lyasko 2010): a slipping wheel digs, ``z_i = z (1 + i) / (1 - 0.5 i)``
  for ``0 <= i <= 1`` (4 z at ``i = 1``). Counted as compaction (``R_c(z_i)``) it would make the
  pull fall steeply at high slip, and a Husky could not drive on flat dry sand (the pull is
  negative at every slip); the model counts the compaction at the load's sinkage and lets the
  deeper rut lengthen the contact, so the pull rises with slip and a digging wheel sinks
  (toward its belly) rather than brakes.

Units: SI (m, N, Pa, rad). Parameters may be python floats or tensors that broadcast with the
inputs (per-environment soils).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields

import numpy as np
import torch

__all__ = ["Soil", "SoilView", "SOILS", "soil", "tan_phi", "pressure", "support", "sinkage", "sinkage_slope", "sinkage_closed_form",
           "inverse_table",
           "compaction_resistance", "contact_length", "thrust", "drawbar_pull", "slip_sinkage",
           "N_RANGE"]

#: the sinkage exponents the tables cover (every soil of the classical tables lies inside)
N_RANGE = (0.05, 2.0)


@dataclass(frozen=True)
class Soil:
    """A soil's terramechanics parameters (SI units).

    Attributes:
        n: sinkage exponent (Bekker), in :data:`N_RANGE`.
        k_c: cohesive modulus of deformation [N/m^(n+1)].
        k_phi: frictional modulus of deformation [N/m^(n+2)].
        c: cohesion [Pa].
        phi: angle of internal shearing resistance [rad].
        K: shear deformation modulus (Janosi-Hanamoto) [m].
        name: a label.
    """

    n: float
    k_c: float
    k_phi: float
    c: float
    phi: float
    K: float
    name: str = "custom"

    def __post_init__(self):
        for f in fields(self):
            if f.name == "name":
                continue
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"Soil.{f.name} must be a finite number, got {v!r}")
            if v < 0 or (f.name in ("n", "K") and v == 0):
                raise ValueError(f"Soil.{f.name} must be {'> 0' if f.name in ('n', 'K') else '>= 0'}"
                                 f", got {v!r}")
        lo, hi = N_RANGE
        if not lo <= self.n <= hi:
            raise ValueError(f"Soil.n must be in [{lo}, {hi}], got {self.n!r}")
        if self.phi >= math.pi / 2:
            raise ValueError(f"Soil.phi must be below pi/2 rad, got {self.phi!r}")
        if self.k_c == 0 and self.k_phi == 0:
            raise ValueError("Soil.k_c and Soil.k_phi cannot both be 0 (no bearing strength)")

    def k(self, b):
        """``k_c / b + k_phi`` [N/m^(n+2)] for a contact ``b`` [m] wide."""
        return self.k_c / b + self.k_phi

    def varied(self, strength=None, phi=None) -> "SoilView":
        """This soil per environment (domain randomization): ``k_c``, ``k_phi`` and ``c``
        times ``strength``, the friction angle ``phi`` [rad] (tensors that broadcast with the
        wheels' ``(K, N)``, or None: as here); ``n`` and ``K`` stay."""
        f = 1.0 if strength is None else strength
        return SoilView(n=self.n, k_c=self.k_c * f, k_phi=self.k_phi * f, c=self.c * f,
                        phi=self.phi if phi is None else phi, K=self.K, name=self.name)


@dataclass(frozen=True)
class SoilView:
    """A :class:`Soil` whose ``k_c``, ``k_phi``, ``c`` and ``phi`` may be tensors (per
    environment); built by :meth:`Soil.varied`, unchecked (its inputs were)."""

    n: float
    k_c: object
    k_phi: object
    c: object
    phi: object
    K: float
    name: str = "custom"

    k = Soil.k


def tan_phi(s):
    """``tan(phi)`` of a soil, a float or a tensor."""
    return torch.tan(s.phi) if isinstance(s.phi, torch.Tensor) else math.tan(s.phi)


def _wong(name, n, k_c, k_phi, c, phi_deg, K):
    """A soil from Wong's units: k_c [kN/m^(n+1)], k_phi [kN/m^(n+2)], c [kPa], phi [deg];
    K [m]."""
    return Soil(n=n, k_c=k_c * 1e3, k_phi=k_phi * 1e3, c=c * 1e3, phi=math.radians(phi_deg),
                K=K, name=name)


#: the classical soils (Wong, *Theory of Ground Vehicles*, table of Bekker and Mohr-Coulomb
#: parameters; lunar nominal soil from the MER traverse literature). The shear moduli K are not
#: in that table: they are assumed from the ranges Wong gives (about 1-2.5 cm for sands and
#: loams, 0.6 cm for firm clays, 2.5-4 cm for snow) as Project Chrono's SCM examples take them.
SOILS = {
    "dry_sand": _wong("dry_sand", 1.1, 0.99, 1528.43, 1.04, 28.0, 0.02),
    "sandy_loam": _wong("sandy_loam", 0.7, 5.27, 1515.04, 1.72, 29.0, 0.02),
    "clayey_soil": _wong("clayey_soil", 0.5, 13.19, 692.15, 4.14, 13.0, 0.02),
    "heavy_clay": _wong("heavy_clay", 0.13, 12.70, 1555.95, 68.95, 34.0, 0.006),
    "lean_clay": _wong("lean_clay", 0.2, 16.43, 1724.69, 68.95, 20.0, 0.006),
    "lete_sand": _wong("lete_sand", 0.79, 102.0, 5301.0, 1.3, 31.1, 0.012),
    "snow": _wong("snow", 1.6, 4.37, 196.72, 1.03, 19.7, 0.03),
    "lunar": _wong("lunar", 1.0, 1.4, 820.0, 0.17, 35.0, 0.01),
}


def soil(name) -> Soil:
    """A soil of :data:`SOILS` by name (a :class:`Soil` is returned as it is); ValueError
    listing the known names otherwise."""
    if isinstance(name, Soil):
        return name
    try:
        return SOILS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown soil {name!r}; known: {sorted(SOILS)} (or a Soil(...))"
                         ) from None


def pressure(s: Soil, b, z):
    """Bekker's pressure ``(k_c / b + k_phi) z^n`` [Pa] at sinkage ``z`` [m] (0 above ground)."""
    return s.k(b) * torch.as_tensor(z).clamp_min(0.0) ** s.n


# ------------------------------------------------------------------ the arc integral F_n(u)
_GL_NODES = 64


@functools.lru_cache(maxsize=None)
def _gauss_legendre(m: int):
    x, w = np.polynomial.legendre.leggauss(m)
    return 0.5 * (x + 1.0), 0.5 * w  # on [0, 1]


def _arc_integral_np(n, u):
    """``F_n(u)`` (module docstring) in float64 numpy, broadcasting ``n`` and ``u`` in (0, 1]:
    Gauss-Legendre in ``tau`` with ``theta = theta_0 (1 - tau^2)``, which turns the end
    singularity ``(theta_0 - theta)^n`` into the smooth ``tau^(2n+1)``; the difference of
    cosines is taken as a product of sines (no cancellation at small sinkage)."""
    n, u = np.broadcast_arrays(np.asarray(n, float), np.asarray(u, float))
    th0 = np.arccos(np.clip(1.0 - u, -1.0, 1.0))[..., None]
    tau, w = _gauss_legendre(_GL_NODES)
    th = th0 * (1.0 - tau * tau)
    gap = 2.0 * np.sin(th0 * (1.0 - 0.5 * tau * tau)) * np.sin(0.5 * th0 * tau * tau)
    f = np.power(np.maximum(gap, 0.0), n[..., None]) * np.cos(th) * 2.0 * th0 * tau
    return (f * w).sum(-1)


def support(s: Soil, b, r, z, static: bool = False) -> torch.Tensor:
    """The load [N] a rigid wheel (radius ``r``, width ``b`` [m]) carries at sinkage ``z`` [m]:
    ``b k r^(n+1) F_n(z / r)`` rolling (the front arc), twice that at rest (``static``)."""
    z = torch.as_tensor(z, dtype=torch.float64)
    u = (z / r).clamp(0.0, 1.0)
    F = torch.from_numpy(np.asarray(_arc_integral_np(s.n, u.detach().cpu().numpy())))
    return (2.0 if static else 1.0) * b * s.k(b) * r ** (s.n + 1.0) * F.to(z.device)


# the inverse: a table of log u on a grid of n (every 0.01) and psi = log(F_n(u)) / (n + 1/2)
_N_STEP = 0.01
_U_MIN = 1e-7
_SAMPLES = 2048


@functools.lru_cache(maxsize=1)
def _table_np() -> tuple:
    """``(table, psi_lo, psi_step)``: ``table[i, j]`` is ``log u`` where ``log F_n(u) / (n +
    1/2) = psi_lo + j psi_step`` for ``n = N_RANGE[0] + 0.01 i``: the quadrature on 2048
    values of ``log u`` in ``[log U_MIN, 0]`` (float64; ``psi`` rises with ``u``), inverted by
    linear interpolation onto a uniform ``psi`` grid, clamped to that range. Built once a
    process (1-3 s); its inverse agrees with the quadrature to 2.5e-4 relative over ``n`` in
    [0.07, 1.98] and ``z`` from 1e-5 m to 0.9 r (``tests/physics/test_soil.py``)."""
    lo, hi = N_RANGE
    ns = lo + _N_STEP * np.arange(int(round((hi - lo) / _N_STEP)) + 1)
    lu = np.linspace(math.log(_U_MIN), 0.0, _SAMPLES)
    psi_n = np.log(_arc_integral_np(ns[:, None], np.exp(lu)[None, :])) / (ns[:, None] + 0.5)
    psi_lo, psi_hi = float(psi_n[:, 0].min()), float(psi_n[:, -1].max())
    psi = np.linspace(psi_lo, psi_hi, _SAMPLES)
    table = np.stack([np.interp(psi, row, lu) for row in psi_n])
    return table, psi_lo, (psi_hi - psi_lo) / (_SAMPLES - 1)


_TABLES: dict = {}


def inverse_table(dtype, device) -> tuple:
    """``(flat table tensor, rows, cols, psi_lo, psi_step)`` of ``_table_np`` in ``dtype``
    on ``device``, built once each (the physical model builds it eagerly, before a compiled
    step reads it)."""
    key = (dtype, str(device))
    if key not in _TABLES:
        table, psi_lo, step = _table_np()
        _TABLES[key] = (torch.tensor(table.reshape(-1), dtype=dtype, device=device),
                        table.shape[0], table.shape[1], psi_lo, step)
    return _TABLES[key]


def _log_u(n, psi: torch.Tensor, slope: bool = False):
    """``log u`` where ``log F_n(u) / (n + 1/2) = psi``: bilinear in the table of
    :func:`inverse_table` (``n`` a float or a tensor that broadcasts with ``psi``: soils may
    differ per element), clamped to ``[log U_MIN, 0]``. ``slope``: also ``d log u / d psi``
    of that interpolant (0 where ``psi`` is clamped)."""
    flat, rows, cols, psi_lo, step = inverse_table(psi.dtype, psi.device)
    fi = torch.as_tensor((n - N_RANGE[0]) / _N_STEP, dtype=psi.dtype, device=psi.device)
    fi = torch.broadcast_to(fi, psi.shape).clamp(0.0, rows - 1.0)
    i0 = fi.floor().clamp_max(rows - 2.0)
    wi = fi - i0
    fj = ((psi - psi_lo) / step).clamp(0.0, cols - 1.0)
    j0 = fj.floor().clamp_max(cols - 2.0)
    wj = fj - j0
    idx = (i0 * cols + j0).to(torch.int64)
    at = lambda k: torch.take(flat, idx + k)  # noqa: E731
    a0, a1, b0, b1 = at(0), at(1), at(cols), at(cols + 1)
    lu = (1.0 - wi) * ((1.0 - wj) * a0 + wj * a1) + wi * ((1.0 - wj) * b0 + wj * b1)
    if not slope:
        return lu
    inside = (psi >= psi_lo) & (psi <= psi_lo + (cols - 1) * step)
    d = ((1.0 - wi) * (a1 - a0) + wi * (b1 - b0)) * (1.0 / step)
    return lu, torch.where(inside, d, torch.zeros_like(d))


def sinkage(s: Soil, b, r, W, static: bool = False) -> torch.Tensor:
    """The sinkage [m] at which a rigid wheel (radius ``r``, width ``b`` [m]) carries the load
    ``W`` [N] (rolling on the front arc, or at rest on the symmetric arc with ``static``): the
    inverse of :func:`support`, bilinear in a table of ``log(z / r)`` against ``n`` and
    ``log F_n / (n + 1/2)`` (:func:`inverse_table`). Capped at ``r`` (a wheel sunk to its
    axle); 0 for ``W <= 0``. ``s.n`` may be a float or a tensor (soils differing per element)."""
    W = torch.as_tensor(W)
    if not W.is_floating_point():
        W = W.to(torch.get_default_dtype())
    F = W.clamp_min(1e-30) / ((2.0 if static else 1.0) * b * s.k(b) * r ** (s.n + 1.0))
    lu = _log_u(s.n, torch.log(F) / (s.n + 0.5))
    return torch.where(W > 0, r * torch.exp(lu), torch.zeros_like(W))


def sinkage_slope(s: Soil, b, r, W, static: bool = False):
    """:func:`sinkage` ``z`` [m] of the loads ``W`` [N] (a float tensor) and its slope ``dz/dW``
    [m/N], the derivative of the same interpolant (``z = r u``, ``dz/dW = z (d log u / d psi)
    / ((n + 1/2) W)``; 0 for ``W <= 0`` and where the table is clamped)."""
    F = W.clamp_min(1e-30) / ((2.0 if static else 1.0) * b * s.k(b) * r ** (s.n + 1.0))
    lu, dlu = _log_u(s.n, torch.log(F) / (s.n + 0.5), slope=True)
    pos = W > 0
    z = torch.where(pos, r * torch.exp(lu), torch.zeros_like(W))
    dz = torch.where(pos, z * dlu / ((s.n + 0.5) * W.clamp_min(1e-30)), torch.zeros_like(W))
    return z, dz


def sinkage_closed_form(s: Soil, b, r, W):
    """The classical rolling-wheel sinkage ``(3 W / ((3 - n) (k_c + b k_phi) sqrt(D)))^(2 / (2 n
    + 1))`` [m] (module docstring: an approximation, a few % where it is at most ``0.1 D``)."""
    W = torch.as_tensor(W)
    base = 3.0 * W.clamp_min(0.0) / ((3.0 - s.n) * (s.k_c + b * s.k_phi) * math.sqrt(2.0 * r))
    return base ** (2.0 / (2.0 * s.n + 1.0))


def compaction_resistance(s: Soil, b, z):
    """``R_c = b (k_c / b + k_phi) z^(n+1) / (n + 1)`` [N]: the work per metre of pressing a rut
    ``z`` [m] deep."""
    z = torch.as_tensor(z).clamp_min(0.0)
    return b * s.k(b) * z ** (s.n + 1.0) / (s.n + 1.0)


def contact_length(r, z, static: bool = False):
    """The contact arc's length [m]: ``r theta_0`` rolling (the front arc), ``2 r theta_0`` at
    rest, ``theta_0 = acos(1 - z / r)``."""
    z = torch.as_tensor(z)
    th0 = torch.arccos((1.0 - z.clamp_min(0.0) / r).clamp(-1.0, 1.0))
    return (2.0 if static else 1.0) * r * th0


def thrust(s: Soil, W, b, l, i):
    """Janosi-Hanamoto thrust [N] of a contact ``l`` [m] long and ``b`` [m] wide carrying
    ``W`` [N] at slip ``i`` (``1 - v / (omega r)``; negative: a braked wheel, the thrust
    reverses): ``(A c + W tan phi) (1 - K / (|i| l) (1 - exp(-|i| l / K))) sgn(i)``, ``A = b
    l``. The bracket tends to ``|i| l / (2 K)`` as ``i -> 0`` and is taken so below 1e-6."""
    W, l, i = (torch.as_tensor(x) for x in (W, l, i))
    cap = b * l * s.c + W.clamp_min(0.0) * tan_phi(s)
    x = i.abs() * l / s.K
    small = x < 1e-6
    x_safe = torch.where(small, torch.ones_like(x), x)
    bracket = torch.where(small, 0.5 * x, 1.0 - (1.0 - torch.exp(-x_safe)) / x_safe)
    return cap * bracket * torch.sign(i)


def slip_sinkage(z, i):
    """Lyasko's slip-sinkage ``z (1 + i) / (1 - 0.5 i)`` [m] for the slip ``i`` clamped to
    [0, 1] (a braked or skidding wheel keeps ``z``)."""
    i = torch.as_tensor(i).clamp(0.0, 1.0)
    return torch.as_tensor(z) * (1.0 + i) / (1.0 - 0.5 * i)


def drawbar_pull(s: Soil, b, r, W, i, slip_sinks: bool = False):
    """Drawbar pull ``thrust - R_c`` [N] of a rolling rigid wheel carrying ``W`` [N] at slip
    ``i``, as the physical model's wheel on soil (:mod:`.soil_contact`): the rut from
    :func:`sinkage` (deepened by :func:`slip_sinkage` with ``slip_sinks``), the thrust over
    the rut's contact length, the compaction resistance at the load's sinkage (soil dug out is
    moved, not compacted; bulldozing is not modelled). Returns ``(pull, rut depth)``."""
    z0 = sinkage(s, b, r, torch.as_tensor(W, dtype=torch.float64))
    i = torch.as_tensor(i, dtype=torch.float64)
    z = torch.minimum(slip_sinkage(z0, i), torch.full_like(z0, r)) if slip_sinks else z0
    z = torch.broadcast_to(z, torch.broadcast_shapes(z.shape, i.shape))
    pull = thrust(s, W, b, contact_length(r, z), i) - compaction_resistance(s, b, z0)
    return pull, z
