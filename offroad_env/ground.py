"""Ground following: place a vehicle on a height map, batched over N environments.

Two methods, one result type (:class:`GroundContact`), so the simulator switches by config:

* :func:`four_wheel` -- the four-wheel seed's block, exactly: wheel positions from the planar
  rear-axle pose, vertical projection onto the terrain, ``pitch = atan((z_rear - z_front) / L)``,
  ``roll = atan((z_left - z_right) / T)``, ``R = Rz(yaw) Ry(pitch) Rx(roll)``,
  ``t = [x, y, z_rear + r]``.
* :func:`rigid_contact` -- the pose-estimation paper's rigid body dropped vertically at fixed
  ``(x, y, yaw)`` to static equilibrium on K wheels, with SVD contact forces. ``method="drop"`` is
  the paper's iteration (the reference); ``method="plane"`` (default) finds the same equilibrium
  directly as the supporting plane under the centre of mass.

Shapes: N environments, K wheels. Inputs ``x, y, yaw`` are ``(N,)`` [m, m, rad], the planar pose
of the rear-axle frame in the world. Frames and conventions: see :mod:`offroad_env.rotations` and
:mod:`offroad_env.vehicle`. A wheel's contact point is ``wheel_radius`` straight below its hub.

**Which rest is returned.** With the heights under the wheels held fixed, the resting plane is
the facet of the *upper* convex hull of the lifted contact points ``(x_j, y_j, h_j + r)`` whose
triangle contains the centre of mass's projection; a vehicle rests on three wheels unless the
ground is planar there. Two rests exist when the centre of mass lies (nearly) on the edge shared
by two facets: the wobbly table. It is the common case, not a corner case, for a symmetric
four-wheel vehicle, whose centre of mass sits where the diagonals cross: on twisted ground it
balances on a diagonal and can tip either way (a high centre of mass, which moves downhill as the
body tilts, makes both sides self-consistent). ``plane`` returns the facet that contains the
centre of mass's projection at the fixed point reached from the level start, and among facets
that both do, the one in which it lies deepest (largest smallest barycentric coordinate: the
rest with the largest stability margin). ``drop`` returns where the paper's fall from level,
touching first with the highest wheel, happens to tip. The tests check that the two agree
wherever the rest is unique (every loaded wheel carries a clear share of the weight).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, fields

import torch

from terrain import HeightMap

from .rotations import make_transform, matmul3, rot_zyx_entries, stack_entries
from .vehicle import Vehicle

__all__ = ["GroundContact", "four_wheel", "rigid_contact", "support_forces", "GRAVITY",
           "METHODS", "place"]

GRAVITY = 9.81  #: [m/s^2], the project's default
METHODS = ("four_wheel", "rigid_contact")


_WHEEL_FIELDS = ("wheel_position", "ground_height", "gap", "contact", "normal_force", "stable")


def merge_rows(old: torch.Tensor, new: torch.Tensor, mask: torch.Tensor | None = None,
               idx: torch.Tensor | None = None) -> torch.Tensor:
    """``old`` ``(N, ...)`` with some rows replaced by ``new``: the rows ``idx`` ``(M,)`` (then
    ``new`` holds M rows), or else the rows where ``mask`` ``(N,)`` is set (``new`` holds N).

    The result keeps ``old``'s memory layout (a plain ``where`` or ``index_copy`` may return
    other strides), so a compiled step that produced ``old`` sees the same strides after a reset
    and is not recompiled."""
    if idx is not None:
        return old.clone().index_copy_(0, idx, new)
    return torch.where(mask.view((-1,) + (1,) * (old.ndim - 1)), new, old,
                       out=torch.empty_like(old))


@dataclass
class GroundContact:
    """Pose of a vehicle on the terrain and its wheel contacts, for N environments.

    Attributes:
        position: ``(N, 3)`` rear-axle origin, world frame [m].
        rotation: ``(N, 3, 3)`` body-to-world rotation of the rear-axle frame.
        ypr: ``(N, 3)`` ``[yaw, pitch, roll]`` [rad] of ``rotation`` (yaw is the input yaw).
        base_position: ``(N, 3)`` base_link origin, world frame [m].
        wheel_hole: ``(N, K)`` bool, the terrain under the wheel is a hole (NaN).
        wheel_off_map: ``(N, K)`` bool, the wheel is outside the map.
        hole, off_map: ``(N,)`` bool, any wheel is over a hole / off the map.
        converged: ``(N,)`` bool, the method's iteration reached its tolerance.
        iterations: ``(N,)`` int, iterations the method used for each environment.
        rear_axle_pose: ``(4, 4)`` the vehicle's pose of the rear-axle frame in base_link (shared
            by all environments).

    Per-wheel quantities, computed on first access (a caller that needs only the pose does not
    pay for the loads):
        wheel_position: ``(N, K, 3)`` hub centres, world frame [m].
        ground_height: ``(N, K)`` terrain height under each wheel's contact point [m] (a hole
            reads as a substitute height; see ``wheel_hole``).
        gap: ``(N, K)`` vertical gap between each wheel's lowest point and the terrain [m]
            (negative: penetration).
        contact: ``(N, K)`` bool, the wheel is within ``d_eps`` of the terrain.
        normal_force: ``(N, K)`` vertical support force of each wheel [N], >= 0.
        stable: ``(N,)`` bool, the loaded wheels hold the weight with forces >= 0 (the centre of
            mass lies over the contact polygon).

    Derived on demand too: ``transform`` and ``base_transform`` ``(N, 4, 4)`` world poses,
    ``base_rotation`` ``(N, 3, 3)``, ``yaw``/``pitch``/``roll`` ``(N,)``.
    """

    position: torch.Tensor
    rotation: torch.Tensor
    ypr: torch.Tensor
    base_position: torch.Tensor
    wheel_hole: torch.Tensor
    wheel_off_map: torch.Tensor
    hole: torch.Tensor
    off_map: torch.Tensor
    converged: torch.Tensor
    iterations: torch.Tensor
    rear_axle_pose: torch.Tensor
    _src: dict = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- per-wheel, lazily
    def _wheels(self) -> dict:
        if not self._cache:
            self._cache.update(_wheel_quantities(**self._src))
        return self._cache

    @property
    def wheel_position(self) -> torch.Tensor:
        return self._wheels()["wheel_position"]

    @property
    def ground_height(self) -> torch.Tensor:
        return self._wheels()["ground_height"]

    @property
    def gap(self) -> torch.Tensor:
        return self._wheels()["gap"]

    @property
    def contact(self) -> torch.Tensor:
        return self._wheels()["contact"]

    @property
    def normal_force(self) -> torch.Tensor:
        return self._wheels()["normal_force"]

    @property
    def stable(self) -> torch.Tensor:
        return self._wheels()["stable"]

    # ---------------------------------------------------------------- derived poses
    @property
    def yaw(self) -> torch.Tensor:
        return self.ypr[:, 0]

    @property
    def pitch(self) -> torch.Tensor:
        return self.ypr[:, 1]

    @property
    def roll(self) -> torch.Tensor:
        return self.ypr[:, 2]

    @property
    def transform(self) -> torch.Tensor:
        """``(N, 4, 4)`` world pose of the rear-axle frame."""
        return make_transform(self.rotation, self.position)

    @property
    def base_rotation(self) -> torch.Tensor:
        """``(N, 3, 3)`` body-to-world rotation of base_link."""
        return matmul3(self.rotation, self.rear_axle_pose[:3, :3].T)

    @property
    def base_transform(self) -> torch.Tensor:
        """``(N, 4, 4)`` world pose of base_link, ``T_world_rear @ inv(rear_axle_pose)``."""
        return make_transform(self.base_rotation, self.base_position)

    # ---------------------------------------------------------------- batch operations
    def _eager_fields(self):
        return [f.name for f in fields(self) if not f.name.startswith("_")]

    def __getitem__(self, index) -> "GroundContact":
        """The result of a subset of environments (``index`` as for a tensor's first axis)."""
        w = self._wheels()
        kw = {name: (getattr(self, name) if name == "rear_axle_pose"
                     else getattr(self, name)[index]) for name in self._eager_fields()}
        return GroundContact(**kw, _cache={k: w[k][index] for k in _WHEEL_FIELDS})

    # Both combinations keep the memory layout of ``other`` / ``self`` (see merge_rows).
    def where(self, mask: torch.Tensor, other: "GroundContact") -> "GroundContact":
        """This result where ``mask`` ``(N,)`` is True, ``other`` elsewhere (all fields)."""
        def pick(a, b):
            return merge_rows(b, a, mask)
        kw = {name: (getattr(self, name) if name == "rear_axle_pose"
                     else pick(getattr(self, name), getattr(other, name)))
              for name in self._eager_fields()}
        w, wo = self._wheels(), other._wheels()
        return GroundContact(**kw, _cache={k: pick(w[k], wo[k]) for k in _WHEEL_FIELDS})

    def index_copy(self, index: torch.Tensor, other: "GroundContact") -> "GroundContact":
        """This result with environments ``index`` ``(M,)`` replaced by ``other`` (M of them)."""
        def put(a, b):
            return merge_rows(a, b, idx=index)
        kw = {name: (getattr(self, name) if name == "rear_axle_pose"
                     else put(getattr(self, name), getattr(other, name)))
              for name in self._eager_fields()}
        w, wo = self._wheels(), other._wheels()
        return GroundContact(**kw, _cache={k: put(w[k], wo[k]) for k in _WHEEL_FIELDS})


# ----------------------------------------------------------------------------- shared helpers
def _inputs(terrain: HeightMap, x, y, yaw, map_index):
    def as_t(v, name):
        t = torch.as_tensor(v, dtype=terrain.dtype, device=terrain.device)
        if t.ndim == 0:
            t = t.reshape(1)
        if t.ndim != 1:
            raise ValueError(f"{name} must have shape (N,), got {tuple(t.shape)}")
        return t

    x, y, yaw = as_t(x, "x"), as_t(y, "y"), as_t(yaw, "yaw")
    x, y, yaw = torch.broadcast_tensors(x, y, yaw)
    if map_index is not None:
        map_index = torch.as_tensor(map_index, device=terrain.device)
        if map_index.ndim == 0:
            map_index = map_index.expand(x.shape)
        map_index = map_index.reshape(1, -1)  # per-wheel arrays are (K, N): wheel-major
    return x, y, yaw, map_index


def _body_const(vehicle: Vehicle, like: torch.Tensor, which: str = "wheels"):
    """Wheel hubs in the rear-axle frame as two ``(K, 1)`` columns ``(x, y)`` [m], or the
    four-wheel method's rectangle FL, FR, RL, RR. Separate 1-D constants, not the columns of one
    (K, 2) tensor: inductor fails to vectorize the strided column loads (11x slower compiled)."""
    if which == "wheels":
        pts = vehicle.wheel_positions
    else:
        L, T = vehicle.wheel_base, vehicle.track_width
        pts = ((L, T / 2), (L, -T / 2), (0.0, T / 2), (0.0, -T / 2))
    kw = dict(dtype=like.dtype, device=like.device)
    return (torch.tensor([p[0] for p in pts], **kw).unsqueeze(1),
            torch.tensor([p[1] for p in pts], **kw).unsqueeze(1))


def _query(terrain: HeightMap, px, py, map_index):
    """Heights ``(K, N)`` with holes filled, plus the hole and off-map masks."""
    h = terrain.height(px, py, map_index)
    hole = torch.isnan(h)
    off = ~terrain.in_bounds(px, py)
    return h, hole, off


def _fill_holes(h: torch.Tensor, hole: torch.Tensor, drop: float) -> torch.Tensor:
    """Replace NaN heights by ``(lowest finite height of the env) - drop`` (0 if none finite)."""
    big = torch.finfo(h.dtype).max
    low = torch.where(hole, torch.full_like(h, big), h).amin(dim=0, keepdim=True)
    low = torch.where(low == big, torch.zeros_like(low), low)
    return torch.where(hole, (low - drop).expand_as(h), h)


def support_forces(wheel_x: torch.Tensor, wheel_y: torch.Tensor, com_x: torch.Tensor,
                   com_y: torch.Tensor, active: torch.Tensor, weight: float,
                   tol: float | None = None):
    """Vertical wheel forces that hold the weight, for wheels that may carry load.

    Solves ``sum_j f_j = W``, ``sum_j f_j (x_j - c_x) = 0``, ``sum_j f_j (y_j - c_y) = 0`` with
    the minimum-norm ``f`` over the ``active`` wheels (for three wheels this is the lever rule; on
    a symmetric layout it is ``W / K``), releases wheels whose force comes out negative and solves
    again, as the paper does. This is also what the SVD pseudo-inverse of the paper's contact
    matrix gives at rest. ``f = a_j (l0 + l1 dx_j + l2 dy_j)`` with ``(l0, l1, l2)`` from the 3x3
    normal equations, solved in closed form (adjugate), elementwise over N.

    Args:
        wheel_x, wheel_y: ``(N, K)`` horizontal contact positions, world frame [m].
        com_x, com_y: ``(N,)`` horizontal centre of mass [m].
        active: ``(N, K)`` bool, wheels allowed to carry load.
        weight: ``m g`` [N].

    Returns:
        ``(forces (N, K) >= 0 [N], stable (N,) bool)``; stable means the solution balances the
        weight and moments with non-negative forces.
    """
    f, stable = _support_forces_kn(wheel_x.T, wheel_y.T, com_x, com_y, active.T, weight, tol)
    return f.T, stable


def _support_forces_kn(wheel_x, wheel_y, com_x, com_y, active, weight: float, tol=None):
    """:func:`support_forces` on wheel-major ``(K, N)`` arrays (the layout inside this module:
    the environment index innermost, so compiled kernels vectorize over it)."""
    dtype = wheel_x.dtype
    K = wheel_x.shape[0]
    if tol is None:
        tol = 1e-6 if dtype == torch.float64 else 1e-3
    ridge = 1e-12 if dtype == torch.float64 else 1e-6
    dx = wheel_x - com_x
    dy = wheel_y - com_y
    scale = torch.maximum(dx.abs().amax(0), dy.abs().amax(0)).clamp_min(1e-3)
    ux, uy = dx / scale, dy / scale  # unit-free lever arms, for conditioning
    for _ in range(max(1, K - 2)):
        a = active.to(dtype)
        ax, ay = a * ux, a * uy
        s0, s1, s2 = a.sum(0), ax.sum(0), ay.sum(0)
        s11, s12, s22 = (ax * ux).sum(0), (ax * uy).sum(0), (ay * uy).sum(0)
        reg = ridge * (s0 + s11 + s22).clamp_min(1.0)  # keeps G invertible with < 3 wheels
        s0, s11, s22 = s0 + reg, s11 + reg, s22 + reg
        # first column of adj(G), G = [[s0, s1, s2], [s1, s11, s12], [s2, s12, s22]]
        c0 = s11 * s22 - s12 * s12
        c1 = s2 * s12 - s1 * s22
        c2 = s1 * s12 - s2 * s11
        k = weight / (s0 * c0 + s1 * c1 + s2 * c2)
        f = a * (c0 * k) + ax * (c1 * k) + ay * (c2 * k)
        active = active & ~(f < -tol * weight)
    f = f.clamp_min(0.0) * active.to(dtype)
    res_f = (f.sum(0) - weight).abs()
    res_m = torch.maximum((f * ux).sum(0).abs(), (f * uy).sum(0).abs())
    stable = (res_f <= tol * weight) & (res_m <= tol * weight)
    return f, stable


def _offsets(E, wheels):
    """World-frame offsets ``R @ p_j`` of body points with z = 0: three ``(K, N)`` tensors.
    ``E``: rotation entries (:func:`~offroad_env.rotations.rot_zyx_entries`)."""
    px, py = wheels
    return tuple(E[i][0] * px + E[i][1] * py for i in range(3))


def _rotate(E, v) -> tuple:
    """``R @ v`` for one constant body vector ``v`` (3 floats): three ``(N,)`` tensors."""
    return tuple(E[i][0] * v[0] + E[i][1] * v[1] + E[i][2] * v[2] for i in range(3))


def _finish(vehicle: Vehicle, ypr, E, t, wheels, ground_h, wheel_hole, wheel_off, d_eps,
            gravity, converged, iterations, gap=None, forces=None, stable=None, offs=None
            ) -> GroundContact:
    """Assemble the result. The per-wheel quantities (gaps, contacts, loads) are computed on
    first access from these sources, unless given.

    ``wheels``: the hub columns of :func:`_body_const`; the per-wheel inputs (``ground_h``,
    masks, ``gap``, ``forces``) are ``(K, N)``. The result's per-wheel fields are ``(N, K)``
    (transposed views).
    """
    R = stack_entries(E)
    T_br = torch.tensor(vehicle.rear_axle_pose, dtype=R.dtype, device=R.device)
    bx, by, bz = _rotate(E, vehicle.base_offset)
    base = torch.stack((t[:, 0] + bx, t[:, 1] + by, t[:, 2] + bz), 1)
    src = dict(vehicle=vehicle, t=t, R=R, wheels=wheels, ground_h=ground_h,
               wheel_hole=wheel_hole, d_eps=d_eps, gravity=gravity, gap=gap, forces=forces,
               stable=stable, offs=offs)
    return GroundContact(
        position=t, rotation=R, ypr=ypr, base_position=base,
        wheel_hole=wheel_hole.T, wheel_off_map=wheel_off.T, hole=wheel_hole.any(0),
        off_map=wheel_off.any(0), converged=converged, iterations=iterations,
        rear_axle_pose=T_br, _src=src)


def _wheel_quantities(vehicle, t, R, wheels, ground_h, wheel_hole, d_eps, gravity,
                      gap=None, forces=None, stable=None, offs=None) -> dict:
    """Per-wheel fields of :class:`GroundContact` from its ``(K, N)`` sources (``offs``: the
    hub offsets when the method computed them anyway)."""
    E = tuple(tuple(R[:, i, j] for j in range(3)) for i in range(3))
    ox, oy, oz = _offsets(E, wheels) if offs is None else offs
    cx, cy, _ = _rotate(E, vehicle.com)
    com_x, com_y = t[:, 0] + cx, t[:, 1] + cy
    hx = t[:, 0] + ox
    hy = t[:, 1] + oy
    hz = t[:, 2] + oz
    if gap is None:
        gap = hz - vehicle.wheel_radius - ground_h
    contact = (gap <= d_eps) & ~wheel_hole
    if forces is None:
        forces, stable = _support_forces_kn(hx, hy, com_x, com_y, contact,
                                            vehicle.mass * gravity)
    return {"wheel_position": torch.stack((hx, hy, hz), -1).transpose(0, 1),
            "ground_height": ground_h.T, "gap": gap.T, "contact": contact.T,
            "normal_force": forces.T, "stable": stable}


# ----------------------------------------------------------------------------- four wheel
def four_wheel(vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None, *,
               d_eps: float = 0.01, gravity: float = GRAVITY) -> GroundContact:
    """The four-wheel seed's ground following, batched over N (and over a stack of maps).

    The four wheels are the corners of the ``wheel_base x track_width`` rectangle, in the seed's
    order FL, FR, RL, RR. Their planar positions are projected straight down onto the terrain
    (the map's interpolation), and::

        z_front = (z_FL + z_FR) / 2    z_rear = (z_RL + z_RR) / 2
        z_left  = (z_FL + z_RL) / 2    z_right = (z_FR + z_RR) / 2
        pitch = atan((z_rear - z_front) / wheel_base)
        roll  = atan((z_left - z_right) / track_width)
        R = Rz(yaw) Ry(pitch) Rx(roll),   t = [x, y, z_rear + wheel_radius]

    Per-wheel outputs are for the vehicle's own K wheels: heights under their planar positions
    (vertical projection, as the seed), gaps at the resulting pose, contacts within ``d_eps`` and
    the static loads of the contacting wheels (:func:`support_forces`). A wheel over a hole reads
    the lowest height among the other wheels (flagged in ``wheel_hole``/``hole``).
    """
    x, y, yaw, mi = _inputs(terrain, x, y, yaw, map_index)
    rx, ry = _body_const(vehicle, x, "rectangle")  # (4, 1) each
    c, s = torch.cos(yaw), torch.sin(yaw)
    px = x + c * rx - s * ry  # (4, N)
    py = y + s * rx + c * ry
    h, hole, off = _query(terrain, px, py, mi)
    h = _fill_holes(h, hole, 0.0)
    z_fl, z_fr, z_rl, z_rr = h.unbind(0)
    z_front, z_rear = 0.5 * (z_fl + z_fr), 0.5 * (z_rl + z_rr)
    z_left, z_right = 0.5 * (z_fl + z_rl), 0.5 * (z_fr + z_rr)
    pitch = torch.atan((z_rear - z_front) / vehicle.wheel_base)
    roll = torch.atan((z_left - z_right) / vehicle.track_width)
    E = rot_zyx_entries(yaw, pitch, roll)
    t = torch.stack((x, y, z_rear + vehicle.wheel_radius), dim=1)
    wheels = _body_const(vehicle, x)
    if vehicle.is_rectangle:
        wh, whole, woff = h, hole, off
    else:  # other layouts: their own planar positions, projected down
        wx = x + c * wheels[0] - s * wheels[1]
        wy = y + s * wheels[0] + c * wheels[1]
        wh, whole, woff = _query(terrain, wx, wy, mi)
        wh = _fill_holes(wh, whole, 0.0)
    ones = torch.ones_like(x, dtype=torch.bool)
    iters = torch.ones_like(x, dtype=torch.int32)
    return _finish(vehicle, torch.stack((yaw, pitch, roll), 1), E, t, wheels, wh,
                   whole, woff, d_eps, gravity, ones, iters)


# ----------------------------------------------------------------------------- rigid contact
def _attitude_from_normal(n: tuple, yaw: torch.Tensor):
    """Roll and pitch of a body with heading ``yaw`` whose z axis is the unit normal ``n``
    (three ``(N,)`` components; kept apart, as a stacked ``(N, 3)`` makes compiled kernels read
    it with stride 3 and fall back to scalar loops).

    In the yaw-aligned frame ``n' = Rz(-yaw) n = (cos(roll) sin(pitch), -sin(roll),
    cos(roll) cos(pitch))``.
    """
    c, s = torch.cos(yaw), torch.sin(yaw)
    nx = c * n[0] + s * n[1]
    ny = -s * n[0] + c * n[1]
    nz = n[2]
    pitch = torch.atan2(nx, nz)
    roll = torch.atan2(-ny, torch.sqrt(nx * nx + nz * nz))
    return roll, pitch


def _triples(K: int, device) -> torch.Tensor:
    return torch.tensor(list(itertools.combinations(range(K), 3)), dtype=torch.long,
                        device=device)


def _support_plane(Pxy: torch.Tensor, Z: torch.Tensor, com_xy: torch.Tensor, triples, tol):
    """The upper-hull facet over the centre of mass.

    The upper hull's height over a point ``c`` is the largest height at ``c`` of the planes
    through any three points whose triangle contains ``c`` (a linear program whose optimum sits
    on three points), so the facet is the triangle that contains the CoM's projection and is
    highest there: one pass over the ``C(K, 3)`` triangles, no test of every wheel against
    every plane. ``tol`` is the barycentric slack of "contains".

    Args:
        Pxy: ``(N, K, 2)`` horizontal contact positions; Z: ``(N, K)`` required hub heights
            ``h + r``; com_xy: ``(N, 2)``; triples: ``(T, 3)`` wheel index triples.

    Returns:
        ``(normal (N, 3) unit, up; point on plane (N, 3); found (N,) bool)``. Where no triangle
        contains the CoM (it lies outside the support polygon: the vehicle tips), the triangle
        that comes closest is returned with ``found`` False.
    """
    N, K = Z.shape
    A = torch.cat((Pxy, Z.unsqueeze(-1)), dim=-1)  # (N, K, 3)
    a, b, c = A[:, triples[:, 0]], A[:, triples[:, 1]], A[:, triples[:, 2]]  # (N, T, 3)
    bx, by, bz = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1], b[..., 2] - a[..., 2]
    cx, cy, cz = c[..., 0] - a[..., 0], c[..., 1] - a[..., 1], c[..., 2] - a[..., 2]
    det = bx * cy - by * cx  # twice the signed xy-area
    span = (Pxy.amax(1) - Pxy.amin(1)).amax(-1).clamp_min(1e-6)  # (N,)
    nondegenerate = det.abs() > 1e-6 * (span * span).unsqueeze(1)
    safe = torch.where(nondegenerate, det, torch.ones_like(det))
    # barycentric coordinates of the CoM in the triangle's xy projection
    ex, ey = com_xy[:, None, 0] - a[..., 0], com_xy[:, None, 1] - a[..., 1]
    l1 = (ex * cy - ey * cx) / safe
    l2 = (bx * ey - by * ex) / safe
    margin = torch.minimum(torch.minimum(1.0 - l1 - l2, l1), l2)
    height = a[..., 2] + l1 * bz + l2 * cz  # the triangle's plane at the CoM
    contains = nondegenerate & (margin >= -tol)
    neg_inf = torch.full_like(height, -math.inf)
    found = contains.any(1)
    # The highest containing triangle is the facet. Where the CoM sits on (or within rounding
    # of) an edge, several triangles tie in height and only some are hull facets: check the
    # few highest against every wheel (no wheel above the plane) and, among those that pass
    # and tie, take the one that holds the CoM best (as the closed-form four-wheel path).
    k = min(3, height.shape[1])
    top_h, cand = torch.where(contains, height, neg_inf).topk(k, dim=1)  # (N, k)
    g = lambda v: v.gather(1, cand)  # noqa: E731
    ux, uy, uz, vx, vy, vz = g(bx), g(by), g(bz), g(cx), g(cy), g(cz)
    nz = ux * vy - uy * vx
    nz_safe = torch.where(nz.abs() > 0, nz, torch.ones_like(nz))
    nx, ny = uy * vz - uz * vy, uz * vx - ux * vz
    ax_, ay_, az_ = (A[..., i].gather(1, triples[cand][..., 0]) for i in range(3))  # (N, k)
    zp = az_.unsqueeze(-1) - (nx.unsqueeze(-1) * (Pxy[:, None, :, 0] - ax_.unsqueeze(-1))
                              + ny.unsqueeze(-1) * (Pxy[:, None, :, 1] - ay_.unsqueeze(-1))) \
        / nz_safe.unsqueeze(-1)  # (N, k, K): each candidate plane at every wheel
    feasible = (zp >= Z.unsqueeze(1) - tol).all(-1) & torch.isfinite(top_h)
    best_f = torch.where(feasible, top_h, torch.full_like(top_h, -math.inf)).amax(1, keepdim=True)
    near = feasible & (top_h >= best_f - tol * span.clamp_min(1.0).unsqueeze(1))
    held = torch.where(near, g(margin), torch.full_like(top_h, -math.inf))
    any_f = feasible.any(1)
    choice = torch.where(any_f, held.argmax(1), torch.zeros_like(held.argmax(1)))
    best_contain = cand.gather(1, choice.view(N, 1)).squeeze(1)
    closest = torch.where(nondegenerate, margin, neg_inf)
    best = torch.where(found, best_contain, closest.argmax(1))
    pick = best.view(N, 1)
    ux, uy, uz = (v.gather(1, pick).squeeze(1) for v in (bx, by, bz))
    vx, vy, vz = (v.gather(1, pick).squeeze(1) for v in (cx, cy, cz))
    n = torch.stack((uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx), 1)
    n = n * torch.where(n[:, 2:3] < 0, -1.0, 1.0).to(n.dtype)
    n = n / torch.linalg.vector_norm(n, dim=1, keepdim=True)
    p_sel = a.gather(1, best.view(N, 1, 1).expand(N, 1, 3)).squeeze(1)
    return n, p_sel, found


