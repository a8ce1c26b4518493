"""Where episodes start: the spawn pose, goal, command and map of each new episode, drawn from
the environment's own random stream, with spawns and goals over holes drawn again."""

from __future__ import annotations

import math
import warnings
from typing import Callable, NamedTuple

import torch

from terrain import HeightMap

from offroad_env.physics.rotations import place_points
from offroad_env.physics.vehicle import Vehicle

__all__ = ["check_rows", "check_map_range", "Spawn", "SPAWN_DRAWS", "draw_spawn", "in_hole",
           "spawn_with_redraws", "free_area", "goal_fits", "check_goal_range", "check_on_map",
           "ground_slope", "slope_limits", "too_steep"]

#: uniforms drawn per environment for one spawn
SPAWN_DRAWS = 8
#: redraw rounds for spawns whose goal does not fit or that touch a hole
MAX_REDRAWS = 64
#: the least share of spawns with room for their goal that a configuration may have (then 64
#: rounds all fail for fewer than one reset in 10^9)
MIN_GOAL_SHARE = 0.3


#: ``(id(stack), map)`` already named in :func:`spawn_with_redraws`' warning (little flat ground)
_FLAT_WARNED: set = set()


class Spawn(NamedTuple):
    """The start of an episode, ``(N,)`` each: rear-axle pose ``x, y, yaw`` (world) [m, m,
    rad], goal ``goal_x, goal_y`` (world) [m], command ``cmd_speed`` [m/s], ``cmd_yaw_rate``
    [rad/s], and ``map_index`` (int64)."""

    x: torch.Tensor
    y: torch.Tensor
    yaw: torch.Tensor
    goal_x: torch.Tensor
    goal_y: torch.Tensor
    cmd_speed: torch.Tensor
    cmd_yaw_rate: torch.Tensor
    map_index: torch.Tensor


def free_area(maps: HeightMap, task) -> tuple[float, float, float, float]:
    """``(x0, x1, y0, y1)`` [m]: the map less the spawn margin (capped at 45 % of each side),
    where spawns and goals lie."""
    x0, x1, y0, y1 = maps.bounds
    m = min(task.spawn_margin, 0.45 * (x1 - x0), 0.45 * (y1 - y0))
    return x0 + m, x1 - m, y0 + m, y1 - m


def check_goal_range(maps: HeightMap, task) -> float:
    """The share of spawns whose goal fits the free area (estimated from 4096 fixed draws);
    raise ValueError where it is below :data:`MIN_GOAL_SHARE` (the redraws would often run out:
    the map's free area is too small for ``task.goal_distance``)."""
    if task.kind != "nav":
        return 1.0
    u = torch.rand(4096, SPAWN_DRAWS, generator=torch.Generator().manual_seed(0),
                   dtype=torch.float64)
    share = float(goal_fits(draw_spawn(u, maps, task, None), maps, task).double().mean())
    if share < MIN_GOAL_SHARE:
        x0, x1, y0, y1 = free_area(maps, task)
        raise ValueError(f"goal_distance {task.goal_distance} m hardly fits the map: only "
                         f"{100 * share:.1f} % of spawns have room for a goal in its free area "
                         f"(the map less spawn_margin {task.spawn_margin} m: {x1 - x0:g} x "
                         f"{y1 - y0:g} m); use a smaller goal_distance or spawn_margin, or a "
                         "larger map")
    return share


def goal_fits(s: "Spawn", maps: HeightMap, task) -> torch.Tensor:
    """``(N,)`` bool: the goal lies in the free area (:func:`free_area`)."""
    x0, x1, y0, y1 = free_area(maps, task)
    return (s.goal_x >= x0) & (s.goal_x <= x1) & (s.goal_y >= y0) & (s.goal_y <= y1)


