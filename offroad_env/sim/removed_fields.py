"""The ``SimConfig`` fields removed in 0.2.0 (``ackermann``, ``skid``, ``substeps``,
``integrator``): each vehicle model's parameters are its ``dynamics_params``. A config given one
is refused with what to give instead, naming the model's parameters, as the command line's
``--substeps`` and ``--integrator`` already were; run specs that recorded ``integrator`` or
``substeps`` still load (:mod:`train.common.envconfig` puts them in ``dynamics_params``)."""

from __future__ import annotations

import dataclasses

from offroad_env.physics.models import model_class

__all__ = ["REMOVED_FIELDS", "RemovedFieldError", "removed_fields_message"]

#: the removed fields
REMOVED_FIELDS = ("ackermann", "skid", "substeps", "integrator")


class RemovedFieldError(TypeError, ValueError):
    """A ``SimConfig`` field that was removed (:data:`REMOVED_FIELDS`): a wrong keyword (a
    TypeError, as Python's own) and a value that is no longer accepted (a ValueError, as every
    other refusal of the config)."""


def removed_fields_message(dynamics: str, removed: list[str]) -> str:
    """What to give instead of the removed fields ``removed``, naming model ``dynamics``'s
    parameters (its ``Params`` type and their names)."""
    try:
        params = model_class(dynamics).Params
    except ValueError as exc:
        return f"SimConfig({', '.join(k + '=' for k in removed)}...): {exc}"
    have = [] if params is None else [f.name for f in dataclasses.fields(params)]
    where = (f"its parameters are dynamics_params={params.__name__}(...) with fields {have}"
             if params is not None else "it takes no parameters")
    parts = []
    for k in removed:
        if k in ("ackermann", "skid"):
            kind = {"ackermann": "AckermannParams", "skid": "SkidSteerParams"}[k]
            parts.append(f"{k}= (a {kind}) is dynamics_params=, for the model that reads it")
        elif k in have:
            parts.append(f"{k}= is dynamics_params={params.__name__}({k}=...)")
        else:
            parts.append(f"the {dynamics} model has no parameter {k!r}")
    return (f"SimConfig has no field {', '.join(map(repr, removed))} (removed in 0.2.0): "
            + "; ".join(parts) + f". The {dynamics} model: {where}")