def rigid_contact(vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None, *,
                  method: str = "plane", d_eps: float = 0.01, gravity: float = GRAVITY,
                  max_iter: int | None = None, dt: float = 0.02, tol: float | None = None,
                  init_roll=None, init_pitch=None) -> GroundContact:
    """Rigid K-wheel vehicle dropped at fixed ``(x, y, yaw)`` to static equilibrium.

    The free coordinates are ``q = (z, roll, pitch)`` of the rear-axle frame; its ``x, y`` stay
    the input. Wheels with a gap ``<= d_eps`` (1 cm in the paper) carry load; forces are the SVD
    pseudo-inverse solution, wheels with negative force are released.

    Args:
        method: ``"plane"`` -- the supporting plane of the contact points under the centre of
            mass, iterated to a fixed point over the sideways shift of the wheels as the body
            tilts (``max_iter`` default 6 in float32, 10 in float64: on rough terrain 99.99 % of
            random cold-started poses converge in float32 in 6); ``"drop"`` -- the paper's drop integration with
            ``M q'' = W_f f + W_g G`` and ``f = -A^# b`` (``max_iter`` default 3000, time step
            ``dt`` [s]).
        tol: convergence tolerance (plane: attitude change [rad]; drop: velocity [m/s, rad/s]).
        init_roll, init_pitch: ``(N,)`` start attitude of the plane iteration [rad] (default
            level). A simulator passes the previous step's attitude: fewer iterations, and where
            two rests exist (the wobbly table) the vehicle stays on the side it was on instead
            of flipping between them as rounding changes.

    Returns:
        :class:`GroundContact`; ``converged`` and ``iterations`` report each environment.
    """
    if method not in ("plane", "drop"):
        raise ValueError(f"method must be 'plane' or 'drop', got {method!r}")
    if not (math.isfinite(d_eps) and d_eps >= 0):
        raise ValueError(f"d_eps must be finite and >= 0, got {d_eps}")
    x, y, yaw, mi = _inputs(terrain, x, y, yaw, map_index)
    if method == "plane":
        return _rigid_plane(vehicle, terrain, x, y, yaw, mi, d_eps, gravity,
                            (6 if x.dtype == torch.float32 else 10) if max_iter is None
                            else max_iter, tol, init_roll, init_pitch)
    return _rigid_drop(vehicle, terrain, x, y, yaw, mi, d_eps, gravity,
                       3000 if max_iter is None else max_iter, dt, tol)


