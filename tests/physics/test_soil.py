"""Bekker-Wong soil (issue 25) against closed forms and an independent integration of the
pressure over the wheel's arc, written here without the module's quadrature or tables."""

import math

import numpy as np
import pytest
import torch

from offroad_env.physics import soil as S

#: the Husky's wheel and static load per wheel (50 kg on four wheels)
R, B = 0.1651, 0.1143
W0 = 50.0 * 9.81 / 4.0
F64 = dict(dtype=torch.float64)


def _load_by_midpoints(s, z, static, m=40_000):
    """The vertical load [N] of the Bekker pressure over the arc at sinkage ``z``: the midpoint
    rule in theta over [0, theta_0] (front arc), doubled for the symmetric arc at rest."""
    th0 = math.acos(1.0 - z / R)
    th = (np.arange(m) + 0.5) * th0 / m
    depth = R * (np.cos(th) - math.cos(th0))
    p = (s.k_c / B + s.k_phi) * np.maximum(depth, 0.0) ** s.n
    w = B * R * float((p * np.cos(th)).sum() * th0 / m)
    return 2.0 * w if static else w


def _sinkage_by_bisection(s, W, static):
    lo, hi = 1e-9, R
    for _ in range(56):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _load_by_midpoints(s, mid, static) < W else (lo, mid)
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("name", ["dry_sand", "sandy_loam", "lete_sand", "snow"])
@pytest.mark.parametrize("static", [False, True])
def test_sinkage_meets_the_integrated_arc_at_half_one_and_two_loads(name, static):
    s = S.soil(name)
    for scale in (0.5, 1.0, 2.0):
        W = scale * W0
        ref = _sinkage_by_bisection(s, W, static)
        if ref > 0.999 * R:
            continue  # snow at twice the load: buried past the axle (the model caps at r)
        z = float(S.sinkage(s, B, R, torch.tensor(W, dtype=torch.float64), static=static))
        closed = float(S.sinkage_closed_form(s, B, R, torch.tensor(W)))
        print(f"{name} {'static ' if static else 'rolling'} W {W:6.1f} N: model {z * 1e3:7.3f} "
              f"mm, integrated {ref * 1e3:7.3f} mm, closed form (rolling) {closed * 1e3:7.3f} mm")
        assert abs(z - ref) <= 0.02 * ref


def test_the_closed_form_is_close_where_sinkage_is_small_and_snow_sinks_deep():
    for name in ("dry_sand", "sandy_loam", "lete_sand"):
        s = S.soil(name)
        z = float(S.sinkage(s, B, R, torch.tensor(W0, dtype=torch.float64)))
        closed = float(S.sinkage_closed_form(s, B, R, torch.tensor(W0)))
        assert closed <= 0.1 * 2 * R and abs(closed - z) < 0.06 * z, (name, z, closed)
    snow = float(S.sinkage_closed_form(S.soil("snow"), B, R, torch.tensor(W0)))
    assert abs(snow - 0.14) < 0.01  # the "about 14 cm"


def test_a_wheel_at_rest_sinks_less_by_a_third():
    # at small sinkage the symmetric arc carries twice the load: z_static / z_rolling
    # = 2^(-1 / (n + 1/2)), 0.648 on dry sand (n = 1.1)
    s = S.soil("dry_sand")
    W = torch.tensor(W0, dtype=torch.float64)
    ratio = float(S.sinkage(s, B, R, W, static=True) / S.sinkage(s, B, R, W))
    assert abs(ratio - 2.0 ** (-1.0 / (s.n + 0.5))) < 0.01
    assert 0.60 < ratio < 0.67


def test_support_and_sinkage_are_inverses_over_the_table():
    z = torch.logspace(-5, math.log10(0.9 * R), 40, dtype=torch.float64)
    for n in np.linspace(0.07, 1.98, 12):
        s = S.Soil(n=float(n), k_c=1e4, k_phi=1e6, c=1e3, phi=0.5, K=0.02)
        for static in (False, True):
            back = S.sinkage(s, B, R, S.support(s, B, R, z, static), static)
            assert torch.allclose(back, z, rtol=2.5e-4), n


@pytest.mark.parametrize("name", ["dry_sand", "sandy_loam", "heavy_clay", "snow"])
def test_compaction_resistance_is_the_work_of_pressing_the_rut(name):
    s = S.soil(name)
    z = 0.03
    # b int_0^z p dz, with z' = z t^2 (smooth integrand t^(2n+1)) and Simpson's rule
    t = np.linspace(0.0, 1.0, 20001)
    f = (s.k_c / B + s.k_phi) * (z * t * t) ** s.n * 2.0 * z * t
    h = t[1] - t[0]
    integral = h / 3.0 * (f[0] + f[-1] + 4.0 * f[1:-1:2].sum() + 2.0 * f[2:-1:2].sum())
    assert abs(float(S.compaction_resistance(s, B, z)) - B * integral) < 1e-6 * B * integral


