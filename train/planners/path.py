"""A map planner: traversability on the map's grid, a cost-to-go field to each env's goal, and
the ``path`` baseline that follows it with pure pursuit. **Privileged**: it reads the true map
(``env.unwrapped.terrain``), the vehicle and each env's pose and goal (``state_view``), not
only the observation.

**Traversability** (:func:`traversability`), per sample of the map, for the vehicle, as a
conservative *isotropic* bound (the heading is not in the search: every limit is taken at the
worst heading, so a slope the vehicle could cross along its contour but not climb counts as
one it cannot climb):

* *slope*, of the ground smoothed over the wheel base, against the least of the static roll
  limit (:func:`~offroad_env.physics.stability.static_tip_limits`) and the steepest climb
  friction allows, ``atan(mu - c_rr)`` (``mu`` the sample's surface's, else the env's); on
  soil, the climb its closed-form drawbar pull at full slip allows, ``asin(DP / W)``;
* *steps*: a rise to a sample within a wheel radius that the steepest climbable slope over
  that run does not explain, against the ledge-climb limit
  (:func:`~offroad_env.physics.stability.ledge_climb_limit`, the sample's friction);
* ground past either limit costs ``penalty`` (x100) times more, not infinitely: at a map's
  grid, relief the vehicle drives over can read as a step (Verti-Bench's 1/6-scale worlds cut
  into islands otherwise), so a route exists wherever one may;
* *walls*: a step past ``wall_step`` wheel radii (a rock's side, a cliff), a hole, the map's
  edge: never crossed; ground within the wheels' footprint's half diagonal of one (the body
  turning in place clears it) costs ``wall_factor`` (x1000) times more, finite so that a start
  there still has a way out, and ``near_factor`` (x4) within ``clearance`` more (routes keep to
  a gap's middle);
* the cost per metre of the rest: ``1 + slope_weight (theta / theta_max)^2 + soil_weight R_c /
  W`` (``R_c`` the soil's compaction resistance at the wheel's rolling sinkage, ``W`` its
  load).

**The field** of each (map, goal) pair, on a planning grid ``stride`` samples apart (each
planning cell the worst of its block), by :func:`terrain.costs.cost_to_go` (exactly Dijkstra's
distances on the 8-connected grid), computed once and kept: rows of the live env and of a
look-ahead that share a goal share it.

**The policy** (:class:`PathPolicy`, pure pursuit on an any-angle path): from its cell it
descends the field ``lookahead`` metres and steers (turn rate ``gain x bearing``) at the
farthest point of that descent a straight run reaches at no more cost than the grid's path
(:func:`terrain.costs.visible`): across open ground straight at the goal, round a corner only
as far as the corner. Full speed within 45 degrees of it, 0.3 otherwise. Where no path leaves
its cell (inside a wall), it steers at the goal. With ``slow_from`` < 1 it also slows from the
static stability margin: where the larger of ``|roll| / roll limit`` and ``|pitch| / pitch
limit`` (:func:`~offroad_env.physics.stability.static_tip_limits`) passes ``slow_from``, the
speed falls linearly to ``slow_speed`` at the limit. Off by default, as measured: no failure of
``path`` on the draws here is a tip-over (0 of 200 on the own draw's steps and boulders, 1 of
200 on Verti-Bench's tuning worlds), and ``slow_from=0.5`` changed 0 and 1 of those tasks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F

from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.physics.soil import Soil, compaction_resistance, drawbar_pull, sinkage
from offroad_env.physics.soil_contact import soil_table
from offroad_env.physics.stability import ledge_climb_limit, static_tip_limits
from terrain.costs import cost_to_go, descend, visible

from train.planners.options import parse_options as _parse

#: the cost-to-go read where no path leaves (a finite stand-in for ``inf``, so that progress
#: between two such points is 0, not NaN)
UNREACHABLE = 1e6

__all__ = ["UNREACHABLE", "PathConfig", "PathPolicy", "traversability", "env_traversability",
           "planning_stride", "path_policy", "parse_options"]


@dataclass(frozen=True)
class PathConfig:
    """The ``path`` baseline's options (``--policy path:lookahead=1.0,...``).

    Attributes:
        cell: the planning grid's spacing, at least [m] (a stride of the map's samples).
        sample: the spacing [m] the traversability is computed at: every ``k``-th sample of
            the map, ``k = round(sample / resolution)`` (0: every sample). On the 0.025-m
            training grid of OffroadBench v1 (its steps family needs it) the first labels of
            256 envs took 390 s at every sample and 9.1 s at ``sample=0.1``
            (``benchmarks/bench_teacher.py``).
        lookahead: pure pursuit's look-ahead along the path [m].
        gain: turn rate per radian of bearing.
        slope_share: the share of the slope limit past which ground is impassable.
        slope_weight, soil_weight: the costs' weights (module docstring).
        inflate: the radius the walls grow by [m] (None: half the diagonal of the wheels'
            footprint, tyres included: the body turning in place clears a wall so far from
            its centre).
        wall_step: the least step that is a wall, in wheel radii.
        penalty: the cost factor of ground past the slope or ledge limit.
        clearance, near_factor: ground within ``clearance`` [m] of a grown wall costs
            ``near_factor`` times more.
        slow_from, slow_speed: the share of the static tip limit (the larger of roll's and
            pitch's) past which the speed falls linearly, to ``slow_speed`` at the limit
            (``slow_from=1``: never).
    """

    cell: float = 0.15
    sample: float = 0.0
    lookahead: float = 2.0
    gain: float = 2.0
    slope_share: float = 1.0
    slope_weight: float = 2.0
    soil_weight: float = 5.0
    inflate: float | None = None
    wall_step: float = 1.0
    clearance: float = 0.3
    near_factor: float = 4.0
    penalty: float = 100.0
    wall_factor: float = 1000.0
    slow_from: float = 1.0
    slow_speed: float = 0.3

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "inflate" and v is None:
                continue
            low = 1.0 if f.name in ("penalty", "near_factor", "wall_factor") else 0.0
            strict = f.name in ("cell", "lookahead", "gain", "slope_share", "wall_step")
            if not (isinstance(v, (int, float)) and math.isfinite(v)
                    and (v > low if strict else v >= low)):
                raise ValueError(f"path option {f.name}={v!r}: give a finite number "
                                 f"{'>' if strict else '>='} {low:g}")
        for name in ("slow_from", "slow_speed"):
            if not getattr(self, name) <= 1.0:
                raise ValueError(f"path option {name}={getattr(self, name)!r}: give a share "
                                 "in [0, 1]")


_TYPES = {f.name: float for f in fields(PathConfig)}


def parse_options(text: str) -> dict:
    """``"lookahead=1.0,cell=0.2"`` as :class:`PathConfig` keywords."""
    return _parse(text, _TYPES, {}, "path")


def _box(h: torch.Tensor, k: int) -> torch.Tensor:
    """``(M, ny, nx)`` the mean over a ``k x k`` box (replicated at the edges)."""
    if k <= 1:
        return h
    pad = k // 2
    x = F.pad(h[:, None], (pad, pad, pad, pad), mode="replicate")
    return F.avg_pool2d(x, k, stride=1)[:, 0]


def _material_limits(maps, vehicle, mu: float, c_rr: float):
    """Per material index: ``(theta_max [rad], ledge [m], cost added per metre)`` lists (the
    names resolved as the physical model resolves them: :func:`soil_table`)."""
    names = maps.material_names or ("hard",)
    table = soil_table(names, torch.float64, "cpu", maps.material_defs_key)
    W = vehicle.mass * 9.81 / vehicle.num_wheels
    b, r = vehicle.wheel_width or 0.1, vehicle.wheel_radius
    out = []
    for i in range(len(names)):
        if not bool(table.soft[i]):
            m = mu if table.mu is None or math.isnan(table.mu[i]) else float(table.mu[i])
            crr = (c_rr if table.c_rr is None or math.isnan(table.c_rr[i])
                   else float(table.c_rr[i]))
            out.append((math.atan(max(m - crr, 1e-3)), ledge_climb_limit(vehicle, m) * r, 0.0))
            continue
        n, k_c, k_phi, c, phi, K = (float(v) for v in table.columns[:, i])
        soil = Soil(n=n, k_c=k_c, k_phi=k_phi, c=c, phi=phi, K=K, name=names[i])
        dp, _ = drawbar_pull(soil, b, r, W, torch.tensor(1.0, dtype=torch.float64))
        z = sinkage(soil, b, r, torch.tensor(W, dtype=torch.float64))
        rc = float(compaction_resistance(soil, b, z)) / W
        climb = math.asin(min(max(float(dp) / W, 1e-3), 1.0))
        out.append((climb, ledge_climb_limit(vehicle, math.tan(soil.phi)) * r, rc))
    return out


def sample_step(maps, cfg: PathConfig) -> int:
    """``k``: the traversability reads every ``k``-th sample (``cfg.sample`` over the finer
    resolution, rounded, at least 1)."""
    return max(1, int(round(cfg.sample / min(maps.resolution)))) if cfg.sample > 0 else 1


def planning_stride(maps, cfg: PathConfig) -> int:
    """The planning grid's spacing in map samples: ``k`` (:func:`sample_step`) times
    ``cfg.cell`` over ``k`` times the finer resolution, rounded, at least 1."""
    k = sample_step(maps, cfg)
    return k * max(1, int(round(cfg.cell / (k * min(maps.resolution)))))


def traversability(maps, vehicle, mu: float, c_rr: float = 0.02, cfg: PathConfig = PathConfig(),
                   index: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
    """``(cost (M, ny', nx') float64 per metre, inf impassable; stride)``: the map's
    traversability for ``vehicle`` on the planning grid (every ``stride``-th sample's block;
    module docstring). ``mu``, ``c_rr``: the env's friction and the tyre's rolling resistance;
    ``index``: ``(M,)`` the maps of the stack to take (None: all)."""
    h = maps.heights.to(torch.float64)
    h = h[None] if h.ndim == 2 else h
    z = maps.z_offset.to(torch.float64).reshape(-1)
    mat = maps.materials
    mat = (torch.zeros(h.shape, dtype=torch.long) if mat is None
           else (mat[None] if mat.ndim == 2 else mat).long())
    if index is not None:
        h, z, mat = h[index], z[index], mat[index]
    h = h + z[:, None, None]
    every = sample_step(maps, cfg)
    if every > 1:  # every k-th sample (the planning cells' blocks start on them)
        h, mat = h[:, ::every, ::every], mat[:, ::every, ::every]
    rx, ry = (r * every for r in maps.resolution)
    res = min(rx, ry)
    hole = torch.isnan(h)
    hf = torch.where(hole, _box(torch.nan_to_num(h), 3), h)
    xs = [p[0] for p in vehicle.wheel_positions]
    k = max(1, int(round((max(xs) - min(xs)) / res)) | 1)       # odd, about the wheel base
    hs = _box(hf, k)
    gy, gx = torch.gradient(hs, spacing=(ry, rx), dim=(1, 2))
    theta = torch.atan(torch.hypot(gx, gy))
    roll, _ = static_tip_limits(vehicle)
    limits = _material_limits(maps, vehicle, mu, c_rr)
    lim = torch.tensor([min(a, roll) for a, _, _ in limits], dtype=torch.float64)[mat]
    ledge = torch.tensor([b for _, b, _ in limits], dtype=torch.float64)[mat]
    soil = torch.tensor([c for _, _, c in limits], dtype=torch.float64)[mat]
    # a step: a rise to a sample within a wheel radius that the steepest climbable slope over
    # that run leaves unexplained by more than the ledge limit (a wall, a rock's side)
    reach = max(1, int(round(vehicle.wheel_radius / res)))
    tan_lim = torch.tan(lim)
    step = torch.zeros_like(hf)
    ny, nx = hf.shape[-2:]
    padded = F.pad(hf[:, None], (reach, reach, reach, reach), mode="replicate")[:, 0]
    for dr in range(-reach, reach + 1):
        for dc in range(-reach, reach + 1):
            d = math.hypot(dr * ry, dc * rx)
            if d == 0 or d > vehicle.wheel_radius + 1e-9:
                continue  # (the edge's replicated samples: no step off the map)
            other = padded[:, reach + dr:reach + dr + ny, reach + dc:reach + dc + nx]
            step = torch.maximum(step, (other - hf).abs() - d * tan_lim)
    # a wall (a rock's side, a cliff): a step past a wheel radius, never crossed; a step past
    # the ledge limit, or a slope past its limit, may be only the map's relief at its grid:
    # crossed at a cost ``penalty`` times higher, so a route exists wherever one may
    wall = hole | (step > cfg.wall_step * vehicle.wheel_radius)
    hard = (step > ledge) | (theta > cfg.slope_share * lim)
    xs_ = [q[0] for q in vehicle.wheel_positions]
    half = (cfg.inflate if cfg.inflate is not None  # the wheels' footprint's half diagonal
            else 0.5 * math.hypot(max(xs_) - min(xs_) + 2 * vehicle.wheel_radius,
                                  vehicle.track_width + (vehicle.wheel_width or 0.0)))
    g = int(math.ceil(half / res))
    # the map's edge: a wall of one sample (the env ends an episode off the map on its own)
    core = wall.clone()
    core[:, 0, :] = core[:, -1, :] = True
    core[:, :, 0] = core[:, :, -1] = True
    g = int(math.ceil(half / res))
    grow = lambda m, k: (F.max_pool2d(m[:, None].double(), 2 * k + 1, stride=1,  # noqa: E731
                                      padding=k)[:, 0] > 0) if k > 0 else m
    # the body must pass a wall, a hole or the edge: within ``half`` of one, ground costs
    # ``wall_factor`` times more (finite: a start there, Verti-Bench's 0.67 m from the edge,
    # still has a way out, and no route goes through while another exists)
    grown = grow(core, g)
    # near a wall (within ``clearance`` more): dearer, so routes keep to the middle of a gap
    near = grow(core, int(math.ceil((half + cfg.clearance) / res)))
    cost = 1.0 + cfg.slope_weight * (theta / lim).clamp(max=1.0) ** 2 + cfg.soil_weight * soil
    cost = torch.where(hard, cost * cfg.penalty, cost)
    cost = torch.where(near, cost * cfg.near_factor, cost)
    cost = torch.where(grown, cost * cfg.wall_factor, cost)
    cost = torch.where(core, torch.full_like(cost, math.inf), cost)
    stride = planning_stride(maps, cfg)
    if stride > every:  # each planning cell: the worst of its block
        s = stride // every
        cost = F.max_pool2d(cost[:, None], s, stride=s, ceil_mode=True)[:, 0]
    return cost, stride


def env_traversability(env, cfg: PathConfig, index: list) -> torch.Tensor:
    """``(len(index), ny', nx')`` :func:`traversability` of the maps ``index`` of the vector
    env ``env``'s stack, for its vehicle, friction and rolling resistance (the physical model's
    parameters; ``mu`` 0.8 and ``c_rr`` 0.02 for a model without them), on the planning grid
    of ``cfg`` (:func:`planning_stride`)."""
    base = env.unwrapped
    p = base.config.dynamics_params or RigidBodyParams()
    mu, c_rr = float(getattr(p, "mu", 0.8)), float(getattr(p, "c_rr", 0.02))
    return traversability(base.terrain, base.vehicle, mu, c_rr, cfg,
                          torch.as_tensor(index, dtype=torch.int64))[0]


class _Slots:
    """Tensors ``(ny, nx)`` kept by key in one ``(capacity, ny, nx)`` tensor, so that rows can
    index them (``slot(keys) -> (K,)``). The capacity doubles when full: a training run adds a
    few fields at most steps, and growing by concatenation copied every kept field each time
    (the teacher keeps up to 2048 fields of a 24-m map on 0.1-m cells, 465 kB each)."""

    def __init__(self, make):
        self.make, self.where, self.data = make, {}, None

    def slots(self, keys: list) -> torch.Tensor:
        new = list(dict.fromkeys(k for k in keys if k not in self.where))
        if new:
            made = self.make(new)
            base = len(self.where)
            if self.data is None or base + len(new) > self.data.shape[0]:
                grown = made.new_empty((max(2 * (base + len(new)), 8),) + made.shape[1:])
                if base:
                    grown[:base] = self.data[:base]
                self.data = grown
            self.data[base:base + len(new)] = made
            self.where.update({k: base + i for i, k in enumerate(new)})
        return torch.tensor([self.where[k] for k in keys], dtype=torch.int64)


class PathPolicy:
    """The ``path`` baseline for ``env`` (module docstring): ``act(obs, view=None) ->
    actions``, its speed and turn rate ``(M,)`` made actions by ``to_action(v, w)`` (the
    baselines' ``drive`` for the env's model: :func:`train.planners.baselines.baseline` builds
    it so); ``options``: :class:`PathConfig` fields. Privileged: reads the map and each row's
    pose and goal, from ``view`` (a :class:`~offroad_env.state_view.StateView`: the look-ahead
    passes its rows' own) or, without one, the env's ``state_view()``. Each map's cost and each
    (map, goal) pair's field are computed once and kept. ``goal_in_sight``: steer at the goal
    itself wherever a straight run there costs no more than the grid's path (on open ground
    the straight line's turn, where the look-ahead's carrot on an 8-connected path may lie up
    to 22.5 degrees off it; the teacher's labels, :mod:`train.ppo.teacher`); off for the
    baseline, as measured."""

    reads_state = True

    def __init__(self, env, to_action, goal_in_sight: bool = False, **options):
        self.cfg = PathConfig(**options)
        self.goal_in_sight = bool(goal_in_sight)
        self.env, self.to_action = env.unwrapped, to_action
        maps = self.maps = self.env.terrain
        self.stride = planning_stride(maps, self.cfg)
        self.costs = _Slots(lambda idx: env_traversability(self.env, self.cfg, idx))
        self.fields = _Slots(self._fields)
        rx, ry = maps.resolution
        self.x0, _, self.y0, _ = maps.bounds
        self.sx, self.sy = self.stride * rx, self.stride * ry
        self.n_look = max(2, int(math.ceil(self.cfg.lookahead / min(self.sx, self.sy))) + 2)
        roll, pitch = static_tip_limits(self.env.vehicle)
        self.tip = (float(torch.as_tensor(roll).min()), float(torch.as_tensor(pitch).min()))

    def cell_of(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``(N, 2)`` the planning cells ``(row, column)`` of world points ``x, y`` ``(N,)``."""
        ny, nx = self.costs.data.shape[-2:]
        c = ((x - self.x0) / self.sx).round().long().clamp(0, nx - 1)
        r = ((y - self.y0) / self.sy).round().long().clamp(0, ny - 1)
        return torch.stack((r, c), 1)

    def _fields(self, keys: list) -> torch.Tensor:
        """The fields of ``(map, goal row, goal column)`` keys, ``(K, ny, nx)``."""
        k = torch.tensor(keys, dtype=torch.int64)
        c = self.costs.data[self.costs.slots(k[:, 0].tolist())].clone()
        c[torch.arange(len(keys)), k[:, 1], k[:, 2]] = 1.0   # the goal is reachable there
        return cost_to_go(c, k[:, 1:], None, (self.sx, self.sy))

    def field_slots(self, view) -> tuple[torch.Tensor, torch.Tensor]:
        """``(N,)`` each row's field slot and map's cost slot (computed where new)."""
        mi = view.map_index.long().cpu()
        self.costs.slots(mi.tolist())
        goal = view.goal_w.to(torch.float64).cpu()
        g = self.cell_of(goal[:, 0], goal[:, 1])
        keys = [tuple(t) for t in torch.cat((mi[:, None], g), 1).tolist()]
        return self.fields.slots(keys), self.costs.slots(mi.tolist())

    def cost_to_go_at(self, view, xy: torch.Tensor) -> torch.Tensor:
        """``(N,)`` float64 the cost-to-go of world points ``xy`` ``(N, 2)`` [m] to each
        row's goal on its map (``view``'s rows); a point that no path leaves (inside a wall)
        reads :data:`UNREACHABLE`."""
        self._check_maps()
        fi, _ = self.field_slots(view)
        xy = xy.to(torch.float64).cpu()
        rc = self.cell_of(xy[:, 0], xy[:, 1])
        return self.fields.data[fi, rc[:, 0], rc[:, 1]].clamp(max=UNREACHABLE)

    @property
    def num_fields(self) -> int:
        """How many (map, goal) fields are kept."""
        return len(self.fields.where)

    def drop_fields(self) -> None:
        """Forget the kept fields; they are computed again as rows need them (a training run
        draws new goals all the time: kept, every one would stay in memory)."""
        self.fields = _Slots(self._fields)

    def _check_maps(self) -> None:
        """Start afresh where the env's maps were replaced (``set_terrain``)."""
        if self.env.terrain is not self.maps:
            to_action = self.to_action
            self.__init__(self.env, to_action, self.goal_in_sight,
                          **{f.name: getattr(self.cfg, f.name) for f in fields(self.cfg)})

    def __call__(self, obs: torch.Tensor, view=None) -> torch.Tensor:
        cfg = self.cfg
        self._check_maps()
        view = self.env.state_view() if view is None else view
        fi, ci = self.field_slots(view)
        field, cost = self.fields.data, self.costs.data
        # the body's centre (base_link), not the rear axle: the walls are grown around it
        x = view.base_position_w[:, 0].to(torch.float64).cpu()
        y = view.base_position_w[:, 1].to(torch.float64).cpu()
        yaw = view.yaw.double().cpu()
        goal = view.goal_w.to(torch.float64).cpu()
        here = self.cell_of(x, y)
        rows = torch.arange(x.shape[0])
        on = torch.isfinite(field[fi, here[:, 0], here[:, 1]])
        path = descend(field, here, self.n_look, fi, cost, ci, (self.sx, self.sy))
        # the carrot: the farthest point of the descended path that a straight run reaches
        # at no more cost than the path (any-angle: straight across open ground, round a
        # corner only as far as the corner)
        a_rc = torch.stack(((y - self.y0) / self.sy, (x - self.x0) / self.sx), 1)
        off = torch.hypot((a_rc[:, 0] - here[:, 0]) * self.sy,
                          (a_rc[:, 1] - here[:, 1]) * self.sx)
        slack = cost[ci, here[:, 0], here[:, 1]].nan_to_num(posinf=0.0) * off
        ok = visible(cost, field, a_rc, path[:, 1:], (self.sx, self.sy), slack, ci, fi)
        k = 1 + (ok.long() * torch.arange(1, self.n_look + 1)).argmax(1)
        k = torch.where(ok.any(1), k, torch.ones_like(k))
        tx = self.x0 + path[rows, k, 1].double() * self.sx
        ty = self.y0 + path[rows, k, 0].double() * self.sy
        if self.goal_in_sight:  # the goal itself, where a straight run there costs no more
            g = self.cell_of(goal[:, 0], goal[:, 1])
            see = visible(cost, field, a_rc, g[:, None], (self.sx, self.sy), slack, ci, fi)[:, 0]
            on = on & ~see
        tx = torch.where(~on, goal[:, 0], tx)
        ty = torch.where(~on, goal[:, 1], ty)
        bearing = torch.remainder(torch.atan2(ty - y, tx - x) - yaw + math.pi,
                                  2 * math.pi) - math.pi
        w = (cfg.gain * bearing).clamp(-1.0, 1.0)
        v = torch.where(bearing.abs() < math.pi / 4, torch.ones_like(w), torch.full_like(w, 0.3))
        if cfg.slow_from < 1.0:  # slower as the body tilts towards its static tip limit
            share = torch.maximum(view.roll.double().cpu().abs() / self.tip[0],
                                  view.pitch.double().cpu().abs() / self.tip[1])
            t = ((share - cfg.slow_from) / (1.0 - cfg.slow_from)).clamp(0.0, 1.0)
            v = torch.minimum(v, 1.0 - t * (1.0 - cfg.slow_speed))
        return self.to_action(v.to(obs), w.to(obs))


def path_policy(env, to_action, **options) -> PathPolicy:
    """The ``path`` baseline (:class:`PathPolicy`)."""
    return PathPolicy(env, to_action, **options)