def _hub_query(vehicle, terrain, x, y, R, wheels, mi):
    """Hub world offsets for attitude R, and the terrain heights under the hubs."""
    offs = _offsets(R, wheels)  # R: rotation entries
    hx = x + offs[0]
    hy = y + offs[1]
    h, hole, off = _query(terrain, hx, hy, mi)
    drop = 10.0 * (vehicle.wheel_base + vehicle.track_width) + 10.0
    return offs, hx, hy, _fill_holes(h, hole, drop), hole, off


def _quad_plane(hx, hy, Z, cx, cy, inside: bool = True):
    """:func:`_support_plane` for the four rectangle wheels FL, FR, RL, RR, in closed form.

    The hubs of a tilted rectangle project to a parallelogram whose diagonals bisect each other,
    so the upper hull splits along the diagonal with the higher midpoint: FL-RR if
    ``Z_FL + Z_RR >= Z_FR + Z_RL``, else FR-RL. The facet is the one on the centre of mass's side.
    """
    d03 = (Z[0] + Z[3]) >= (Z[1] + Z[2])
    # diagonal endpoints (a, b) and the two off-diagonal corners (c1, c2)
    ia = torch.where(d03, 0, 1)
    ib = torch.where(d03, 3, 2)
    ic1 = torch.where(d03, 1, 0)
    ic2 = torch.where(d03, 2, 3)

    def pick(v, i):
        return v.gather(0, i.unsqueeze(0)).squeeze(0)

    ax, ay, az = pick(hx, ia), pick(hy, ia), pick(Z, ia)
    bx, by, bz = pick(hx, ib) - ax, pick(hy, ib) - ay, pick(Z, ib) - az
    side_c = bx * (cy - ay) - by * (cx - ax)
    c1x, c1y = pick(hx, ic1) - ax, pick(hy, ic1) - ay
    side_1 = bx * c1y - by * c1x
    ic = torch.where((side_c >= 0) == (side_1 >= 0), ic1, ic2)
    ex, ey, ez = pick(hx, ic) - ax, pick(hy, ic) - ay, pick(Z, ic) - az
    nx, ny, nz = by * ez - bz * ey, bz * ex - bx * ez, bx * ey - by * ex
    k = torch.where(nz < 0, -1.0, 1.0).to(nz.dtype) / torch.sqrt(nx * nx + ny * ny + nz * nz)
    n = (nx * k, ny * k, nz * k)
    if not inside:  # an intermediate pass needs the facet only
        return n, (ax, ay, az), None
    return n, (ax, ay, az), _com_inside(hx, hy, cx, cy)


