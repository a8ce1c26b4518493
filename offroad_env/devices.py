"""Where the tensors live: :func:`check_device`, the one check of a device argument."""

from __future__ import annotations

import torch

__all__ = ["check_device"]


def check_device(device) -> torch.device:
    """``device`` as a torch.device; ValueError (naming it and what is accepted) for a name torch
    does not know or an accelerator this machine lacks."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device ({exc}); use 'cpu' or "
                         "'cuda[:i]'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available to this torch "
                         f"({torch.__version__}); use device='cpu'")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} "
                         "CUDA device(s)")
    return dev
