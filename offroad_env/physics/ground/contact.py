"""The result of ground following, :class:`GroundContact`, and its per-wheel loads.

A method returns the pose (cheap) and, unless asked not to, the per-wheel quantities (gaps,
contacts, loads). The simulator asks for the pose only and adds the loads with
:meth:`GroundContact.with_loads` where a step needs them (skid-steer dynamics, the rigid
method's stability): the result is frozen, and the loads are an explicit second value, not a
cache filled on first access.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from ..batch import SHARED, merge
from ..rotations import make_transform, matmul3, stack_entries
from ..vehicle import Vehicle
from .common import offsets, rotate
from .loads import TOUCH_TOL, support_forces_kn

__all__ = ["GroundContact", "WheelLoads", "LoadInputs", "assemble", "wheel_loads"]


@dataclass(frozen=True)
class WheelLoads:
    """Per-wheel quantities of a placement, for N environments and K wheels.

    Attributes:
        wheel_position: ``(N, K, 3)`` hub centres, world frame [m].
        ground_height: ``(N, K)`` terrain height under each wheel's contact point [m] (a hole
            reads as a substitute height; see ``GroundContact.wheel_hole``).
        gap: ``(N, K)`` vertical gap between each wheel's lowest point and the terrain [m]
            (negative: penetration).
        contact: ``(N, K)`` bool, the wheel is within ``d_eps`` of the terrain.
        normal_force: ``(N, K)`` vertical support force of each wheel [N], >= 0.
        stable: ``(N,)`` bool, the loaded wheels hold the weight with forces >= 0 (the centre of
            mass lies over the contact polygon).
    """

    wheel_position: torch.Tensor
    ground_height: torch.Tensor
    gap: torch.Tensor
    contact: torch.Tensor
    normal_force: torch.Tensor
    stable: torch.Tensor


@dataclass(frozen=True)
class LoadInputs:
    """What :func:`wheel_loads` needs, kept by a result placed without its loads. Per-wheel
    arrays are wheel-major ``(K, N)``; ``gap``/``forces``/``stable`` are given where the method
    computed them itself (the drop), ``offs`` (three ``(K, N)`` hub offsets, world frame) where it
    computed them anyway."""

    vehicle: Vehicle
    t: torch.Tensor  #: (N, 3) rear-axle origin, world [m]
    R: torch.Tensor  #: (N, 3, 3) rear-axle-to-world rotation
    wheels: tuple  #: hub columns (x, y) (K, 1) in the rear-axle frame [m]
    ground_h: torch.Tensor  #: (K, N) [m]
    wheel_hole: torch.Tensor  #: (K, N) bool
    d_eps: float
    gravity: float
    gap: torch.Tensor | None = None
    forces: torch.Tensor | None = None
    stable: torch.Tensor | None = None
    offs: tuple | None = None


@dataclass(frozen=True)
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
        converged: ``(N,)`` bool, the method's iteration reached its tolerance at a rest that
            holds the centre of mass (``settled`` and a support found).
        settled: ``(N,)`` bool, the iteration reached its fixed point (the attitude stopped
            changing), whether or not the wheels hold the centre of mass there; False only where
            the iteration limit cut it short, so the pose is not yet a rest (judge tip-over only
            where it is True).
        iterations: ``(N,)`` int, iterations the method used for each environment.
        rear_axle_pose: ``(4, 4)`` the vehicle's pose of the rear-axle frame in base_link (shared
            by all environments).
        loads: the per-wheel quantities (:class:`WheelLoads`), or None when placed without them
            (see :meth:`with_loads`); ``wheel_position``, ``ground_height``, ``gap``,
            ``contact``, ``normal_force`` and ``stable`` read them.
        load_inputs: what :meth:`with_loads` computes them from (None once they are computed).

    Derived on demand: ``transform`` and ``base_transform`` ``(N, 4, 4)`` world poses,
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
    settled: torch.Tensor
    iterations: torch.Tensor
    rear_axle_pose: torch.Tensor = field(metadata=SHARED)
    loads: WheelLoads | None = field(default=None, repr=False)
    load_inputs: LoadInputs | None = field(default=None, repr=False, metadata=SHARED)

    # ---------------------------------------------------------------- per-wheel loads
    def with_loads(self) -> "GroundContact":
        """This result with its per-wheel quantities computed (itself if they are)."""
        if self.loads is not None:
            return self
        return dataclasses.replace(self, loads=wheel_loads(self.load_inputs), load_inputs=None)

    def _loads(self) -> WheelLoads:
        if self.loads is None:
            raise AttributeError("this GroundContact was placed without its per-wheel loads: "
                                 "use contact.with_loads()")
        return self.loads

    @property
    def wheel_position(self) -> torch.Tensor:
        return self._loads().wheel_position

    @property
    def ground_height(self) -> torch.Tensor:
        return self._loads().ground_height

    @property
    def gap(self) -> torch.Tensor:
        return self._loads().gap

    @property
    def contact(self) -> torch.Tensor:
        return self._loads().contact

    @property
    def normal_force(self) -> torch.Tensor:
        return self._loads().normal_force

    @property
    def stable(self) -> torch.Tensor:
        return self._loads().stable

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
    def _rows(self, pick) -> dict:
        return {f.name: getattr(self, f.name) if f.metadata.get("shared")
                else pick(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name != "loads"}

    def __getitem__(self, index) -> "GroundContact":
        """The result of a subset of environments (``index`` as for a tensor's first axis),
        with its loads."""
        full = self.with_loads()
        loads = WheelLoads(**{f.name: getattr(full.loads, f.name)[index]
                              for f in dataclasses.fields(WheelLoads)})
        return GroundContact(**full._rows(lambda v: v[index]), loads=loads)

    def merge_rows(self, rows: "GroundContact", mask: torch.Tensor | None = None,
                   idx: torch.Tensor | None = None) -> "GroundContact":
        """This result with the environments ``idx`` ``(M,)`` replaced by ``rows`` (M of them),
        or those where ``mask`` ``(N,)`` is set replaced by the same rows of ``rows``; loads
        included (computed on both first). Keeps this result's memory layout
        (:func:`~offroad_env.physics.batch.merge_rows`)."""
        a, b = self.with_loads(), rows.with_loads()
        kw = {f.name: getattr(a, f.name) if f.metadata.get("shared")
              else merge(getattr(a, f.name), getattr(b, f.name), mask, idx)
              for f in dataclasses.fields(a)}
        return GroundContact(**kw)


def assemble(vehicle: Vehicle, ypr, rot, t, wheels, ground_h, wheel_hole, wheel_off, d_eps,
             gravity, converged, iterations, gap=None, forces=None, stable=None, offs=None,
             loads: bool = True, settled=None) -> GroundContact:
    """The result of a method: the pose from ``ypr`` ``(N, 3)``, rotation entries ``rot`` and
    rear-axle origin ``t`` ``(N, 3)``; the per-wheel inputs (``ground_h``, masks, ``gap``,
    ``forces``) are ``(K, N)``, the result's per-wheel fields ``(N, K)`` (transposed views).
    ``loads``: compute the per-wheel quantities now, else keep their inputs
    (:meth:`GroundContact.with_loads`). ``settled`` ``(N,)``: default ``converged``."""
    R = stack_entries(rot)
    T_br = torch.tensor(vehicle.rear_axle_pose, dtype=R.dtype, device=R.device)
    bx, by, bz = rotate(rot, vehicle.base_offset)
    base = torch.stack((t[:, 0] + bx, t[:, 1] + by, t[:, 2] + bz), 1)
    inputs = LoadInputs(vehicle=vehicle, t=t, R=R, wheels=wheels, ground_h=ground_h,
                        wheel_hole=wheel_hole, d_eps=d_eps, gravity=gravity, gap=gap,
                        forces=forces, stable=stable, offs=offs)
    gc = GroundContact(
        position=t, rotation=R, ypr=ypr, base_position=base,
        wheel_hole=wheel_hole.T, wheel_off_map=wheel_off.T, hole=wheel_hole.any(0),
        off_map=wheel_off.any(0), converged=converged,
        settled=converged if settled is None else settled, iterations=iterations,
        rear_axle_pose=T_br, load_inputs=inputs)
    return gc.with_loads() if loads else gc


def wheel_loads(src: LoadInputs) -> WheelLoads:
    """Per-wheel quantities from their ``(K, N)`` inputs: hub positions, gaps, contacts within
    ``d_eps`` and the static loads of the contacting wheels
    (:func:`~offroad_env.physics.ground.loads.support_forces`) unless the method gave them."""
    vehicle, t, R = src.vehicle, src.t, src.R
    rot = tuple(tuple(R[:, i, j] for j in range(3)) for i in range(3))
    ox, oy, oz = offsets(rot, src.wheels) if src.offs is None else src.offs
    cx, cy, _ = rotate(rot, vehicle.com)
    com_x, com_y = t[:, 0] + cx, t[:, 1] + cy
    hx = t[:, 0] + ox
    hy = t[:, 1] + oy
    hz = t[:, 2] + oz
    gap = src.gap
    if gap is None:
        gap = hz - vehicle.wheel_radius - src.ground_h
    contact = (gap <= src.d_eps) & ~src.wheel_hole
    forces, stable = src.forces, src.stable
    if forces is None:
        # the touching wheels first (loads.py: the "touching" rule; the drop method gives the
        # paper's own forces)
        forces, stable = support_forces_kn(hx, hy, com_x, com_y, contact,
                                           vehicle.mass * src.gravity,
                                           touching=gap <= TOUCH_TOL)
    return WheelLoads(wheel_position=torch.stack((hx, hy, hz), -1).transpose(0, 1),
                      ground_height=src.ground_h.T, gap=gap.T, contact=contact.T,
                      normal_force=forces.T, stable=stable)