def _com_inside(hx, hy, cx, cy) -> torch.Tensor:
    """``(N,)``: the point ``(cx, cy)`` lies inside the quadrilateral of the four rectangle hubs
    FL, FR, RL, RR (``(K, N)`` each)."""
    order = (0, 1, 3, 2)  # FL, FR, RR, RL around the parallelogram
    signs = []
    for k in range(4):
        i, j = order[k], order[(k + 1) % 4]
        ex_, ey_ = hx[j] - hx[i], hy[j] - hy[i]
        signs.append(ex_ * (cy - hy[i]) - ey_ * (cx - hx[i]))
    s = torch.stack(signs, 1)
    return (s >= 0).all(1) | (s <= 0).all(1)


def _rigid_plane(vehicle, terrain, x, y, yaw, mi, d_eps, gravity, max_iter, tol, init_roll=None,
                 init_pitch=None):
    dtype = x.dtype
    if tol is None:
        tol = 1e-9 if dtype == torch.float64 else 1e-5
    geo_tol = 1e-9 if dtype == torch.float64 else 1e-5
    wheels = _body_const(vehicle, x)
    quad = vehicle.is_rectangle
    triples = None if quad else _triples(vehicle.num_wheels, x.device)
    n_env = x.shape[0]

    def plane(roll, pitch, idx=None, final=False):
        """The facet for attitude (roll, pitch) of the poses ``idx`` (None: all)."""
        xs, ys, yws = (x, y, yaw) if idx is None else (x[idx], y[idx], yaw[idx])
        ms = mi if (mi is None or idx is None) else mi[:, idx]
        com_b = tuple(_subset(c, idx, n_env) for c in vehicle.com)  # per-env (VehicleBatch)
        r = _subset(vehicle.wheel_radius, idx, n_env)
        R = rot_zyx_entries(yws, pitch, roll)
        offs, hx, hy, h, hole, off = _hub_query(vehicle, terrain, xs, ys, R, wheels, ms)
        cx, cy, _ = _rotate(R, com_b)
        if quad:
            n, p, found = _quad_plane(hx, hy, h + r, xs + cx, ys + cy, inside=False)
        else:
            n, p, found = _support_plane(torch.stack((hx.T, hy.T), -1), (h + r).T,
                                         torch.stack((xs + cx, ys + cy), 1), triples, geo_tol)
            n, p = n.unbind(1), p.unbind(1)
        return R, offs, h, hole, off, n, p, found

    roll = torch.zeros_like(x) if init_roll is None else torch.as_tensor(init_roll).to(x)
    pitch = torch.zeros_like(x) if init_pitch is None else torch.as_tensor(init_pitch).to(x)
    roll, pitch = roll.expand_as(x).contiguous(), pitch.expand_as(x).contiguous()
    change = torch.full_like(x, math.inf)
    iters = torch.zeros_like(x, dtype=torch.int32)
    # Each pass evaluates the facet at the current attitude and moves the attitude to the
    # facet's. A pose stops when the move is below ``tol``; it returns the attitude of its last
    # pass with that pass's facet, heights and hub offsets (consistent with each other; the
    # fixed point is within ``tol``). After two passes over all poses only those still moving
    # are iterated (on rough ground ~45 % after 3 passes, ~10 % after 4, ~0.2 % after 5): eager
    # on the CPU by running the pass on those alone; compiled graphs and accelerators keep fixed
    # shapes, run the pass on every pose and keep the stopped poses' previous results, so every
    # path stops each pose at the same pass (where a pose has two rests, a "wobbly table", they
    # also pick the same one).
    compact = not torch.compiler.is_compiling() and x.device.type == "cpu"
    att_roll, att_pitch, out = roll, pitch, None
    for k in range(max(1, max_iter)):
        idx = None
        if compact and k >= 2:
            idx = torch.nonzero(change > tol).squeeze(1)
            if idx.numel() == 0:
                break
            if idx.numel() == n_env:
                idx = None
        r0, p0 = (roll, pitch) if idx is None else (roll[idx], pitch[idx])
        res = plane(r0, p0, idx, final=not quad)
        n = res[5]
        new_roll, new_pitch = _attitude_from_normal(n, yaw if idx is None else yaw[idx])
        ch = torch.maximum((new_roll - r0).abs(), (new_pitch - p0).abs())
        if idx is None and k < 2:
            change, att_roll, att_pitch, out = ch, r0, p0, list(res)
            roll, pitch = new_roll, new_pitch
            iters = iters + 1
        elif idx is None:  # every pose ran; those that had stopped keep their last pass
            live = change > tol

            def keep(new, old, dim=0):
                if old is None:
                    return None
                if isinstance(old, tuple):
                    return tuple(keep(a, b, dim) for a, b in zip(new, old))
                return torch.where(live if dim == 0 else live.unsqueeze(0), new, old)
            change, att_roll, att_pitch = keep(ch, change), keep(r0, att_roll), keep(p0, att_pitch)
            roll, pitch = keep(new_roll, roll), keep(new_pitch, pitch)
            iters = iters + live.to(torch.int32)
            out = [out[0]] + [keep(res[j], out[j], 1 if j <= 4 else 0) for j in range(1, 8)]
        else:
            change = change.index_copy(0, idx, ch)
            att_roll = att_roll.index_copy(0, idx, r0)
            att_pitch = att_pitch.index_copy(0, idx, p0)
            roll = roll.index_copy(0, idx, new_roll)
            pitch = pitch.index_copy(0, idx, new_pitch)
            iters = iters.index_add(0, idx, torch.ones_like(idx, dtype=torch.int32))
            for j in (1, 2, 3, 4, 5, 6, 7):  # offs, h, hole, off (K, N); n, p 3 x (N,); found
                if j in (1, 5, 6):
                    d = 1 if j == 1 else 0
                    out[j] = tuple(o.index_copy(d, idx, s) for o, s in zip(out[j], res[j]))
                elif out[j] is not None:
                    out[j] = out[j].index_copy(1 if j <= 4 else 0, idx, res[j])
    _, offs, h, hole, off, n, p, found = out
    R = rot_zyx_entries(yaw, att_pitch, att_roll)
    if quad:  # the centre of mass inside the hub quadrilateral (else no facet holds it)
        cx, cy, _ = _rotate(R, vehicle.com)
        found = _com_inside(x + offs[0], y + offs[1], x + cx, y + cy)
    # origin height: the hub plane through the facet, at the origin's (x, y)
    z0 = p[2] - (n[0] * (x - p[0]) + n[1] * (y - p[1])) / n[2]
    t = torch.stack((x, y, z0), 1)
    converged = (change <= tol) & found
    return _finish(vehicle, torch.stack((yaw, att_pitch, att_roll), 1), R, t, wheels, h, hole,
                   off, d_eps, gravity, converged, iters, offs=offs)


