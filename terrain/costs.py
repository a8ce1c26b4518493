"""Cost-to-go fields on a map's grid: the least cost from every sample to a goal, for N goals at
once, and the path that descends one.

The graph: each sample is a node joined to its 8 neighbours; an edge costs its length [m] times
the mean of its two samples' costs (``cost`` ``(M, ny, nx)``, a map's per-sample cost per metre,
``inf``: impassable). A goal's field is the least sum of edge costs to it (Dijkstra's distance;
``inf`` where no path reaches). :func:`cost_to_go` computes them with SciPy's Dijkstra
(``scipy.sparse.csgraph``, the ``planning`` extra) where it is installed and the costs are on
the CPU: 15-50 x faster there than the torch relaxation (BENCHMARKS.md, "Cost-to-go fields");
else it relaxes all N fields together, Bellman-Ford style in torch (each sweep takes every edge
once in the 8 directions, until no field changes), which runs wherever torch does (a GPU
included). Both give Dijkstra's distances exactly, bit for bit the same: the same sums of the
same edges in the same order (``dijkstra`` below is the reference the tests hold them to).

Shapes: ``cost`` ``(M, ny, nx)``, a field ``(N, ny, nx)`` in the map's row order (row ``i`` at
``y0 + i res_y``).
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import torch

__all__ = ["NEIGHBOURS", "BACKENDS", "cost_to_go", "dijkstra", "descend", "segment_cost", "visible",
           "smooth_path"]

#: the 8 neighbour offsets ``(d_row, d_col)``
NEIGHBOURS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def _edge_lengths(res_x: float, res_y: float) -> list[float]:
    return [math.hypot(dc * res_x, dr * res_y) for dr, dc in NEIGHBOURS]


def _shift(t: torch.Tensor, dr: int, dc: int, fill: float) -> torch.Tensor:
    """``out[..., i, j] = t[..., i + dr, j + dc]`` (``fill`` off the grid)."""
    out = torch.full_like(t, fill)
    ny, nx = t.shape[-2:]
    rs = slice(max(0, -dr), ny - max(0, dr))
    cs = slice(max(0, -dc), nx - max(0, dc))
    rt = slice(max(0, dr), ny + min(0, dr))
    ct = slice(max(0, dc), nx + min(0, dc))
    out[..., rs, cs] = t[..., rt, ct]
    return out


def _has_scipy() -> bool:
    try:
        import scipy.sparse.csgraph  # noqa: F401
    except ImportError:
        return False
    return True


BACKENDS = ("auto", "scipy", "torch")


def cost_to_go(cost: torch.Tensor, goal_rc: torch.Tensor, map_index: torch.Tensor | None = None,
               resolution=(1.0, 1.0), max_sweeps: int | None = None, backend: str = "auto"
               ) -> torch.Tensor:
    """``(N, ny, nx)`` float64: each goal's cost-to-go over its map (module docstring).

    Args:
        cost: ``(M, ny, nx)`` (or ``(ny, nx)``) cost per metre of each sample, > 0; ``inf``
            impassable (NaN is taken as ``inf``).
        goal_rc: ``(N, 2)`` int the goals' ``(row, column)``.
        map_index: ``(N,)`` each goal's map (None: map 0 when ``cost`` holds one map, else
            goal ``n`` on map ``n``: then ``M`` must equal ``N``).
        resolution: ``(res_x, res_y)`` [m] (or one number).
        max_sweeps: the torch relaxation stops after this many sweeps (None: until
            converged, at most ``ny nx``).
        backend: ``"scipy"`` (SciPy's Dijkstra), ``"torch"`` (the relaxation) or ``"auto"``
            (SciPy where installed, the costs are on the CPU and ``max_sweeps`` is None).
    """
    if backend not in BACKENDS:
        raise ValueError(f"cost_to_go backend must be one of {BACKENDS}, got {backend!r}")
    c = torch.as_tensor(cost, dtype=torch.float64)
    if c.ndim == 2:
        c = c[None]
    c = torch.where(torch.isnan(c), torch.full_like(c, math.inf), c)
    if bool((c <= 0).any()):
        raise ValueError("cost must be > 0 per metre (inf: impassable)")
    goal_rc = torch.as_tensor(goal_rc, dtype=torch.int64).reshape(-1, 2)
    N = goal_rc.shape[0]
    if map_index is None:
        if c.shape[0] not in (1, N):
            raise ValueError(f"{N} goals on {c.shape[0]} maps: give map_index, or one map "
                             "per goal")
        mi = torch.arange(N) if c.shape[0] == N else torch.zeros(N, dtype=torch.int64)
    else:
        mi = torch.as_tensor(map_index, dtype=torch.int64).reshape(-1)
    rx, ry = (resolution, resolution) if isinstance(resolution, (int, float)) else resolution
    ny, nx = c.shape[-2:]
    if bool(((goal_rc[:, 0] < 0) | (goal_rc[:, 0] >= ny) | (goal_rc[:, 1] < 0)
             | (goal_rc[:, 1] >= nx)).any()):
        raise ValueError(f"goal_rc must lie on the {ny} x {nx} grid, got {goal_rc.tolist()}")
    use_scipy = backend == "scipy" or (backend == "auto" and max_sweeps is None
                                       and c.device.type == "cpu" and _has_scipy())
    if use_scipy:
        if max_sweeps is not None:
            raise ValueError("max_sweeps is the torch relaxation's; backend='scipy' has none")
        return _scipy_fields(c, goal_rc, mi, rx, ry)
    cn = c[mi]                                           # (N, ny, nx)
    # the edge from each sample to its neighbour (dr, dc): length x mean cost (inf off the grid)
    edges = [float(L) * 0.5 * (cn + _shift(cn, dr, dc, math.inf))
             for L, (dr, dc) in zip(_edge_lengths(rx, ry), NEIGHBOURS)]
    d = torch.full((N, ny, nx), math.inf, dtype=torch.float64)
    rows = torch.arange(N)
    d[rows, goal_rc[:, 0], goal_rc[:, 1]] = 0.0
    limit = ny * nx if max_sweeps is None else max_sweeps
    for _ in range(limit):
        new = d
        for e, (dr, dc) in zip(edges, NEIGHBOURS):
            new = torch.minimum(new, e + _shift(d, dr, dc, math.inf))
        if torch.equal(new, d):
            break
        d = new
    return d


def _scipy_fields(c: torch.Tensor, goal_rc: torch.Tensor, mi: torch.Tensor, rx: float,
                  ry: float) -> torch.Tensor:
    """The fields by SciPy's Dijkstra on each map's graph (the same edges, summed in the same
    order as the relaxation: bit for bit its result)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra
    M, ny, nx = c.shape
    out = torch.empty((goal_rc.shape[0], ny, nx), dtype=torch.float64)
    idx = np.arange(ny * nx).reshape(ny, nx)
    for m in torch.unique(mi).tolist():
        cm = c[m].cpu().numpy().reshape(-1)
        rows, cols, w = [], [], []
        for L, (dr, dc) in zip(_edge_lengths(rx, ry), NEIGHBOURS):
            # each sample to its neighbour (dr, dc): the relaxation's edge, cost L x the mean
            a = idx[max(0, -dr):ny - max(0, dr), max(0, -dc):nx - max(0, dc)].reshape(-1)
            b = idx[max(0, dr):ny + min(0, dr), max(0, dc):nx + min(0, dc)].reshape(-1)
            e = float(L) * 0.5 * (cm[a] + cm[b])
            ok = np.isfinite(e)
            rows.append(a[ok])
            cols.append(b[ok])
            w.append(e[ok])
        graph = csr_matrix((np.concatenate(w), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(ny * nx, ny * nx))
        sel = torch.nonzero(mi == m).flatten()
        src = (goal_rc[sel, 0] * nx + goal_rc[sel, 1]).numpy()
        d = sp_dijkstra(graph, directed=True, indices=src)
        out[sel] = torch.from_numpy(np.asarray(d, dtype=np.float64).reshape(-1, ny, nx))
    return out.to(c.device)


def dijkstra(cost: np.ndarray, goal_rc, resolution=(1.0, 1.0)) -> np.ndarray:
    """``(ny, nx)`` the cost-to-go of one goal by Dijkstra's algorithm (heap; the reference
    for :func:`cost_to_go`; slow in Python: a test's small grids)."""
    c = np.asarray(cost, dtype=np.float64)
    c = np.where(np.isnan(c), np.inf, c)
    ny, nx = c.shape
    rx, ry = (resolution, resolution) if isinstance(resolution, (int, float)) else resolution
    lengths = _edge_lengths(rx, ry)
    d = np.full((ny, nx), np.inf)
    g = (int(goal_rc[0]), int(goal_rc[1]))
    d[g] = 0.0
    heap = [(0.0, g)]
    done = np.zeros((ny, nx), bool)
    while heap:
        du, (r, q) = heapq.heappop(heap)
        if done[r, q]:
            continue
        done[r, q] = True
        for L, (dr, dc) in zip(lengths, NEIGHBOURS):
            # the edge is the neighbour's own (dr, dc) edge reversed: the same length and cost
            a, b = r - dr, q - dc
            if 0 <= a < ny and 0 <= b < nx and not done[a, b]:
                nd = du + L * 0.5 * (c[a, b] + c[r, q])
                if nd < d[a, b]:
                    d[a, b] = nd
                    heapq.heappush(heap, (nd, (a, b)))
    return d


def descend(field: torch.Tensor, start_rc: torch.Tensor, steps: int,
            field_index: torch.Tensor | None = None, cost: torch.Tensor | None = None,
            map_index: torch.Tensor | None = None, resolution=(1.0, 1.0)) -> torch.Tensor:
    """``(N, steps + 1, 2)`` int64: from each start ``(row, column)``, ``steps`` moves down the
    field, staying where no neighbour is lower (the goal, or a cell no path leaves).

    With ``cost`` (``(M, ny, nx)``, the field's own, row ``n`` on map ``map_index[n]``; None:
    map ``n``) each move goes to the neighbour of least ``edge + field`` (the shortest path's
    next cell: its field plus the edge equals the field here); without, to the neighbour of
    least field (the same on ground of one cost, not on another). ``field``: ``(F, ny, nx)``,
    start ``n`` on field ``field_index[n]`` (None: on field ``n``)."""
    _, ny, nx = field.shape
    rc = torch.as_tensor(start_rc, dtype=torch.int64).reshape(-1, 2).clone()
    N = rc.shape[0]
    n = torch.arange(N)
    rows = n if field_index is None else field_index
    offs = torch.tensor(NEIGHBOURS, dtype=torch.int64)
    if cost is not None:
        rx, ry = (resolution, resolution) if isinstance(resolution, (int, float)) else resolution
        lengths = torch.tensor(_edge_lengths(rx, ry), dtype=torch.float64)
        mrows = n if map_index is None else map_index
    out = [rc.clone()]
    for _ in range(steps):
        cand = rc[:, None, :] + offs[None]               # (N, 8, 2)
        ok = ((cand[..., 0] >= 0) & (cand[..., 0] < ny) & (cand[..., 1] >= 0)
              & (cand[..., 1] < nx))
        cr, cc = cand[..., 0].clamp(0, ny - 1), cand[..., 1].clamp(0, nx - 1)
        val = field[rows[:, None], cr, cc]
        val = torch.where(ok, val, torch.full_like(val, math.inf))
        here = field[rows, rc[:, 0], rc[:, 1]]
        score = val
        if cost is not None:
            c0 = cost[mrows, rc[:, 0], rc[:, 1]]
            score = val + lengths * 0.5 * (c0[:, None] + cost[mrows[:, None], cr, cc])
            score = torch.where(torch.isnan(score), torch.full_like(score, math.inf), score)
        best = score.argmin(1)
        lower = val[n, best] < here
        rc = torch.where(lower[:, None], cand[n, best], rc)
        out.append(rc.clone())
    return torch.stack(out, 1)


def segment_cost(cost: torch.Tensor, a_rc: torch.Tensor, b_rc: torch.Tensor,
                 resolution=(1.0, 1.0), map_index: torch.Tensor | None = None,
                 samples: int | None = None) -> torch.Tensor:
    """``(N, K)`` the cost of the straight segments from ``a_rc`` ``(N, 2)`` to each of
    ``b_rc`` ``(N, K, 2)`` (float ``(row, column)``) on ``cost`` ``(M, ny, nx)`` (row ``n``
    on map ``map_index[n]``; None: row ``n`` on map ``n``): the midpoint rule over
    ``samples`` equal pieces (None: each segment its own, 64 or two a cell of its length
    where that is more, so that no cell, a thin wall's included, is stepped over), each
    piece's length [m] times the cost of the sample nearest its middle (``inf`` off the
    grid)."""
    rx, ry = (resolution, resolution) if isinstance(resolution, (int, float)) else resolution
    _, ny, nx = cost.shape
    N = a_rc.shape[0]
    a = a_rc.to(torch.float64)[:, None, None, :]
    b = b_rc.to(torch.float64)[:, :, None, :]
    span = (b - a)[..., 0, :].abs().amax(-1)                            # (N, K) cells
    n = (torch.full_like(span, float(samples)) if samples is not None
         else torch.clamp(2 * torch.ceil(span), min=64.0))               # each its own
    S = int(n.max()) if n.numel() else 1
    k = torch.arange(S, dtype=torch.float64)
    t = (k + 0.5)[None, None, :] / n[..., None]                          # (N, K, S)
    keep = k[None, None, :] < n[..., None]
    pts = a + (b - a) * t[..., None]                                    # (N, K, S, 2)
    r, c = pts[..., 0].round().long(), pts[..., 1].round().long()
    inside = (r >= 0) & (r < ny) & (c >= 0) & (c < nx)
    rows = (torch.arange(N) if map_index is None else map_index)[:, None, None]
    val = cost[rows, r.clamp(0, ny - 1), c.clamp(0, nx - 1)]
    val = torch.where(inside, val, torch.full_like(val, math.inf))
    val = torch.where(keep, val, torch.zeros_like(val))
    length = torch.hypot((b - a)[..., 0] * ry, (b - a)[..., 1] * rx)[..., 0]  # (N, K)
    return val.sum(-1) * length / n


def visible(cost: torch.Tensor, field: torch.Tensor, a_rc: torch.Tensor, b_rc: torch.Tensor,
            resolution=(1.0, 1.0), slack=0.0, map_index: torch.Tensor | None = None,
            field_index: torch.Tensor | None = None) -> torch.Tensor:
    """``(N, K)`` bool: whether the straight segment from ``a_rc`` ``(N, 2)`` to each point
    ``b_rc`` ``(N, K, 2)`` (int cells) costs no more than the field says the grid's path
    between them costs, ``field(a) - field(b)``, plus ``slack`` (cost units, a number or
    ``(N,)``: covers a start that lies off its cell's centre; ``cost`` ``(M, ny, nx)``,
    ``map_index`` as in :func:`segment_cost`; ``field`` ``(F, ny, nx)``, row ``n`` on field
    ``field_index[n]``, None: on field ``n``): a shortcut that never makes the route dearer (the
    any-angle smoothing of a grid path). ``a_rc`` may be fractional; its field is its nearest
    cell's."""
    _, ny, nx = field.shape
    N = a_rc.shape[0]
    rows = torch.arange(N) if field_index is None else field_index
    ar = a_rc.to(torch.float64).round().long()
    fa = field[rows, ar[:, 0].clamp(0, ny - 1), ar[:, 1].clamp(0, nx - 1)]
    fb = field[rows[:, None], b_rc[..., 0], b_rc[..., 1]]
    seg = segment_cost(cost, a_rc, b_rc.to(torch.float64), resolution, map_index)
    slack = torch.as_tensor(slack, dtype=torch.float64).reshape(-1, 1)
    return torch.isfinite(seg) & (seg <= (fa[:, None] - fb) * (1 + 1e-9) + slack)


def smooth_path(cost: torch.Tensor, field: torch.Tensor, path_rc: torch.Tensor,
                resolution=(1.0, 1.0)) -> list[tuple[int, int]]:
    """One descended path ``(K + 1, 2)`` (cells; ``cost``, ``field`` ``(ny, nx)``) pulled
    taut: from each kept point, on to the farthest later point in view (:func:`visible`).
    Returns the kept cells, first and last included; on a plane of one cost, the two ends."""
    pts = [tuple(int(v) for v in p) for p in path_rc.tolist()]
    uniq = [pts[0]] + [p for q, p in zip(pts, pts[1:]) if p != q]
    out, i = [uniq[0]], 0
    while i < len(uniq) - 1:
        later = torch.tensor(uniq[i + 1:], dtype=torch.int64)[None]
        ok = visible(cost[None], field[None], torch.tensor([uniq[i]]), later, resolution)[0]
        j = i + 1 + int(torch.nonzero(ok).max()) if bool(ok.any()) else i + 1
        out.append(uniq[j])
        i = j
    return out
