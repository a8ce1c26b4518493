"""Row operations on batched state: tensors whose first dimension is the environment index N,
and dataclasses of such tensors (the simulator state, a ground-contact result).

One generic merge serves resets (new episodes in some rows), action-repeat restores (ended rows
put back) and ground-contact combinations. It keeps the memory layout of the tensor it writes
into, so a compiled step that produced that tensor sees the same strides afterwards and is not
recompiled.
"""

from __future__ import annotations

import dataclasses

import torch

__all__ = ["merge_rows", "merge", "SHARED"]

#: dataclass field metadata marking a field shared by all rows (never merged, kept from ``base``)
SHARED = {"shared": True}


def merge_rows(base: torch.Tensor, rows: torch.Tensor, mask: torch.Tensor | None = None,
               idx: torch.Tensor | None = None) -> torch.Tensor:
    """``base`` ``(N, ...)`` with some rows replaced: the rows ``idx`` ``(M,)`` by ``rows``
    (``M`` rows), or else the rows where ``mask`` ``(N,)`` is set by the same rows of ``rows``
    (``N`` rows). A new tensor with ``base``'s memory layout (a plain ``where`` or
    ``index_copy`` may return other strides)."""
    if idx is not None:
        return base.clone().index_copy_(0, idx, rows)
    if base.ndim == 2 and base.stride(0) == 1 and not base.is_contiguous():
        # a column-major field ((N, C) view of (C, N) memory): merged as (C, N), without out=
        # (which a compiled step cannot trace for this layout: a graph break)
        return torch.where(mask, rows.T, base.T).contiguous().T
    return torch.where(mask.view((-1,) + (1,) * (base.ndim - 1)), rows, base,
                       out=torch.empty_like(base))


def merge(base, rows, mask: torch.Tensor | None = None, idx: torch.Tensor | None = None):
    """:func:`merge_rows` over a tensor, ``None``, or a dataclass of them (recursively).

    A dataclass may define ``merge_rows(rows, mask, idx)`` to merge itself; otherwise every
    field is merged, except those declared with ``metadata=SHARED`` (kept from ``base``).
    """
    if base is None:
        return None
    if isinstance(base, torch.Tensor):
        return merge_rows(base, rows, mask, idx)
    own = getattr(base, "merge_rows", None)
    if own is not None:
        return own(rows, mask, idx)
    if dataclasses.is_dataclass(base):
        return type(base)(**{
            f.name: getattr(base, f.name) if f.metadata.get("shared")
            else merge(getattr(base, f.name), getattr(rows, f.name), mask, idx)
            for f in dataclasses.fields(base)})
    raise TypeError(f"cannot merge rows of {type(base).__name__}")
