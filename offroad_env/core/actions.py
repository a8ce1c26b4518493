"""The one action check: an ``(N, A)`` action is validated where it enters the simulator (torch
tensors, numpy arrays or nested lists of real numbers), clipped to [-1, 1] and turned into the
simulator's dtype; non-finite rows raise (``nan_action="raise"``) or are zeroed and flagged
(``"zero"``)."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["ActionCheck"]

_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_NP_DTYPES = {torch.float32: np.float32, torch.float64: np.float64}


class ActionCheck:
    """Validates the actions of ``n`` environments of ``action_dim`` components.

    Calling it with an action returns ``(clipped action (n, action_dim) in dtype on device,
    bad-row mask (n,) bool)``; ValueError on another device, shape or dtype, and
    (``nan_action="raise"``) on a non-finite value or one out of the dtype's range, naming the
    environments."""

    def __init__(self, n: int, action_dim: int, device, dtype, nan_action: str):
        self.n, self.dim, self.dtype, self.nan_action = n, action_dim, dtype, nan_action
        self.device = torch.device(device)
        #: the all-good mask of the numpy fast path (one tensor, not one per step)
        self._no_bad = torch.zeros(n, dtype=torch.bool, device=self.device)

    def expected(self) -> str:
        return f"{self.n} x {self.dim} finite numbers in [-1, 1]"

    def __call__(self, action) -> tuple[torch.Tensor, torch.Tensor]:
        if action is None:
            raise ValueError(f"action is None; expected {self.expected()}")
        if isinstance(action, torch.Tensor):
            return self._check_tensor(action)
        try:
            raw = np.asarray(action)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"action {action!r} is not a numeric array ({exc}); expected "
                             f"{self.expected()}") from None
        if raw.dtype.kind not in "fiu":
            raise ValueError(f"action {action!r} is not an array of real numbers (dtype "
                             f"{raw.dtype}); expected {self.expected()}")
        if raw.shape != (self.n, self.dim):
            raise ValueError(f"action must have shape {(self.n, self.dim)}, got {raw.shape}")
        if self.device.type == "cpu":  # the common case, checked in numpy (no tensor round trip)
            with np.errstate(over="ignore"):
                a = raw.astype(_NP_DTYPES[self.dtype])
            if np.isfinite(a).all():
                return torch.from_numpy(np.clip(a, -1.0, 1.0)), self._no_bad
        return self._check_tensor(torch.from_numpy(np.ascontiguousarray(raw)).to(self.device))

    def _check_tensor(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if a.requires_grad:  # a policy's output: keep no autograd graph alive in the env
            a = a.detach()
        if a.is_complex() or a.dtype == torch.bool or not (a.is_floating_point()
                                                           or a.dtype in _INT_DTYPES):
            raise ValueError(f"action dtype {a.dtype} is not accepted; actions are real numbers "
                             "(float or int)")
        dev = self.device
        if a.device.type != dev.type or (dev.index is not None and a.device.index != dev.index):
            raise ValueError(f"action is on {a.device}, the environment on {dev}")
        if a.shape != (self.n, self.dim):
            raise ValueError(f"action must have shape {(self.n, self.dim)}, got "
                             f"{tuple(a.shape)}")
        given_finite = torch.isfinite(a).all(1)
        a = a.to(self.dtype)
        bad = ~torch.isfinite(a).all(1)
        if self.nan_action == "raise":
            if bool(bad.any()):
                idx = torch.nonzero(bad).flatten().tolist()
                what = ("non-finite (NaN or inf)" if not bool(given_finite[bad].all())
                        else f"out of {self.dtype} range")
                raise ValueError(f"{what} action in environment(s) {idx[:20]}"
                                 f"{' ...' if len(idx) > 20 else ''}; actions must be finite "
                                 "numbers in [-1, 1] (or set nan_action='zero')")
        else:
            a = torch.where(bad.unsqueeze(1), torch.zeros_like(a), a)
        return a.clamp(-1.0, 1.0), bad
