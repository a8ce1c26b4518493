"""The one outcome accumulator of policy rollouts (``evaluate`` and the OffroadBench suite).

:class:`Outcomes` follows M episodes that start together, one per sub-environment, each
counted until its first end: its end reason (a time-out where the rollout stops first), length,
return, mean and largest ``|roll|`` and ``|pitch|``. Tensors on the CPU, float64.
"""

from __future__ import annotations

import torch

from offroad_env.task.task import EndReason

__all__ = ["Outcomes"]


class Outcomes:
    """Per-episode outcomes of ``m`` episodes (module docstring). Call :meth:`add` after every
    step (with that step's end flags) and :meth:`finish` once; ``active`` ``(m,)`` bool marks
    the episodes still running."""

    def __init__(self, m: int):
        f64 = torch.float64
        self.m = m
        self.active = torch.ones(m, dtype=torch.bool)
        self.reason = torch.zeros(m, dtype=torch.int64)
        self.length = torch.zeros(m, dtype=torch.int64)
        self.ret = torch.zeros(m, dtype=f64)
        self.roll_sum, self.pitch_sum = torch.zeros(m, dtype=f64), torch.zeros(m, dtype=f64)
        self.roll_max, self.pitch_max = torch.zeros(m, dtype=f64), torch.zeros(m, dtype=f64)

    def add(self, reward, roll, pitch, done, end_reason) -> torch.Tensor:
        """Count a step of the running episodes: ``reward``, ``roll``, ``pitch`` [rad],
        ``done`` (terminated or truncated) and ``end_reason`` codes, ``(m,)`` each (any device).
        Returns the ``(m,)`` mask of the episodes that counted it (those running before it)."""
        live = self.active
        ar, ap = roll.abs().double().cpu(), pitch.abs().double().cpu()
        self.ret += torch.where(live, reward.double().cpu(), 0.0)
        self.length += live.to(torch.int64)
        self.roll_sum += torch.where(live, ar, 0.0)
        self.pitch_sum += torch.where(live, ap, 0.0)
        self.roll_max = torch.where(live, torch.maximum(self.roll_max, ar), self.roll_max)
        self.pitch_max = torch.where(live, torch.maximum(self.pitch_max, ap), self.pitch_max)
        ended = done.cpu() & live
        self.reason = torch.where(ended, end_reason.cpu(), self.reason)
        self.active = live & ~ended
        return live

    def finish(self) -> None:
        """End the episodes still running as time-outs (the rollout ran out of steps)."""
        self.reason = torch.where(self.active,
                                  torch.full_like(self.reason, int(EndReason.TIME_LIMIT)),
                                  self.reason)
        self.active = torch.zeros_like(self.active)

    def mean_abs_deg(self, key: str) -> torch.Tensor:
        """``(m,)`` mean ``|roll|`` or ``|pitch|`` (``key``) over each episode [deg]."""
        total = self.roll_sum if key == "roll" else self.pitch_sum
        return torch.rad2deg(total / self.length.clamp_min(1))

    def max_abs_deg(self, key: str) -> torch.Tensor:
        """``(m,)`` largest ``|roll|`` or ``|pitch|`` of each episode [deg]."""
        return torch.rad2deg(self.roll_max if key == "roll" else self.pitch_max)