def draw_spawn(u: torch.Tensor, maps: HeightMap, task, start_pose: torch.Tensor | None,
               goal: torch.Tensor | None = None, map_range=None) -> Spawn:
    """A spawn from ``u`` ``(N, SPAWN_DRAWS)`` uniforms: a pose uniform over the map less the
    ``task.spawn_margin`` (a :class:`~offroad_env.sim.config.TaskConfig`; its heading uniform, or
    facing the goal within ``task.start_heading_spread``), or ``start_pose`` ``(N, 3)``; the
    goal at a uniform distance in ``task.goal_distance`` and a uniform bearing
    (it may fall outside the free area: :func:`spawn_with_redraws` draws such spawns again);
    uniform commands; a uniform map of the stack, or of the rows' ``map_range`` ``(lo,
    count)`` (two ``(N,)`` int64 tensors: maps ``lo .. lo + count - 1``). ``goal`` ``(N, 2)``
    replaces the drawn goal."""
    x0, x1, y0, y1 = maps.bounds
    m = min(task.spawn_margin, 0.45 * (x1 - x0), 0.45 * (y1 - y0))
    sx = x0 + m + u[:, 0] * (x1 - x0 - 2 * m)
    sy = y0 + m + u[:, 1] * (y1 - y0 - 2 * m)
    syaw = (2 * u[:, 2] - 1) * math.pi
    if start_pose is not None:
        sx, sy, syaw = start_pose[:, 0], start_pose[:, 1], start_pose[:, 2]
    d = task.goal_distance[0] + u[:, 3] * (task.goal_distance[1] - task.goal_distance[0])
    bearing = (2 * u[:, 4] - 1) * math.pi
    gx = sx + d * torch.cos(bearing)
    gy = sy + d * torch.sin(bearing)
    if goal is not None:
        gx, gy = goal[:, 0], goal[:, 1]
    spread = task.start_heading_spread
    if spread is not None and start_pose is None:  # face the goal, give or take the spread
        syaw = torch.atan2(gy - sy, gx - sx) + (2 * u[:, 2] - 1) * spread
        syaw = torch.remainder(syaw + math.pi, 2 * math.pi) - math.pi
    cmd_v = task.command_speed[0] + u[:, 5] * (task.command_speed[1] - task.command_speed[0])
    cmd_w = task.command_yaw_rate[0] + u[:, 6] * (task.command_yaw_rate[1]
                                                  - task.command_yaw_rate[0])
    if map_range is None:
        map_index = (u[:, 7] * len(maps)).to(torch.int64).clamp_max(len(maps) - 1)
    else:
        lo, count = map_range
        map_index = lo + torch.minimum((u[:, 7] * count).to(torch.int64), count - 1)
    return Spawn(sx, sy, syaw, gx, gy, cmd_v, cmd_w, map_index)


#: the points of :func:`ground_slope`'s plane fit: a 5 x 5 grid over the 2 x 2 m about a point
#: [m], ``(25, 2)``
SLOPE_GRID = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 5, dtype=torch.float64),
                                        torch.linspace(-1, 1, 5, dtype=torch.float64),
                                        indexing="xy"), -1).reshape(-1, 2)


def ground_slope(maps: HeightMap, x: torch.Tensor, y: torch.Tensor,
                 map_index: torch.Tensor) -> torch.Tensor:
    """``(N,)`` float64: the tangent of the steepest slope of the plane fitted (least squares) to
    the ground at :data:`SLOPE_GRID` about the points ``(x, y)`` ``(N,)`` (world) [m] of the
    maps ``map_index`` ``(N,)``; NaN where a point lies over a hole. OffroadBench's tasks start
    and end where this is at most ``tan(max_start_slope_deg)``
    (:func:`train.common.suite.suite_tasks`)."""
    grid = SLOPE_GRID.to(x.device)
    qx = (x.double()[:, None] + grid[:, 0]).to(maps.dtype)
    qy = (y.double()[:, None] + grid[:, 1]).to(maps.dtype)
    h = maps.height(qx, qy, map_index[:, None].expand(qx.shape)).double()
    h = h - h.mean(1, keepdim=True)
    return torch.hypot(h @ grid[:, 0], h @ grid[:, 1]) / (grid[:, 0] ** 2).sum()


def slope_limits(maps: HeightMap, task) -> torch.Tensor | None:
    """``(M,)`` float64 on the maps' device: ``tan(task.max_start_slope_deg)`` for each of the
    ``M`` maps of the stack (None: no limit); ValueError where a tuple of limits does not give
    one per map."""
    lim = task.max_start_slope_deg
    if lim is None:
        return None
    lim = torch.as_tensor(lim, dtype=torch.float64, device=maps.device)
    if lim.ndim == 1 and lim.numel() != len(maps):
        raise ValueError(f"max_start_slope_deg gives {lim.numel()} limits; the stack has "
                         f"{len(maps)} maps (one number, or one per map)")
    return torch.tan(torch.deg2rad(lim)).expand(len(maps))


