"""The simulator's state: every per-environment tensor a step reads and writes, each declared
once, by the room that owns it.

The simulator's state is the union of the core fields (:data:`CORE_FIELDS`: pose, goal,
command, map, step count, random stream, last action and body velocity), the vehicle model's
(``VehicleModel.fields``), the sensors' (:data:`offroad_env.core.sensors.SENSORS`) and the task's
(:data:`offroad_env.task.task.TASK_FIELDS`), each a :class:`~offroad_env.physics.models.Field`. A
name declared twice is an error.

A step replaces the tensors (it never writes into them), so a shallow :meth:`SimState.copy` is a
snapshot. Rows are merged with :func:`offroad_env.physics.batch.merge` (resets, action-repeat
restores), which keeps each tensor's memory layout.
"""

from __future__ import annotations

import copy

import torch

from offroad_env.physics.batch import merge, merge_rows
from offroad_env.physics.models import Field

__all__ = ["SimState", "CORE_FIELDS", "STREAM_FIELDS", "join_fields", "wheel_ruts"]

#: fields that continue across episodes (the per-env random stream); a reset keeps them
STREAM_FIELDS = ("keys", "counters")

#: the fields every simulator has. ``(N,)`` floats unless noted; frames in the suffixes: ``_w``
#: world (the simulation frame), ``_b`` body (base_link axes).
#:
#: * ``x, y, yaw``: planar pose of the rear-axle frame [m, m, rad] (yaw raw, unwrapped);
#: * ``goal_w`` ``(N, 2)`` goal [m]; ``command`` ``(N, 2)`` commanded speed [m/s] and yaw rate
#:   [rad/s] (velocity task);
#: * ``prev_action`` ``(N, A)``: the last clipped action;
#: * ``vel_b`` ``(N, 3)``: forward, left speed [m/s] and yaw rate [rad/s] after the last step,
#:   from the vehicle model (0 at a reset);
#: * ``keys, counters``: int64, each environment's random stream (:mod:`offroad_env.core.rng`);
#: * ``map_index``: int64, the map each environment drives on; ``steps``: int64, steps in the
#:   episode;
#: * ``wheel_slip`` ``(N, K)``: each wheel's slip ratio in the last step (the model's
#:   ``Drive.kappa``: 0 for kinematic models; > 0 driving, < 0 braking).
CORE_FIELDS = {
    "x": Field(), "y": Field(), "yaw": Field(),
    "goal_w": Field((2,)), "command": Field((2,)), "prev_action": Field(("A",)),
    "vel_b": Field((3,)),
    "keys": Field(kind="int64", episodic=False), "counters": Field(kind="int64", episodic=False),
    "map_index": Field(kind="int64"), "steps": Field(kind="int64"),
    "wheel_slip": Field(("K",)),
}


def wheel_ruts(state) -> torch.Tensor:
    """``(N, K)`` each wheel's rut depth on soil [m]: the physical model's ``wheel_sinkage``,
    zeros for a model without one."""
    rut = getattr(state, "wheel_sinkage", None)
    return torch.zeros_like(state.wheel_slip) if rut is None else rut


def join_fields(*groups: tuple[str, dict[str, Field]]) -> dict[str, Field]:
    """One field table from ``(owner, fields)`` groups; ValueError naming both owners of a
    name declared twice."""
    out: dict[str, Field] = {}
    owner: dict[str, str] = {}
    for who, fields in groups:
        for name, f in fields.items():
            if name in out or name == "contact":
                raise ValueError(f"state field {name!r} of {who} is already declared by "
                                 f"{owner.get(name, 'the state (the placement)')}")
            out[name], owner[name] = f, who
    return out


class SimState:
    """N environments' state: one attribute per declared field (see the module docstring),
    plus ``contact``, the last ground placement (None before the first reset).

    Build it with :meth:`zeros`; ``fields`` is the field table it was built from.
    """

    def __init__(self, fields: dict[str, Field], tensors: dict[str, torch.Tensor],
                 contact=None):
        self.fields = fields
        for name in fields:
            setattr(self, name, tensors[name])
        self.contact = contact

    @classmethod
    def zeros(cls, n: int, num_wheels: int, action_dim: int, dtype=torch.float32,
              device=None, fields: dict[str, Field] | None = None) -> "SimState":
        """The state before the first reset (zeros, identity rotations, no contact) of the
        ``fields`` (default: :data:`CORE_FIELDS`)."""
        fields = CORE_FIELDS if fields is None else fields
        return cls(fields, {name: f.zeros(n, num_wheels, action_dim, dtype, device)
                            for name, f in fields.items()})

    def copy(self) -> "SimState":
        """A shallow copy: a snapshot, as steps replace tensors instead of writing into them."""
        return copy.copy(self)

    def rows(self, idx: torch.Tensor) -> "SimState":
        """The rows ``idx`` ``(M,)`` as the state of M environments (copies of those rows; the
        placement too)."""
        return SimState(self.fields, {name: getattr(self, name)[idx] for name in self.fields},
                        None if self.contact is None else self.contact[idx])

    def put(self, mask: torch.Tensor, idx: torch.Tensor | None = None, **rows) -> None:
        """Replace rows of the named fields: the rows ``idx`` ``(M,)`` (then each value holds
        M rows), or else those where ``mask`` ``(N,)`` is set (values hold N rows)."""
        for name, value in rows.items():
            setattr(self, name, merge(getattr(self, name), value, mask, idx))

    def restart(self, mask: torch.Tensor, idx: torch.Tensor | None = None, later=(),
                **rows) -> None:
        """Start new episodes in some rows (as :meth:`put`): the given fields take ``rows``;
        every other episodic field restarts at zero, except the ``later`` ones (set by the
        caller afterwards); the random streams and ``contact`` are kept."""
        m = mask.shape[0] if idx is None else idx.shape[0]
        for name, f in self.fields.items():
            if not f.episodic or name in later:
                continue
            old = getattr(self, name)
            new = rows[name] if name in rows else old.new_zeros((m,) + old.shape[1:])
            setattr(self, name, merge_rows(old, new, mask, idx))

    def restore(self, mask: torch.Tensor, snapshot: "SimState") -> None:
        """Put the masked rows back to ``snapshot`` (every field and the placement)."""
        for name in (*self.fields, "contact"):
            setattr(self, name, merge(getattr(self, name), getattr(snapshot, name), mask))
