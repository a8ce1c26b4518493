"""The ``SimConfig`` fields that held vehicle-model parameters before each model took its own
in ``SimConfig.dynamics_params`` (deprecated; they go in the next minor version).

``ackermann`` (an :class:`~offroad_env.physics.dynamics.AckermannParams`), ``skid`` (a
:class:`~offroad_env.physics.skid.SkidSteerParams`), ``substeps`` (the skid-steer model's) and
``integrator`` (the kinematic models') fold into the model's ``dynamics_params`` with a warning
that names the new form; the skid-steer parameters' ground friction was also the kinematic
models' ground (their tip-over rule), so it becomes their ``mu``. A field that the configured
model never read is dropped with the same warning. Old configs, run configs and checkpoints keep
building the same simulator.
"""

from __future__ import annotations

import dataclasses
import warnings

__all__ = ["LEGACY_FIELDS", "fold_legacy"]

#: the deprecated SimConfig fields
LEGACY_FIELDS = ("ackermann", "skid", "substeps", "integrator")


def fold_legacy(dynamics: str, params, legacy: dict, model_params: type | None):
    """The ``dynamics_params`` of model ``dynamics`` (its ``Params`` type ``model_params``)
    with the deprecated fields ``legacy`` (``{name: value}``, the given ones) folded in;
    ``params``: the ``dynamics_params`` given beside them (ValueError if both set the same
    model's parameters)."""
    from .physics.dynamics import AckermannParams, SkidSteerParams

    for k, cls in (("ackermann", AckermannParams), ("skid", SkidSteerParams)):
        if k in legacy and not isinstance(legacy[k], cls):
            raise ValueError(f"SimConfig.{k} must be a {cls.__name__} (deprecated: give "
                             f"dynamics_params), got {legacy[k]!r}")
    names = ", ".join(f"{k}=" for k in legacy)
    new = model_params.__name__ if model_params is not None else "its dynamics_params"
    warnings.warn(f"SimConfig({names}...) is deprecated: the {dynamics} model's parameters are "
                  f"dynamics_params (a {new}); these fields go in the next minor version",
                  DeprecationWarning, stacklevel=4)
    if model_params is None:
        return params
    fields = {f.name for f in dataclasses.fields(model_params)}
    values = {}
    own = {"ackermann": "ackermann", "skid_steer": "skid"}.get(dynamics)
    if own is not None and legacy.get(own) is not None:
        values.update({k: v for k, v in dataclasses.asdict(legacy[own]).items() if k in fields})
    if dynamics in ("unicycle", "ackermann") and legacy.get("skid") is not None:
        values["mu"] = legacy["skid"].ground_mu  # the kinematic models' ground
    for k in ("substeps", "integrator"):
        if legacy.get(k) is not None and k in fields:
            values[k] = legacy[k]
    if not values:
        return params
    if params is not None:
        raise ValueError(f"SimConfig got dynamics_params={params!r} and the deprecated "
                         f"{names}: give the {dynamics} model's parameters once, in "
                         "dynamics_params")
    return model_params(**values)