def too_steep(maps: HeightMap, limits: torch.Tensor, s: "Spawn", check_spawn: bool,
              check_goal: bool) -> torch.Tensor:
    """``(N,)`` bool: the spawn (``check_spawn``) or the goal (``check_goal``) lies on ground
    steeper than its map's limit (``limits``: :func:`slope_limits`); a point over a hole is not
    judged here (:func:`in_hole`)."""
    lim = limits[s.map_index]
    bad = torch.zeros_like(s.map_index, dtype=torch.bool)
    for check, px, py in ((check_spawn, s.x, s.y), (check_goal, s.goal_x, s.goal_y)):
        if check:
            bad = bad | (ground_slope(maps, px, py, s.map_index) > lim)
    return bad


def in_hole(maps: HeightMap, vehicle: Vehicle, s: Spawn, check_spawn: bool) -> torch.Tensor:
    """``(N,)`` bool: the goal, or (``check_spawn``) a point of the level vehicle's footprint
    lies over a hole. The footprint is the wheels' bounding box grown by 25 % about its centre
    (room for a first step's motion and turn), sampled at half the map's resolution (a hole
    between a few checked points would end the episode on its first step)."""
    bad = torch.isnan(maps.height(s.goal_x, s.goal_y, s.map_index))
    if check_spawn:
        kw = dict(dtype=s.x.dtype, device=s.x.device)
        xs = [p[0] for p in vehicle.wheel_positions]
        ys = [p[1] for p in vehicle.wheel_positions]
        step = 0.5 * min(maps.resolution)
        axes = []
        for lo, hi in ((min(xs), max(xs)), (min(ys), max(ys))):
            c, half = 0.5 * (lo + hi), 0.625 * (hi - lo)
            n = min(64, int(math.ceil(2 * half / step)) + 1)
            axes.append(torch.linspace(c - half, c + half, n, **kw))
        gx, gy = torch.meshgrid(*axes, indexing="ij")
        px, py = gx.reshape(-1), gy.reshape(-1)
        c, s_ = torch.cos(s.yaw).unsqueeze(1), torch.sin(s.yaw).unsqueeze(1)
        hx, hy = place_points(s.x.unsqueeze(1), s.y.unsqueeze(1), c, s_, px, py)
        h = maps.height(hx, hy, s.map_index.unsqueeze(1).expand_as(hx))
        bad = bad | torch.isnan(h).any(1)
    return bad


