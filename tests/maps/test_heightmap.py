"""HeightMap queries against closed forms: nodes, planes, normals, holes, borders, stacks, grads."""

import math

import numpy as np
import pytest
import torch

from offroad_env.core.devices import compile as compile_fn
from terrain import HeightMap

F64 = torch.float64


def plane_map(a=0.3, b=-0.2, c=1.5, nx=7, ny=5, res=(0.5, 0.25), interpolation="bilinear",
              **kw):
    """Samples of z = a x + b y + c on a non-square grid centred at (1, -2)."""
    hm0 = HeightMap(np.zeros((ny, nx)), res, center=(1.0, -2.0), dtype=F64)
    X, Y = np.meshgrid(hm0.x_coords().numpy(), hm0.y_coords().numpy())
    return HeightMap(a * X + b * Y + c, res, center=(1.0, -2.0), dtype=F64,
                     interpolation=interpolation, **kw)


def test_placement_by_center_and_origin():
    hm = HeightMap(np.zeros((5, 9)), (0.5, 0.25), center=(1.0, -2.0))
    assert hm.shape == (5, 9) and hm.nx == 9 and hm.ny == 5
    assert hm.size == (4.0, 1.0)
    assert hm.origin == (-1.0, -2.5)
    assert hm.bounds == (-1.0, 3.0, -2.5, -1.5)
    hm2 = HeightMap(np.zeros((5, 9)), (0.5, 0.25), origin=(-1.0, -2.5))
    assert hm2.center == (1.0, -2.0)
    assert HeightMap(np.zeros((3, 3))).center == (0.0, 0.0)  # default: centred at the origin


def test_dtype_and_device_defaults():
    hm = HeightMap(np.zeros((3, 3)))
    assert hm.dtype == torch.float32 and hm.device.type == "cpu"
    assert hm.height(0.0, 0.0).dtype == torch.float32
    assert HeightMap(np.zeros((3, 3)), dtype=F64).height(0.0, 0.0).dtype == F64
    assert hm.to(dtype=F64).dtype == F64


@pytest.mark.parametrize("interp", ["bilinear", "triangles"])
def test_exact_at_nodes_edges_and_corners(interp):
    rng = np.random.default_rng(0)
    h = rng.normal(size=(5, 7))
    hm = HeightMap(h, (0.5, 0.25), center=(1.0, -2.0), dtype=F64, interpolation=interp)
    X, Y = np.meshgrid(hm.x_coords().numpy(), hm.y_coords().numpy())
    got = hm.height(torch.tensor(X), torch.tensor(Y)).numpy()
    np.testing.assert_allclose(got, h, rtol=0, atol=1e-12)


@pytest.mark.parametrize("interp", ["bilinear", "triangles"])
def test_exact_on_planes(interp):
    a, b, c = 0.3, -0.2, 1.5
    hm = plane_map(a, b, c, interpolation=interp)
    rng = np.random.default_rng(1)
    x0, x1, y0, y1 = hm.bounds
    x = torch.tensor(rng.uniform(x0, x1, 1000))
    y = torch.tensor(rng.uniform(y0, y1, 1000))
    torch.testing.assert_close(hm.height(x, y), a * x + b * y + c, rtol=0, atol=1e-12)
    n = hm.normal(x, y)
    expected = torch.tensor([-a, -b, 1.0], dtype=F64) / math.sqrt(a * a + b * b + 1)
    torch.testing.assert_close(n, expected.expand_as(n), rtol=0, atol=1e-12)
    assert torch.all(n[..., 2] > 0)


def test_bilinear_closed_form_inside_a_cell():
    # One cell with corners 0, 1, 2, 4: f(u, v) = u + 2 v + u v.
    hm = HeightMap(np.array([[0.0, 1.0], [2.0, 4.0]]), 1.0, origin=(0, 0), dtype=F64)
    u = torch.tensor([0.25, 0.5, 0.9], dtype=F64)
    v = torch.tensor([0.75, 0.5, 0.1], dtype=F64)
    torch.testing.assert_close(hm.height(u, v), u + 2 * v + u * v)
    # slope of the bilinear patch: (1 + v, 2 + u)
    gx, gy = hm.slope(u, v)
    torch.testing.assert_close(gx, 1 + v)
    torch.testing.assert_close(gy, 2 + u)


