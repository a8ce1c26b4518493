"""Parameter checks where parameters enter: the numeric fields of a parameter dataclass.

:func:`check_numbers` raises a ValueError naming the field and its value. A number here is a
finite int or float; a bool is not one.
"""

from __future__ import annotations

import math
from dataclasses import fields

__all__ = ["check_numbers"]


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