def spawn_with_redraws(draw: Callable[[int, torch.Tensor], torch.Tensor], use: torch.Tensor,
                       maps: HeightMap, vehicle: Vehicle, task,
                       start_pose: torch.Tensor | None, goal: torch.Tensor | None = None,
                       map_range=None) -> Spawn:
    """A spawn for each selected environment. A spawn whose goal falls outside the free area
    (nav task), or, on maps with holes, with a wheel over a hole or a goal in one, is drawn
    again from the environment's own stream (so sub-env i still equals a single env), up to
    :data:`MAX_REDRAWS` times; then RuntimeError names the environments. With
    ``task.max_start_slope_deg``, a drawn spawn or goal on ground steeper than that
    (:func:`too_steep`) is drawn again, every redraw then on the row's first map (so a steep map
    keeps its share of episodes); rows that find no flatter one in the rounds keep their last
    draw that passed the other checks, with a warning naming the map (a preference, never a
    failed reset). One host sync per round.

    ``draw(n, advance)`` returns ``n`` uniforms per selected environment and advances the
    streams of those where ``advance`` (bool, one per selected environment) is set; ``use``
    marks the environments being reset; ``goal`` and ``map_range`` as in :func:`draw_spawn`."""
    nav = task.kind == "nav"
    limits = slope_limits(maps, task)
    if start_pose is not None and (goal is not None or not nav):
        limits = None  # nothing drawn to judge
    spawn = draw_spawn(draw(SPAWN_DRAWS, use), maps, task, start_pose, goal, map_range)
    if not (nav or maps.has_holes or limits is not None):
        return spawn

    def hard(spawn):  # the redraws a reset cannot do without
        bad = torch.zeros_like(use)
        if nav and goal is None:
            bad = ~goal_fits(spawn, maps, task)
        if maps.has_holes:
            bad = bad | in_hole(maps, vehicle, spawn, start_pose is None)
        return bad & use

    kept, seen = spawn, torch.zeros_like(use)  # each row's last draw that passed hard()
    for attempt in range(MAX_REDRAWS + 1):
        bad = hard(spawn)
        if limits is not None:
            kept = Spawn(*(torch.where(use & ~bad, a, b) for a, b in zip(spawn, kept)))
            seen = seen | (use & ~bad)
            steep = too_steep(maps, limits, spawn, start_pose is None, nav and goal is None)
            steep = steep & use & ~bad
            bad = bad | steep
        if not bool(bad.any()):
            return spawn
        if attempt == MAX_REDRAWS:
            break
        new = draw_spawn(draw(SPAWN_DRAWS, bad), maps, task, start_pose, goal, map_range)
        if limits is not None:  # each row keeps its first map: steep maps keep their share
            new = new._replace(map_index=spawn.map_index)
        spawn = Spawn(*(torch.where(bad, a, b) for a, b in zip(new, spawn)))
    if not bool((bad & ~seen).any()):
        new_maps = sorted(i for i in set(spawn.map_index[bad].tolist())
                          if (id(maps), i) not in _FLAT_WARNED)
        if new_maps:  # each map of a stack named once
            _FLAT_WARNED.update((id(maps), i) for i in new_maps)
            warnings.warn(f"no spawn with its goal on ground under max_start_slope_deg in "
                          f"{MAX_REDRAWS} draws on maps {new_maps[:20]}: those rows keep a "
                          "steeper one (the map has little ground that flat)", stacklevel=3)
        return Spawn(*(torch.where(seen, a, b) for a, b in zip(kept, spawn)))
    bad = bad & ~seen
    rows = torch.nonzero(bad).flatten().tolist()
    raise RuntimeError(f"no spawn with a goal in the map (goal_distance {task.goal_distance}) "
                       f"clear of holes in {MAX_REDRAWS} draws for environment rows {rows[:20]}; "
                       "use a smaller goal_distance or spawn_margin, or a map with fewer holes"
                       + ("" if start_pose is None else " or another start_pose"))


def check_rows(name: str, value, n: int, width: int, device) -> torch.Tensor:
    """``value`` as a finite real ``(n, width)`` tensor of world ``(x, y, yaw)`` (width 3) or
    ``(x, y)`` (width 2) rows; ValueError naming ``name`` otherwise."""
    t = torch.as_tensor(value, device=device)
    if (t.shape != (n, width) or t.dtype == torch.bool or t.is_complex()
            or not bool(torch.isfinite(t).all())):
        what = "world (x, y, yaw)" if width == 3 else "world (x, y)"
        raise ValueError(f"{name} must be a finite real ({n}, {width}) tensor of {what}, got "
                         f"{t.dtype} {tuple(t.shape)}")
    return t


def check_map_range(lo, count, n: int, num_maps: int, device):
    """``(lo, count)`` as int64 ``(n,)`` tensors of map ranges within ``num_maps`` maps;
    ValueError otherwise."""
    lo = torch.as_tensor(lo, device=device)
    count = torch.as_tensor(count, device=device)
    if (lo.shape != (n,) or count.shape != (n,) or lo.is_floating_point()
            or count.is_floating_point() or bool((lo < 0).any()) or bool((count < 1).any())
            or bool((lo + count > num_maps).any())):
        raise ValueError(f"map range must be two ({n},) int tensors with lo >= 0, count >= 1 "
                         f"and lo + count <= {num_maps} (the maps), got {lo!r}, {count!r}")
    return lo.to(torch.int64).clone(), count.to(torch.int64).clone()