def test_triangles_split_along_the_rising_diagonal():
    # Only the (1, 1) corner is raised: the two triangles give u and v, not u * v.
    hm = HeightMap(np.array([[0.0, 0.0], [0.0, 1.0]]), 1.0, origin=(0, 0), dtype=F64,
                   interpolation="triangles")
    # below the diagonal (u >= v): triangle (00, 10, 11) -> h = v
    torch.testing.assert_close(hm.height(0.8, 0.3), torch.tensor(0.3, dtype=F64))
    # above it: triangle (00, 01, 11) -> h = u
    torch.testing.assert_close(hm.height(0.3, 0.8), torch.tensor(0.3, dtype=F64))
    # Only (1, 0) raised: below the diagonal h = u - v, above it 0.
    hm2 = HeightMap(np.array([[0.0, 1.0], [0.0, 0.0]]), 1.0, origin=(0, 0), dtype=F64,
                    interpolation="triangles")
    torch.testing.assert_close(hm2.height(0.8, 0.3), torch.tensor(0.5, dtype=F64))
    torch.testing.assert_close(hm2.height(0.3, 0.8), torch.tensor(0.0, dtype=F64))
    n = hm2.normal(0.8, 0.3)  # plane z = u - v: n ~ (-1, 1, 1)
    torch.testing.assert_close(n, torch.tensor([-1.0, 1.0, 1.0], dtype=F64) / math.sqrt(3))


def test_asymmetric_ramp_on_non_square_map_has_right_signs():
    # z = x on a 3 x 6 grid: column index is x, row index is y.
    h = np.tile(np.arange(6.0), (3, 1))
    hm = HeightMap(h, 1.0, origin=(0, 0), dtype=F64)
    assert hm.height(5.0, 0.0) == 5.0 and hm.height(0.0, 2.0) == 0.0
    assert hm.normal(2.5, 1.0)[0] < 0  # the surface rises with x: normal leans to -x
    hv = np.tile(np.arange(3.0)[:, None], (1, 6))  # z = y
    hmv = HeightMap(hv, 1.0, origin=(0, 0), dtype=F64)
    assert hmv.height(0.0, 2.0) == 2.0
    assert hmv.normal(2.5, 1.0)[1] < 0


def test_outside_uses_nearest_edge_sample_and_in_bounds_says_so():
    rng = np.random.default_rng(2)
    h = rng.normal(size=(4, 5))
    hm = HeightMap(h, 1.0, origin=(0, 0), dtype=F64)
    x = torch.tensor([-3.0, 10.0, 2.0, 2.0, -1.0, 7.0, 4.0])
    y = torch.tensor([1.0, 2.0, -5.0, 9.0, -1.0, 9.0, 3.0])
    expected = [h[1, 0], h[2, 4], h[0, 2], h[3, 2], h[0, 0], h[3, 4], h[3, 4]]
    np.testing.assert_allclose(hm.height(x.double(), y.double()).numpy(), expected, atol=1e-12)
    assert hm.in_bounds(x, y).tolist() == [False, False, False, False, False, False, True]
    # negative coordinates of a map centred at the origin are inside
    hc = HeightMap(h, 1.0, dtype=F64)
    assert bool(hc.in_bounds(-1.5, -1.0)) and not bool(hc.in_bounds(-2.01, 0.0))
    # beyond the border the surface is flat across it
    gx, gy = hm.slope(torch.tensor([-3.0], dtype=F64), torch.tensor([1.5], dtype=F64))
    assert gx.item() == 0.0


@pytest.mark.parametrize("interp", ["bilinear", "triangles"])
def test_holes_return_nan_in_every_touching_cell(interp):
    h = np.zeros((5, 5))
    h[2, 2] = np.nan
    h[0, 4] = np.inf
    hm = HeightMap(h, 1.0, origin=(0, 0), interpolation=interp)
    # the four cells around (2, 2), including the corners of the triangles that avoid the node
    for x, y in [(1.5, 1.5), (2.5, 1.5), (1.5, 2.5), (2.5, 2.5), (1.1, 1.9), (1.9, 1.1),
                 (2.0, 2.0)]:
        assert torch.isnan(hm.height(x, y)), (x, y)
        assert torch.isnan(hm.normal(x, y)).all(), (x, y)
    assert torch.isnan(hm.height(3.5, 0.5))  # inf sample is a hole too
    assert hm.height(0.5, 0.5) == 0.0 and hm.height(0.5, 3.5) == 0.0
    assert hm.has_holes