def _subset(v, idx, n: int):
    """``v[idx]`` for a per-environment ``(N,)`` tensor; floats (and idx None) unchanged."""
    if idx is None or not isinstance(v, torch.Tensor) or v.ndim == 0:
        return v
    return v[idx]


def _rigid_drop(vehicle, terrain, x, y, yaw, mi, d_eps, gravity, max_iter, dt, tol):
    """The paper's iteration, batched; see DESIGN.md "The rigid-contact method, written out"."""
    dtype = x.dtype
    dev = x.device
    if tol is None:
        tol = 1e-7 if dtype == torch.float64 else 1e-4
    rtol = 1e-10 if dtype == torch.float64 else 1e-5  # SVD: sigma < rtol * sigma_max -> 0
    wheels = _body_const(vehicle, x)
    com_b = vehicle.com
    r = vehicle.wheel_radius
    m, g = vehicle.mass, gravity
    N, K = x.shape[0], vehicle.num_wheels
    Minv = torch.tensor([1.0 / m, 1.0 / vehicle.inertia_roll, 1.0 / vehicle.inertia_pitch],
                        dtype=dtype, device=dev)
    roll = torch.zeros_like(x)
    pitch = torch.zeros_like(x)
    # start level, the highest wheel just touching
    R0 = rot_zyx_entries(yaw, pitch, roll)
    _, _, _, h0, _, _ = _hub_query(vehicle, terrain, x, y, R0, wheels, mi)
    z = (h0 + r).amax(0)
    v = torch.zeros(N, 3, dtype=dtype, device=dev)
    done = torch.zeros(N, dtype=torch.bool, device=dev)
    iters = torch.full((N,), max_iter, dtype=torch.int32, device=dev)
    f = torch.zeros(N, K, dtype=dtype, device=dev)
    for i in range(max_iter):
        R = rot_zyx_entries(yaw, pitch, roll)
        off_b, hx, hy, h, hole, off = _hub_query(vehicle, terrain, x, y, R, wheels, mi)
        d = (z + off_b[2] - r - h).T  # (N, K) gaps
        Wf, WgG = _wrenches(roll, pitch, wheels, com_b, m * g)
        A = dt * dt * Wf.transpose(1, 2) @ (Minv.view(1, 3, 1) * Wf)  # (N, K, K)
        b = d + dt * (Wf.transpose(1, 2) @ v.unsqueeze(-1)).squeeze(-1) \
            + dt * dt * (Wf.transpose(1, 2) @ (Minv * WgG).unsqueeze(-1)).squeeze(-1)
        # Touching wheels, and loaded wheels within d_eps. A wheel released for a negative force
        # comes back only when it touches again (without this hysteresis a wheel hovering within
        # d_eps is pulled down and released in turn, and the drop never settles).
        active = (d <= 0) | ((d <= d_eps) & (f > 0))
        f = _svd_forces(A, b, active, rtol)
        v_new = v + dt * Minv * ((Wf @ f.unsqueeze(-1)).squeeze(-1) + WgG)
        moving = ~done
        v = torch.where(moving.unsqueeze(1), v_new, v)
        z = torch.where(moving, z + dt * v[:, 0], z)
        roll = torch.where(moving, roll + dt * v[:, 1], roll)
        pitch = torch.where(moving, pitch + dt * v[:, 2], pitch)
        settled = moving & (v.abs().amax(1) < tol) & (active.sum(1) >= 3)
        iters = torch.where(settled, torch.full_like(iters, i + 1), iters)
        done = done | settled
        if (i + 1) % 25 == 0 and bool(done.all()):
            break
    R = rot_zyx_entries(yaw, pitch, roll)
    off_b, hx, hy, h, hole, off = _hub_query(vehicle, terrain, x, y, R, wheels, mi)
    t = torch.stack((x, y, z), 1)
    gap = z + off_b[2] - r - h  # (K, N)
    # The paper's forces at rest: v = 0 and d = 0 for the wheels within d_eps, solved by the
    # SVD pseudo-inverse with negative forces released.
    contact = ((gap <= d_eps) & ~hole).T
    Wf, WgG = _wrenches(roll, pitch, wheels, com_b, m * g)
    A = dt * dt * Wf.transpose(1, 2) @ (Minv.view(1, 3, 1) * Wf)
    b = dt * dt * (Wf.transpose(1, 2) @ (Minv * WgG).unsqueeze(-1)).squeeze(-1)
    f = _svd_forces(A, b, contact, rtol)
    cx, cy, _ = _rotate(R, vehicle.com)
    dx, dy = (off_b[0] - cx).T, (off_b[1] - cy).T
    res_f = (f.sum(1) - m * g).abs()
    res_m = torch.maximum((f * dx).sum(1).abs(), (f * dy).sum(1).abs())
    scale = torch.maximum(dx.abs().amax(1), dy.abs().amax(1)).clamp_min(1e-3)
    stable = (res_f <= 1e-6 * m * g) & (res_m <= 1e-6 * m * g * scale)
    return _finish(vehicle, torch.stack((yaw, pitch, roll), 1), R, t, wheels, h, hole, off, d_eps,
                   gravity, done, iters, gap=gap, forces=f.T, stable=stable, offs=off_b)


