"""Cost-to-go fields (issue 68): the batched torch relaxation equals Dijkstra's algorithm
exactly, and the map planner's traversability routes around what the vehicle cannot cross and
over what it can."""

import math

import numpy as np
import pytest
import torch

import terrain
from terrain.costs import cost_to_go, descend, dijkstra


@pytest.mark.parametrize("backend", ["torch", "scipy"])
def test_the_field_equals_dijkstras_distances_exactly(backend):
    if backend == "scipy":
        pytest.importorskip("scipy.sparse.csgraph")
    rng = np.random.default_rng(0)
    c = rng.uniform(1.0, 5.0, (30, 41))
    c[rng.random(c.shape) < 0.2] = np.inf
    goals = [(15, 20), (0, 0), (29, 40), (3, 37)]
    for g in goals:
        c[g] = 1.0
    field = cost_to_go(torch.tensor(np.stack([c, c[::-1].copy()])), torch.tensor(goals),
                       torch.tensor([0, 1, 0, 1]), resolution=(0.5, 0.3), backend=backend)
    for k, g in enumerate(goals):
        cost = c if k % 2 == 0 else c[::-1]
        want = dijkstra(cost, g, (0.5, 0.3))
        assert np.array_equal(field[k].numpy(), want), k
        assert np.isinf(want).any()  # walled-in cells stay unreachable


def test_a_uniform_grid_gives_the_8_connected_distance():
    field = cost_to_go(torch.ones(1, 11, 11), torch.tensor([[5, 5]]), resolution=0.2)[0]
    # octile distance: max + (sqrt 2 - 1) min, in cells, times the spacing
    r, c = np.mgrid[0:11, 0:11]
    a, b = np.abs(r - 5), np.abs(c - 5)
    want = 0.2 * (np.maximum(a, b) + (math.sqrt(2) - 1) * np.minimum(a, b))
    assert np.allclose(field.numpy(), want, atol=1e-12)
    path = descend(field[None], torch.tensor([[0, 0]]), 8)[0]
    assert path[-1].tolist() == [5, 5] and path[5].tolist() == [5, 5]


def _planner_cost(heights, res=0.05, mu=0.8):
    from offroad_env.physics.vehicle import husky
    from train.planners.path import PathConfig, traversability

    hm = terrain.HeightMap(heights, res)
    return traversability(hm, husky(), mu, 0.02, PathConfig(cell=res)), hm


def _route(heights, start, goal, res=0.05):
    """The planned path's cells from ``start`` to ``goal`` (world x, y) on ``heights``."""
    (cost, stride), hm = _planner_cost(heights, res)
    x0, _, y0, _ = hm.bounds
    rc = lambda p: [int(round((p[1] - y0) / res)), int(round((p[0] - x0) / res))]  # noqa
    field = cost_to_go(cost, torch.tensor([rc(goal)]), resolution=res)
    path = descend(field, torch.tensor([rc(start)]), 400, cost=cost, resolution=res)[0]
    return field, path, rc


@pytest.mark.parametrize("beta", [0.0, 15.0])
def test_on_a_plane_the_path_is_the_straight_line(beta):
    """A plane rising at ``beta`` along x, no obstacle: from (-3, -1) to (3, 1) the grid's
    path is the shortest 8-connected one (the slope's cost is the same on every cell: no
    detour), and pulled taut (any-angle) it is the straight line: its length within 1 % of the
    straight distance, every point of it within one cell of the line."""
    from terrain.costs import smooth_path
    res = 0.05
    x = (np.arange(161) - 80) * res
    h = np.tile(x * math.tan(math.radians(beta)), (161, 1))
    field, path, rc = _route(h, (-3.0, -1.0), (3.0, 1.0), res)
    p = path.numpy()
    assert p[-1].tolist() == rc((3.0, 1.0))
    steps = np.diff(p, axis=0)
    grid = np.hypot(steps[:, 0], steps[:, 1]).sum() * res
    # the 8-connected optimum: the octile distance, 8 % over the straight 6.32 m
    assert grid == pytest.approx(res * (120 + (math.sqrt(2) - 1) * 40), rel=1e-9)
    (cost, _), _ = _planner_cost(h, res)
    taut = np.array(smooth_path(cost[0], field[0], path, res), dtype=float)
    straight = math.hypot(6.0, 2.0)
    length = np.hypot(*np.diff(taut, axis=0).T).sum() * res
    assert abs(length - straight) / straight < 0.01, (length, straight)
    # every point of the taut path (its corners and 100 points along each leg) within one
    # cell of the straight line through the two ends
    a, b = np.array(rc((-3.0, -1.0)), float), np.array(rc((3.0, 1.0)), float)
    t = np.linspace(0, 1, 101)[:, None]
    pts = np.concatenate([p0 + (p1 - p0) * t for p0, p1 in zip(taut[:-1], taut[1:])])
    u = (b - a) / np.linalg.norm(b - a)
    off = np.abs((pts - a) @ np.array([-u[1], u[0]]))
    assert off.max() <= 1.0, off.max()