def test_nan_coordinates_give_nan_not_a_crash():
    hm = HeightMap(np.zeros((3, 3)), 1.0)
    out = hm.height(torch.tensor([float("nan"), 0.0, float("inf")]), torch.tensor([0.0, 0.0, 0.0]))
    assert torch.isnan(out[0]) and out[1] == 0 and out[2] == 0
    assert not hm.in_bounds(float("nan"), 0.0)


def test_any_query_shape_and_broadcasting():
    hm = plane_map()
    x = torch.full((2, 3, 4), 1.0, dtype=F64)
    assert hm.height(x, torch.tensor(-2.0, dtype=F64)).shape == (2, 3, 4)
    assert hm.normal(x, x * 0 - 2).shape == (2, 3, 4, 3)
    assert hm.height(np.array([1.0, 1.5]), [-2.0, -2.0]).shape == (2,)


def test_stack_queries_each_map_in_one_call():
    maps = [HeightMap(np.full((4, 6), float(k)), 0.5, z_offset=10.0 * k) for k in range(3)]
    st = HeightMap.stack(maps)
    assert len(st) == 3 and st.heights.shape == (3, 4, 6)
    idx = torch.tensor([0, 1, 2, 1])
    x = torch.zeros(4)
    out = st.height(x, x, map_index=idx)
    assert out.tolist() == [0.0, 11.0, 22.0, 11.0]
    assert st[2].height(0.0, 0.0) == 22.0
    with pytest.raises(ValueError, match="map_index"):
        st.height(x, x)
    with pytest.raises(IndexError):
        st.height(x, x, map_index=torch.tensor([0, 1, 2, 3]))
    with pytest.raises(IndexError):
        st.height(x, x, map_index=torch.tensor([0, -1, 2, 1]))
    with pytest.raises(IndexError):
        st.height(x, x, map_index=3)
    with pytest.raises(ValueError, match="grid"):
        HeightMap.stack([maps[0], HeightMap(np.zeros((4, 6)), 0.25)])


@pytest.mark.parametrize("interp", ["bilinear", "triangles"])
def test_gradients_flow_to_query_coordinates(interp):
    rng = np.random.default_rng(3)
    hm = HeightMap(rng.normal(size=(6, 6)), 0.5, dtype=F64, interpolation=interp)
    x = torch.tensor([0.13, -0.71, 0.9], dtype=F64, requires_grad=True)
    y = torch.tensor([0.41, 0.22, -0.55], dtype=F64, requires_grad=True)
    h = hm.height(x, y)
    gx, gy = torch.autograd.grad(h.sum(), (x, y))
    sx, sy = hm.slope(x.detach(), y.detach())
    torch.testing.assert_close(gx, sx)
    torch.testing.assert_close(gy, sy)
    # and through the normal: compare with central differences
    n = hm.normal(x, y)
    (g,) = torch.autograd.grad(n[..., 0].sum(), x)
    eps = 1e-6
    fd = (hm.normal(x.detach() + eps, y.detach())[..., 0]
          - hm.normal(x.detach() - eps, y.detach())[..., 0]) / (2 * eps)
    torch.testing.assert_close(g, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad, match", [
    (dict(heights=np.zeros((1, 1))), "at least 2"),
    (dict(heights=np.zeros((1, 5))), "at least 2"),
    (dict(heights=np.zeros((5,))), "shape"),
    (dict(heights=np.zeros((3, 3)), resolution=0.0), "> 0"),
    (dict(heights=np.zeros((3, 3)), resolution=-1.0), "> 0"),
    (dict(heights=np.zeros((3, 3)), resolution=float("nan")), "finite"),
    (dict(heights=np.zeros((3, 3)), interpolation="cubic"), "interpolation"),
    (dict(heights=np.zeros((3, 3)), center=(0, 0), origin=(0, 0)), "either"),
    (dict(heights=np.zeros((3, 3)), z_offset=float("inf")), "z_offset"),
    (dict(heights=np.zeros((3, 3)), dtype=torch.float16), "dtype"),
])
def test_bad_construction_is_a_clear_error(bad, match):
    with pytest.raises(ValueError, match=match):
        HeightMap(**bad)