def _wrenches(roll, pitch, wheels, com_b, weight):
    """Wrench matrices of the drop, ``q = (z, roll, pitch)`` of the rear-axle frame.

    ``W_f (N, 3, K)``: column j is the generalized force of a unit upward force at hub j,
    ``d(p_jz)/dq = (1, py ca cb, -px cb - py sa sb)`` (hubs have body z = 0; ``a`` roll, ``b``
    pitch). ``W_g G (N, 3)``: the weight at the centre of mass c,
    ``-m g (1, (cy ca - cz sa) cb, -cx cb - (cy sa + cz ca) sb)``.
    """
    px, py = wheels[0][:, 0], wheels[1][:, 0]
    cx, cy, cz = com_b[0], com_b[1], com_b[2]
    ca, sa, cb, sb = torch.cos(roll), torch.sin(roll), torch.cos(pitch), torch.sin(pitch)
    c1 = lambda t: t.unsqueeze(1)  # noqa: E731
    Wf = torch.stack((torch.ones_like(c1(ca) * px), py * c1(ca * cb),
                      -px * c1(cb) - py * c1(sa * sb)), dim=1)
    WgG = -weight * torch.stack((torch.ones_like(ca), (cy * ca - cz * sa) * cb,
                                 -cx * cb - (cy * sa + cz * ca) * sb), dim=1)
    return Wf, WgG