def test_walls_and_ledges_past_the_limit_are_routed_around_and_a_low_ledge_crossed():
    res = 0.05
    h = np.zeros((161, 161))
    h[20:141, 78:83] = 0.4            # a wall 0.4 m high across most of the map at x = 0
    field, path, rc = _route(h, (-2.0, 0.0), (2.0, 0.0), res)
    p = path.numpy()
    assert p[-1].tolist() == rc((2.0, 0.0))
    assert not any(78 <= c <= 82 and 20 <= r <= 140 for r, c in p)   # never on the wall
    # pulled taut, its straight legs round the wall's end: none crosses the wall, and the
    # whole costs no more than the grid's path (a shortcut is taken only at no more cost)
    from terrain.costs import segment_cost, smooth_path
    (cost, _), _ = _planner_cost(h, res)
    taut = torch.tensor(smooth_path(cost[0], field[0], path, res), dtype=torch.float64)
    assert 2 < len(taut) < len(p)
    legs = segment_cost(cost[:1].expand(len(taut) - 1, -1, -1), taut[:-1], taut[1:, None],
                        res)
    assert bool(torch.isfinite(legs).all())
    assert float(legs.sum()) <= float(field[0][tuple(p[0])]) * (1 + 1e-9)
    low = np.zeros((161, 161))
    low[:, 80:] = 0.02                # a 2 cm ledge: under the Husky's limit (7.6 cm at mu 0.8)
    field, path, rc = _route(low, (-2.0, 0.0), (2.0, 0.0), res)
    rows = path.numpy()[:, 0]
    assert path[-1].tolist() == rc((2.0, 0.0)) and np.abs(rows - rc((0, 0))[0]).max() <= 1
    # a platform 13 cm high (its edge a ledge past the limit, under a wheel radius) between
    # start and goal: the path goes around it, not over it
    block = np.zeros((161, 161))
    block[40:121, 70:91] = 0.13       # y -2 ... 2 m, x -0.5 ... 0.5 m
    field, path, rc = _route(block, (-2.0, 0.0), (2.0, 0.0), res)
    p = path.numpy()
    assert p[-1].tolist() == rc((2.0, 0.0))
    assert not any(40 <= r <= 120 and 70 <= c <= 90 for r, c in p)
    high = np.zeros((161, 161))
    high[:, 80:] = 0.25               # a 25 cm step across the whole map: a wall, no way over
    (cost, _), _ = _planner_cost(high, res)
    assert torch.isinf(cost[0, :, 79:81]).all()


def test_path_options_are_refused_by_name():
    from train.planners.path import PathConfig, parse_options

    assert PathConfig(**parse_options("lookahead=1.0,cell=0.2")).lookahead == 1.0
    with pytest.raises(ValueError, match=r"path option lookahead=-1.0: give a finite number > 0"):
        PathConfig(**parse_options("lookahead=-1"))
    with pytest.raises(ValueError, match=r"path option penalty=0.5: give a finite number >= 1"):
        PathConfig(penalty=0.5)
    with pytest.raises(ValueError, match="path option"):
        parse_options("speed=2")


def test_each_goal_plans_on_its_own_map():
    """N goals on N maps: each field equals the one computed alone (a batch once planned every
    row on the first row's map)."""
    g = torch.Generator().manual_seed(0)
    c = torch.rand(3, 40, 40, generator=g, dtype=torch.float64) + 0.5
    c[torch.rand(3, 40, 40, generator=g) < 0.3] = math.inf
    goals = torch.tensor([[5, 5], [30, 30], [35, 10]])
    for i in range(3):
        c[i, goals[i, 0], goals[i, 1]] = 1.0
    both = cost_to_go(c, goals)
    for i in range(3):
        assert torch.equal(both[i], cost_to_go(c[i], goals[i:i + 1])[0])
        assert np.array_equal(both[i].numpy(), dijkstra(c[i].numpy(), goals[i].tolist()))
    with pytest.raises(ValueError, match="map_index"):
        cost_to_go(c[:2], goals)
    with pytest.raises(ValueError, match="backend"):
        cost_to_go(c, goals, backend="fmm")


def test_the_two_backends_agree_bit_for_bit():
    """SciPy's Dijkstra and the torch relaxation sum the same edges in the same order."""
    pytest.importorskip("scipy.sparse.csgraph")
    g = torch.Generator().manual_seed(1)
    c = torch.rand(2, 37, 53, generator=g, dtype=torch.float64) * 4 + 0.2
    c[torch.rand(2, 37, 53, generator=g) < 0.25] = math.inf
    goals = torch.tensor([[3, 4], [20, 40], [36, 0]])
    mi = torch.tensor([0, 1, 1])
    for k in range(3):
        c[mi[k], goals[k, 0], goals[k, 1]] = 1.0
    a = cost_to_go(c, goals, mi, (0.08, 0.11), backend="torch")
    b = cost_to_go(c, goals, mi, (0.08, 0.11), backend="scipy")
    assert torch.equal(a, b) and bool(torch.isinf(a).any())


def test_a_long_segment_does_not_step_over_a_thin_wall():
    """A one-cell wall across a 200-cell run: the straight segment's cost is infinite (64
    fixed samples, 3 cells apart, once stepped over it)."""
    from terrain.costs import segment_cost
    c = torch.ones(1, 5, 201, dtype=torch.float64)
    c[0, :, 100] = math.inf
    a = torch.tensor([[2.0, 0.0]])
    b = torch.tensor([[[2.0, 200.0], [2.0, 99.0]]])
    got = segment_cost(c, a, b, 0.1)
    assert math.isinf(float(got[0, 0]))
    assert float(got[0, 1]) == pytest.approx(9.9, rel=1e-12)  # 99 cells of cost 1, 0.1 m
