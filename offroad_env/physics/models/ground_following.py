"""Kinematic and planar models placed on the terrain by ground following.

:class:`GroundFollowing` is the kind of vehicle model whose step moves the planar pose
``(x, y, yaw)`` (:meth:`GroundFollowing.planar_step`, one per model) and then puts the body on
the height map with ``cfg.ground``: ``"four_wheel"`` (the seed's method) or ``"rigid_contact"``
(the rigid rest of K wheels, warm-started at the last attitude). Unicycle, Ackermann and
skid-steer are of this kind (:mod:`.unicycle`, :mod:`.ackermann`, :mod:`.skid_steer`).
"""

from __future__ import annotations

import abc

import torch

from ..ground import GroundContact, place
from .base import Drive, ModelStep, VehicleModel

__all__ = ["GroundFollowing", "WARM_PASSES", "no_slip"]

#: plane passes of the rigid placement in a step, warm-started at the last attitude. On rough
#: ground 94 % of poses reach the fixed point in 4, 98.4 % in 8, 99.3 % in 16 (float32); where
#: one has not (``GroundContact.settled``), its support is not judged that step (the tilt
#: limits still are) and the next step's warm start goes on from it. 4, not 8: a compiled step
#: runs every pass on every pose (skid-steer + rigid at N = 4096: 308 k env-steps/s with 4,
#: 204 k with 8), and the eager step must run the same passes to agree with it.
WARM_PASSES = 4


def no_slip(state, num_wheels: int) -> Drive:
    """The :class:`Drive` of a kinematic model: no slip, no torques."""
    return Drive(torch.zeros((state.x.shape[0], num_wheels), dtype=state.x.dtype,
                             device=state.x.device), None, None)


class GroundFollowing(VehicleModel):
    """A planar model placed by ground following (``cfg.ground``, ``cfg.d_eps``).

    Subclasses define :meth:`planar_step` and :meth:`body_velocity`, and set ``needs_loads``
    where their step reads the last placement's wheel loads (skid-steer traction)."""

    #: the planar step reads ``state.contact.normal_force`` (loads computed every step)
    needs_loads = False

    def __init__(self, cfg, vehicle):
        super().__init__(cfg, vehicle)
        self.rigid = cfg.ground == "rigid_contact"
        self.support_from_loads = self.rigid

    @abc.abstractmethod
    def planar_step(self, state, vehicle, params, action: torch.Tensor) -> Drive:
        """Move ``state.x, y, yaw`` (and the model's fields) one step of ``cfg.dt``."""

    def _place(self, state, vehicle, maps, idx: torch.Tensor | None, warm: bool) -> GroundContact:
        cfg = self.cfg
        kw = {"d_eps": cfg.d_eps, "gravity": cfg.gravity, "loads": False}
        if self.rigid and warm and state.contact is not None:
            kw.update(init_roll=state.contact.roll, init_pitch=state.contact.pitch,
                      max_iter=WARM_PASSES)
        if idx is None:
            return place(cfg.ground, vehicle, maps, state.x, state.y, state.yaw,
                         state.map_index, **kw)
        return place(cfg.ground, vehicle, maps, state.x[idx], state.y[idx], state.yaw[idx],
                     state.map_index[idx], **kw)

    def advance(self, state, vehicle, params, maps, action, want_loads) -> ModelStep:
        drive = self.planar_step(state, vehicle, params, action)
        gc = self._place(state, vehicle, maps, None, warm=True)
        if self.needs_loads or self.rigid or want_loads:
            gc = gc.with_loads()  # the next step's wheel loads / this step's stability
        return ModelStep(gc, drive, self.body_velocity(state))

    def place(self, state, vehicle, maps, idx):
        return self._place(state, vehicle, maps, idx, warm=False).with_loads()

    def lost_support(self, contact):
        # judged on a rest only: a pose the step's passes cut short is not one (its loads are
        # those of a passing attitude; the next step goes on from it)
        return ~(contact.stable | ~contact.settled) if self.rigid else None

    def unrestful(self, contact):
        return ~contact.converged | ~contact.stable if self.rigid else None