def _svd_forces(A: torch.Tensor, b: torch.Tensor, active: torch.Tensor, rtol: float):
    """``f = -A^# b`` over the active wheels, SVD pseudo-inverse (singular values below
    ``rtol * sigma_max`` zeroed); wheels whose force comes out negative are released and the
    rest solved again. ``A: (N, K, K)``, ``b, active: (N, K)``; returns ``(N, K)`` forces >= 0."""
    dtype = A.dtype
    f = torch.zeros_like(b)
    for _ in range(A.shape[-1]):
        am = active.to(dtype)
        Aa = A * am.unsqueeze(1) * am.unsqueeze(2)
        f = -(torch.linalg.pinv(Aa, rtol=rtol, hermitian=True) @ (b * am).unsqueeze(-1)
              ).squeeze(-1) * am
        negative = active & (f < 0)
        active = active & ~negative
    return f.clamp_min(0.0) * active.to(dtype)


def place(method: str, vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None,
          **kwargs) -> GroundContact:
    """Dispatch by name: ``"four_wheel"`` or ``"rigid_contact"`` (config-driven callers)."""
    if method == "four_wheel":
        return four_wheel(vehicle, terrain, x, y, yaw, map_index, **kwargs)
    if method == "rigid_contact":
        return rigid_contact(vehicle, terrain, x, y, yaw, map_index, **kwargs)
    raise ValueError(f"ground-following method must be one of {METHODS}, got {method!r}")