def test_two_by_two_map_and_constant_and_checkerboard():
    hm = HeightMap(np.full((2, 2), 3.0), 1.0)
    assert hm.height(0.1, -0.3) == 3.0
    torch.testing.assert_close(hm.normal(0.0, 0.0), torch.tensor([0.0, 0.0, 1.0]))
    cb = HeightMap((np.indices((4, 4)).sum(0) % 2) * 65535.0, 1.0, origin=(0, 0), dtype=F64)
    assert cb.height(0.5, 0.5) == 65535.0 / 2
    assert cb.height(1.0, 0.0) == 65535.0


def test_45_degree_plane_and_cliff():
    X = np.arange(5.0)
    hm = HeightMap(np.tile(X, (3, 1)), 1.0, origin=(0, 0), dtype=F64)  # z = x: 45 degrees
    n = hm.normal(2.3, 1.0)
    assert math.isclose(math.degrees(math.acos(n[2].item())), 45.0, abs_tol=1e-9)
    cliff = np.zeros((3, 4))
    cliff[:, 2:] = 10.0
    hc = HeightMap(cliff, 0.1, origin=(0, 0), dtype=F64)
    assert hc.height(0.15, 0.1) == 5.0 and hc.height(0.2, 0.1) == 10.0


def test_translated_moves_the_surface_and_keeps_float64_digits_in_float32():
    g = np.random.default_rng(1)
    h = 3000.0 + g.normal(0.0, 0.3, (9, 11))
    hm = HeightMap(h, 0.5, center=(500000.0, 4100000.0), dtype=torch.float64)
    moved = hm.translated(-500000.0, -4100000.0, -2944.0).to(dtype=torch.float32)
    assert moved.center == (0.0, 0.0) and moved.dtype == torch.float32
    x = torch.tensor([0.13, -1.7, 2.2], dtype=torch.float64)
    y = torch.tensor([0.4, 1.1, -1.9], dtype=torch.float64)
    want = hm.height(x + 500000.0, y + 4100000.0) - 2944.0
    got = moved.height(x.float(), y.float()).double()
    assert torch.allclose(got, want, atol=1e-5)  # float32 at ~56 m; at 3000 m the ulp is 2.4e-4
    with pytest.raises(ValueError, match="finite"):
        hm.translated(float("nan"))


def test_compiled_lookups_read_the_same_taps_as_eager():
    """Compiled, the lookup gathers each corner on its own (inductor fuses the four into one loop
    over the points); eager gathers the (4, P) corners at once. The taps, the fractions and the
    out-of-grid coordinates must be the same values, holes (NaN) and a stack's map index
    included, and the heights and slopes agree to float32 rounding."""
    rng = np.random.default_rng(5)
    z = rng.normal(size=(3, 9, 7)).astype(np.float32)
    z[1, 4, 3] = np.nan
    st = HeightMap.stack([HeightMap(z[k], 0.25, z_offset=float(k)) for k in range(3)])
    g = torch.Generator().manual_seed(0)
    x = torch.rand(5, 64, generator=g) * 2.4 - 0.3  # some points off the grid
    y = (torch.rand(64, 5, generator=g) * 3.0 - 0.3).T  # a strided query (as the env's)
    idx = torch.randint(0, 3, (64,), generator=g)
    fn = compile_fn(lambda x, y, i: (st._cells(x, y, i), st.height_slope(x, y, i)),
                    fullgraph=True, dynamic=False)
    (cells_c, hs_c), cells_e = fn(x, y, idx), st._cells(x, y, idx)
    for c, e in zip(cells_c, cells_e):
        assert torch.equal(c.isnan(), e.isnan()) and torch.equal(c.nan_to_num(), e.nan_to_num())
    assert bool(cells_e[0].isnan().any())  # the hole is queried
    for c, e in zip(hs_c, st.height_slope(x, y, idx)):
        torch.testing.assert_close(c, e, rtol=1e-5, atol=1e-5, equal_nan=True)
