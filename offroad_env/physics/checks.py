"""Parameter checks where parameters enter: the numeric fields of a parameter dataclass, and an
inertia tensor.

:func:`check_numbers` and :func:`check_inertia` raise a ValueError naming the field and its
value. A number here is a finite int or float; a bool is not one.
"""

from __future__ import annotations

import math
from dataclasses import fields

__all__ = ["check_numbers", "check_inertia"]


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_numbers(obj, positive=(), nonneg=(), optional_positive=(), optional_nonneg=()):
    """Check the named fields of the dataclass instance ``obj``, in its field order:
    ``positive`` finite numbers > 0, ``nonneg`` >= 0; the ``optional_`` ones may also be
    None."""
    for f in fields(obj):
        name, v = f.name, getattr(obj, f.name)
        if name in positive and not (_number(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if name in nonneg and not (_number(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if name in optional_positive and v is not None and not (_number(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0 or None, got {v!r}")
        if name in optional_nonneg and v is not None and not (_number(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0 or None, got {v!r}")


def check_inertia(value, name: str = "inertia"):
    """``value`` as a ``(3, 3)`` float64 array, checked: a symmetric positive definite 3 x 3
    matrix [kg m^2] (ValueError naming ``name`` and the value otherwise)."""
    import numpy as np
    try:
        J = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        J = None
    if J is None or J.shape != (3, 3) or not np.isfinite(J).all() or not np.allclose(J, J.T) \
            or np.linalg.eigvalsh(J).min() <= 0:
        raise ValueError(f"{name} must be a symmetric positive definite 3 x 3 matrix [kg m^2], "
                         f"got {value!r}")
    return J