def check_on_map(maps: HeightMap, origin, given, start: torch.Tensor, mask: torch.Tensor) -> None:
    """ValueError naming the first masked ``start_pose`` row (``given``: world frame) whose rear
    axle (``start``: the rows in the simulation frame at ``origin``) lies off ``maps``, with
    the map's world bounds: a start off the map has no ground to rest on, and no goal can be
    drawn around it."""
    off = ~maps.in_bounds(start[:, 0], start[:, 1]) & mask
    if bool(off.any()):
        row = int(torch.nonzero(off)[0])
        x, y = (float(v) for v in torch.as_tensor(given)[row, :2])
        ox, oy, _ = origin
        x0, x1, y0, y1 = maps.bounds
        raise ValueError(f"start_pose row {row} at world ({x:.2f}, {y:.2f}) m is off the map, "
                         f"which covers x [{x0 + ox:.2f}, {x1 + ox:.2f}], "
                         f"y [{y0 + oy:.2f}, {y1 + oy:.2f}] m")


def start_at_rest(sim, gc, mask: torch.Tensor, idx: torch.Tensor | None):
    """The reset rows' placement ``gc`` moved to the model's own rest where the model has one
    (:meth:`~offroad_env.physics.models.VehicleModel.rest`): its fields put into ``sim``'s
    state and its placement merged into ``state.contact``; returns the rows' placement."""
    rest = sim.model.rest(sim.state, gc, sim.maps, sim.params, idx)
    if rest is None:
        return gc
    fields, gc = rest
    st = sim.state
    st.put(mask, idx, **fields)
    st.contact = (st.contact.merge_rows(gc, mask) if idx is None
                  else st.contact.merge_rows(gc, idx=idx))
    return gc


def redraw_until_rest(sim, gc, mask: torch.Tensor, idx: torch.Tensor | None, goal):
    """Draw the reset rows whose spawn is no stable rest (``sim.task.unrestful``) again from
    their own streams, up to :data:`MAX_REDRAWS` times; returns the rows' placement. Rows that
    still tip raise RuntimeError (the terrain is too steep for the vehicle); rows that friction
    alone cannot hold start where they slide at once, with a warning (once per simulator)."""
    st = sim.state
    for attempt in range(MAX_REDRAWS + 1):
        bad = sim.task.unrestful(gc, idx) & (mask if idx is None else True)
        if not bool(bad.any()):
            return gc
        if attempt == MAX_REDRAWS:
            break
        if idx is None:
            sim._start_episodes(bad, None, None, goal)
        else:
            rows = idx[bad]
            sim._start_episodes(torch.zeros_like(mask).index_fill_(0, rows, True), rows, None,
                                None if goal is None else goal[bad])
        gc = st.contact if idx is None else st.contact[idx]
    hard = sim.task.unrestful(gc, idx, slides=False) & (mask if idx is None else True)
    rows = torch.nonzero(hard if bool(hard.any()) else bad).flatten()
    if idx is not None:
        rows = idx[rows]
    if bool(hard.any()):
        raise RuntimeError(f"no stable spawn in {MAX_REDRAWS} draws for environment rows "
                           f"{rows.tolist()[:20]}: the terrain is too steep for the vehicle")
    if not getattr(sim, "_warned_slides", False):
        sim._warned_slides = True
        warnings.warn(f"no spawn that friction holds in {MAX_REDRAWS} draws for environment "
                      f"rows {rows.tolist()[:20]}: they start where they slide at once (the "
                      "terrain is steeper than atan(mu) there)", stacklevel=4)
    return gc


def warn_restless_starts(sim, gc, mask: torch.Tensor, idx: torch.Tensor | None) -> None:
    """Given start poses are kept as given; those that are no stable rest by the same check as
    drawn spawns (``sim.task.unrestful``: they tip, slide or do not settle, braked) are named
    in a warning, once per simulator (the placement's ``converged`` and ``stable`` say it per
    row)."""
    if getattr(sim, "_warned_starts", False):
        return
    bad = sim.task.unrestful(gc, idx) & (mask if idx is None else True)
    if bool(bad.any()):
        sim._warned_starts = True
        rows = torch.nonzero(bad).flatten()
        rows = rows if idx is None else idx[rows]
        warnings.warn(f"given start poses of environment rows {rows.tolist()[:20]} are no "
                      "stable rest (braked, the vehicle tips, slides or does not settle there); "
                      "they are kept as given", stacklevel=4)