@pytest.mark.parametrize("name", ["dry_sand", "sandy_loam"])
def test_thrust_meets_the_shear_integrated_along_the_contact(name):
    s = S.soil(name)
    z = float(S.sinkage(s, B, R, torch.tensor(W0, dtype=torch.float64)))  # held fixed
    l = float(S.contact_length(R, z))
    x = (np.arange(100_000) + 0.5) * l / 100_000
    sigma = W0 / (B * l)
    for i in (0.05, 0.1, 0.2, 0.4, 0.8):
        tau = (s.c + sigma * math.tan(s.phi)) * (1.0 - np.exp(-i * x / s.K))
        ref = B * float(tau.sum() * l / 100_000)
        F = float(S.thrust(s, torch.tensor(W0), B, torch.tensor(l), torch.tensor(i)))
        assert abs(F - ref) < 0.03 * ref, (i, F, ref)
    # a braked wheel's thrust reverses; no slip, no thrust
    assert float(S.thrust(s, torch.tensor(W0), B, torch.tensor(l), torch.tensor(-0.2))) < 0
    assert float(S.thrust(s, torch.tensor(W0), B, torch.tensor(l), torch.tensor(0.0))) == 0


def test_drawbar_pull_changes_sign_where_thrust_meets_the_resistance():
    s = S.soil("dry_sand")
    i = torch.linspace(0.0, 1.0, 2001, dtype=torch.float64)
    pull, z = S.drawbar_pull(s, B, R, W0, i)
    assert pull[0] < 0 and pull[-1] > 0  # at no slip the rut's resistance, then thrust wins
    k = int(torch.nonzero(pull > 0)[0])
    R_c = float(S.compaction_resistance(s, B, z[k]))
    F = float(S.thrust(s, torch.tensor(W0), B, S.contact_length(R, z[k]), i[k]))
    assert abs(F - R_c) < 0.01 * R_c
    # with slip-sinkage the wheel digs as it slips (4x at i = 1); the compaction stays the
    # load's, the deeper rut lengthens the contact: the pull is at least as large
    pull_s, z_s = S.drawbar_pull(s, B, R, W0, i, slip_sinks=True)
    assert bool((z_s[1:] >= z_s[:-1]).all()) and float(z_s[-1]) > 3.9 * float(z_s[0])
    assert bool((pull_s >= pull - 1e-9).all())


def test_soils_by_name_and_bad_parameters_are_named():
    assert S.soil("dry_sand").k_phi == 1528.43e3 and S.soil("snow").n == 1.6
    assert math.isclose(S.soil("lete_sand").phi, math.radians(31.1))
    with pytest.raises(ValueError, match=r"unknown soil 'mud'; known: \['clayey_soil', 'dry_sand'"):
        S.soil("mud")
    with pytest.raises(ValueError, match="Soil.k_phi must be >= 0, got -1"):
        S.Soil(n=1.0, k_c=1.0, k_phi=-1.0, c=0.0, phi=0.5, K=0.01)
    with pytest.raises(ValueError, match="Soil.c must be a finite number, got nan"):
        S.Soil(n=1.0, k_c=1.0, k_phi=1.0, c=math.nan, phi=0.5, K=0.01)
    with pytest.raises(ValueError, match=r"Soil.n must be in \[0.05, 2.0\]"):
        S.Soil(n=3.0, k_c=1.0, k_phi=1.0, c=0.0, phi=0.5, K=0.01)
    with pytest.raises(ValueError, match="Soil.K must be > 0"):
        S.Soil(n=1.0, k_c=1.0, k_phi=1.0, c=0.0, phi=0.5, K=0.0)


def test_soils_may_differ_per_element():
    # a tensor of soils (n differing per element, as a material map gives) reads the same
    # sinkage as each soil alone
    names = ["dry_sand", "sandy_loam", "heavy_clay", "snow"]
    soils = [S.soil(n) for n in names]
    batch = S.SoilView(n=torch.tensor([s.n for s in soils], **F64),
                       k_c=torch.tensor([s.k_c for s in soils], **F64),
                       k_phi=torch.tensor([s.k_phi for s in soils], **F64),
                       c=torch.tensor([s.c for s in soils], **F64),
                       phi=torch.tensor([s.phi for s in soils], **F64), K=0.02)
    W = torch.full((4,), W0, **F64)
    z = S.sinkage(batch, B, R, W)
    for j, s in enumerate(soils):
        assert float(z[j]) == pytest.approx(float(S.sinkage(s, B, R, W[j])), rel=1e-12)
