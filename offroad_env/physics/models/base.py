"""The vehicle-model plug-in interface and its registry.

A vehicle model is everything between an action and the vehicle's placement on the terrain: it
declares its own per-environment state fields (:class:`Field`), what its two action components
mean, its parameters, and its step. The simulator keeps no branch per model: it builds
``MODELS[cfg.dynamics]`` and calls it. A new model is one module with one class decorated by
:func:`register_model`; importing the module registers it.

Two kinds fit the interface:

* **kinematic models with ground following** (:class:`~.ground_following.GroundFollowing`): a
  planar step moves ``(x, y, yaw)``, then a ground-following method places the body under it;
* **models that place themselves**: a physical model integrates substeps in which contact and
  motion are one computation, and hands back its pose and contacts the same way.

Either returns a :class:`ModelStep` each step: the placement (a
:class:`~offroad_env.physics.ground.GroundContact`: pose, wheel contact points and normal
forces), the drive (slip, torques, wheel spins), the body velocity and, where the model knows
it, the body acceleration. The sensors and the task read those and nothing model-specific.

Shapes: N environments, K wheels; ``(N, K)`` per-wheel arrays.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import torch

from terrain.materials import soft_materials

__all__ = ["Field", "Drive", "ModelStep", "VehicleModel", "MODELS", "register_model",
           "model_class"]


@dataclass(frozen=True)
class Field:
    """One per-environment state tensor, ``(N,) + shape``.

    Attributes:
        shape: the dimensions after N: ints, ``"K"`` (wheels) or ``"A"`` (action components).
        kind: ``"float"`` (the simulator's dtype) or ``"int64"``.
        episodic: restarts at zero with each episode (False: kept, like the random stream).
        init: the value before the first reset: ``"zeros"`` or ``"eye"`` (3 x 3 identities).
        column_major: an ``(N, C)`` field stored as a transposed view of ``(C, N)`` memory,
            each column contiguous (wheel spins, a body's x, y, z: the layout whose loops
            compiled kernels vectorize over N).
    """

    shape: tuple = ()
    kind: str = "float"
    episodic: bool = True
    init: str = "zeros"
    column_major: bool = False

    def zeros(self, n: int, num_wheels: int, action_dim: int, dtype, device) -> torch.Tensor:
        """The tensor before the first reset."""
        dims = tuple(num_wheels if d == "K" else action_dim if d == "A" else int(d)
                     for d in self.shape)
        dt = torch.int64 if self.kind == "int64" else dtype
        if self.init == "eye":
            return torch.eye(dims[-1], dtype=dt, device=device).expand((n,) + dims).clone()
        if self.column_major:
            return torch.zeros(dims[::-1] + (n,), dtype=dt, device=device).T
        return torch.zeros((n,) + dims, dtype=dt, device=device)


class Drive(NamedTuple):
    """What a model's step reports of its wheels: ``kappa`` ``(N, K)`` slip ratios (zeros for
    kinematic models), ``torque`` and ``wheel_omega`` ``(N, K)`` motor torques [N m] and wheel
    spins [rad/s] (None for kinematic models: no energy)."""

    kappa: torch.Tensor
    torque: torch.Tensor | None
    wheel_omega: torch.Tensor | None


class ModelStep(NamedTuple):
    """A model's step, handed to the sensors and the task.

    Attributes:
        contact: the new placement (:class:`~offroad_env.physics.ground.GroundContact`, in the
            simulation frame): pose, wheel positions, contact mask, gaps; normal forces where
            loads were asked for or the model computes them anyway.
        drive: the wheels (:class:`Drive`).
        vel_b: ``(N, 3)`` forward, left speed [m/s] and yaw rate [rad/s] (body frame).
        accel_b: ``(N, 3)`` body-frame acceleration [m/s^2] where the model integrates it;
            None: the task differences ``vel_b`` (kinematic models).
    """

    contact: object
    drive: Drive
    vel_b: torch.Tensor
    accel_b: torch.Tensor | None = None


class VehicleModel(abc.ABC):
    """The interface every vehicle model implements (see the module docstring).

    Class attributes: ``name`` (the ``SimConfig.dynamics`` value), ``action_labels`` (what the
    two normalised action components in [-1, 1] command), ``fields`` (its state fields by name),
    ``Params`` (the type of ``SimConfig.dynamics_params`` it accepts; None: it takes none),
    ``support_from_loads`` (its support polygon is the wheels that carry load, as for a rigid
    body; False: every wheel not over a hole, as for a body whose wheels all keep the ground),
    ``judges_tip_over``.

    Args:
        cfg: the :class:`~offroad_env.sim.config.SimConfig`.
        vehicle: the nominal (preset) :class:`~offroad_env.physics.vehicle.Vehicle`.
    """

    name: ClassVar[str] = ""
    action_dim: ClassVar[int] = 2
    action_labels: ClassVar[tuple[str, ...]] = ()
    fields: ClassVar[dict[str, Field]] = {}
    Params: ClassVar[type | None] = None
    support_from_loads: bool = False
    #: the model decides tip-over itself (:meth:`lost_support`, a physical event); the task's
    #: static tilt limits and force-angle hold rule then do not end its episodes
    judges_tip_over: ClassVar[bool] = False
    #: the per-environment parameters (:data:`offroad_env.core.params.PARAMS`) the model honours;
    #: None: all of them. ``set_params`` refuses the others at once (:meth:`param_refusals`).
    per_env_params: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, cfg, vehicle):
        self.cfg = cfg
        self.vehicle = vehicle

    @property
    def params(self):
        """The model's parameters: ``cfg.dynamics_params``, or ``Params()`` when unset (built
        once)."""
        p = getattr(self.cfg, "dynamics_params", None)
        if p is None and self.Params is not None:
            p = self.__dict__.get("_default_params")
            if p is None:
                p = self.__dict__["_default_params"] = self.Params()
        return p

    def param_refusals(self, names, maps) -> dict[str, str]:
        """Of the per-environment parameter ``names``, those the model cannot vary on the
        height maps ``maps``, each with the reason."""
        allowed = self.per_env_params
        return {} if allowed is None else {
            n: f"the {self.name} model does not vary it per environment" for n in names
            if n not in allowed}

    @property
    def ground_mu(self) -> float:
        """The ground's friction coefficient the model uses where no per-environment
        ``friction`` is set (the skid-steer parameters' by default)."""
        return self.cfg.ground_mu

    @abc.abstractmethod
    def advance(self, state, vehicle, params, maps, action: torch.Tensor,
                want_loads: bool) -> ModelStep:
        """One step of ``cfg.dt``: move and place the vehicle, writing the pose ``x, y, yaw``
        and the model's own fields of ``state`` (replacing tensors, never writing into them).

        Args:
            state: the simulator's state (``state.contact``: the last placement).
            vehicle: the vehicle the physics uses (per-environment mass properties, a
                :class:`~offroad_env.physics.vehicle.VehicleBatch`, or the preset).
            params: per-environment parameters (``friction``...), or None.
            maps: the height-map stack (simulation frame).
            action: ``(N, A)`` clipped to [-1, 1].
            want_loads: the caller reads the contact's normal forces this step.
        """

    @abc.abstractmethod
    def place(self, state, vehicle, maps, idx: torch.Tensor | None) -> object:
        """The placement, with normal forces, of the rows ``idx`` (None: all N) at their pose
        ``state.x[idx]``... from rest (a reset: no history to start from)."""

    def rest(self, state, contact, maps, params, idx: torch.Tensor | None):
        """The model's own rest of rows just placed at ``contact`` (rows ``idx`` of ``state``,
        None: all), before their first step: ``(fields, placement)``, the rows' model fields
        and their placement there; None (the default): the placement is the model's rest."""
        return None

    def check_maps(self, maps) -> None:
        """ValueError where ``maps`` (simulation frame) hold ground the model cannot drive as
        given. The default refuses soil, or a surface of its own friction, in a material map
        (:mod:`terrain.materials`): only the physical model reads them, and the others would
        drive them as hard ground of the env's friction."""
        soils = soft_materials(maps)
        if soils:
            raise ValueError(f"the terrain's material map holds the soils or surfaces "
                             f"{list(soils)}; dynamics={self.name!r} drives on hard ground of "
                             "one friction only: use dynamics='rigid_body' (or a map without "
                             "them)")

    def lost_support(self, contact) -> torch.Tensor | None:
        """``(N,)`` bool: the placement of a step lost static support (a tip-over); None: the
        model cannot lose it apart from the tilt limits."""
        return None

    def unrestful(self, contact) -> torch.Tensor | None:
        """``(M,)`` bool: a reset's placement is no stable rest (the spawn is drawn again);
        None: every placement within the tilt limits is one."""
        return None

    def unstable(self, contact) -> torch.Tensor | None:
        """``(M,)`` bool: of :meth:`unrestful`'s rows, those that tip or do not settle (not
        those friction alone cannot hold); the default: :meth:`unrestful`."""
        return self.unrestful(contact)

    @abc.abstractmethod
    def body_velocity(self, state) -> torch.Tensor:
        """``(N, 3)`` forward, left speed [m/s] and yaw rate [rad/s] of ``state``."""


#: ``{name: model class}``: every registered vehicle model (``SimConfig.dynamics``)
MODELS: dict[str, type[VehicleModel]] = {}


def register_model(cls: type[VehicleModel]) -> type[VehicleModel]:
    """Class decorator: register ``cls`` under ``cls.name`` (a name may be registered once;
    registering the same class again is a no-op)."""
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name:
        raise ValueError(f"vehicle model {cls!r} needs a non-empty class attribute 'name'")
    if name in MODELS and MODELS[name] is not cls:
        raise ValueError(f"a vehicle model named {name!r} is already registered "
                         f"({MODELS[name].__module__}.{MODELS[name].__qualname__})")
    if len(cls.action_labels) != cls.action_dim:
        raise ValueError(f"vehicle model {name!r}: action_labels {cls.action_labels!r} must "
                         f"name its {cls.action_dim} action components")
    MODELS[name] = cls
    return cls


def model_class(name: str) -> type[VehicleModel]:
    """The registered model ``name``; ValueError naming the registered ones otherwise."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"dynamics must be one of {tuple(MODELS)}, got {name!r}") from None
