"""Ground following: place a vehicle on a height map, batched over N environments.

The package, one file a room: :mod:`.contact` (the result and its per-wheel loads),
:mod:`.loads` (static wheel loads), :mod:`.four_wheel` (the seed's method), :mod:`.plane` (the
rigid rest found directly) and :mod:`.drop` (the paper's drop, the reference); :mod:`.common`
holds their shared helpers.

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
of the rear-axle frame in the world. Frames and conventions: see :mod:`offroad_env.physics.rotations` and
:mod:`offroad_env.physics.vehicle`. A wheel's contact point is ``wheel_radius`` straight below its hub.

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

import math

import torch

from terrain import HeightMap

from ..constants import GRAVITY
from ..vehicle import Vehicle
from .common import pose_inputs
from .contact import GroundContact, LoadInputs, WheelLoads
from .drop import rigid_drop
from .four_wheel import four_wheel
from .loads import support_forces
from .plane import rigid_plane

__all__ = ["GroundContact", "WheelLoads", "LoadInputs", "four_wheel", "rigid_contact",
           "support_forces", "GRAVITY", "METHODS", "place"]

METHODS = ("four_wheel", "rigid_contact")


def rigid_contact(vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None, *,
                  method: str = "plane", d_eps: float = 0.01, gravity: float = GRAVITY,
                  max_iter: int | None = None, dt: float = 0.02, tol: float | None = None,
                  init_roll=None, init_pitch=None, loads: bool = True) -> GroundContact:
    """Rigid K-wheel vehicle dropped at fixed ``(x, y, yaw)`` to static equilibrium.

    The free coordinates are ``q = (z, roll, pitch)`` of the rear-axle frame; its ``x, y`` stay
    the input. Wheels with a gap ``<= d_eps`` (1 cm in the paper) carry load; forces are the SVD
    pseudo-inverse solution, wheels with negative force are released.

    Args:
        method: ``"plane"`` -- the supporting plane of the contact points under the centre of
            mass, iterated to a fixed point over the sideways shift of the wheels as the body
            tilts (``max_iter`` default 6 in float32, 10 in float64: on rough terrain 99.99 % of
            random cold-started poses converge in float32 in 6); ``"drop"`` -- the paper's
            drop integration with
            ``M q'' = W_f f + W_g G`` and ``f = -A^# b`` (``max_iter`` default 3000, time step
            ``dt`` [s]).
        tol: convergence tolerance (plane: attitude change [rad]; drop: velocity [m/s, rad/s]).
        init_roll, init_pitch: ``(N,)`` start attitude of the plane iteration [rad] (default
            level). A simulator passes the previous step's attitude: fewer iterations, and where
            two rests exist (the wobbly table) the vehicle stays on the side it was on instead
            of flipping between them as rounding changes.
        loads: compute the per-wheel quantities (else :meth:`GroundContact.with_loads` does).

    Returns:
        :class:`GroundContact`; ``converged`` and ``iterations`` report each environment.
    """
    if method not in ("plane", "drop"):
        raise ValueError(f"method must be 'plane' or 'drop', got {method!r}")
    if not (math.isfinite(d_eps) and d_eps >= 0):
        raise ValueError(f"d_eps must be finite and >= 0, got {d_eps}")
    x, y, yaw, map_idx = pose_inputs(terrain, x, y, yaw, map_index)
    if method == "plane":
        return rigid_plane(vehicle, terrain, x, y, yaw, map_idx, d_eps, gravity,
                           (6 if x.dtype == torch.float32 else 10) if max_iter is None
                           else max_iter, tol, init_roll, init_pitch, loads=loads)
    return rigid_drop(vehicle, terrain, x, y, yaw, map_idx, d_eps, gravity,
                      3000 if max_iter is None else max_iter, dt, tol, loads=loads)


def place(method: str, vehicle: Vehicle, terrain: HeightMap, x, y, yaw, map_index=None,
          **kwargs) -> GroundContact:
    """Dispatch by name: ``"four_wheel"`` or ``"rigid_contact"`` (config-driven callers)."""
    if method == "four_wheel":
        return four_wheel(vehicle, terrain, x, y, yaw, map_index, **kwargs)
    if method == "rigid_contact":
        return rigid_contact(vehicle, terrain, x, y, yaw, map_index, **kwargs)
    raise ValueError(f"ground-following method must be one of {METHODS}, got {method!r}")
