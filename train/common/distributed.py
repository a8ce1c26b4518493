"""Data-parallel training across processes with torch.distributed (the process group that
``torchrun`` sets up), or a single process when there is none.

Each rank steps its own slice of environments with its own seeds; after each backward pass the
gradients are averaged across ranks (an explicit all-reduce, as ``DistributedDataParallel``
does), so every rank takes the same optimizer step and the parameters stay identical (checked at
the end). Observation normalization merges the batch moments of every rank; episode statistics
are gathered so the log counts every rank's episodes; early stopping and the time limit are
decided together. Rank 0 alone writes the run folder. Backend: ``gloo`` on the CPU, ``nccl``
with CUDA (one GPU per rank, ``LOCAL_RANK``).
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

__all__ = ["Dist", "rank_seed"]


def rank_seed(seed: int, rank: int, num_envs: int, world: int, iteration: int = 0) -> int:
    """The env seed of ``rank`` (its sub-env i is seeded ``rank_seed + i``): ``seed + rank *
    num_envs``, moved on by ``iteration * num_envs * world`` when a run resumes, so no two
    ranks, and no resumed run, share an env stream."""
    return seed + rank * num_envs + iteration * num_envs * world


class Dist:
    """The ranks of this run: ``world`` processes, this one ``rank`` (``main`` is rank 0)."""

    def __init__(self, device: str = "cpu"):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.active = self.world > 1
        self.device = str(device)
        if self.active:
            cuda = torch.device(device).type == "cuda"
            if cuda:
                torch.cuda.set_device(self.local_rank)
                self.device = f"cuda:{self.local_rank}"
            if not dist.is_initialized():
                dist.init_process_group("nccl" if cuda else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def average_gradients(self, params) -> None:
        """Average the ``.grad`` of ``params`` across ranks (one flat all-reduce)."""
        if not self.active:
            return
        grads = [p.grad for p in params if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= self.world
        i = 0
        for g in grads:
            g.copy_(flat[i:i + g.numel()].view_as(g))
            i += g.numel()

    def mean(self, value: float) -> float:
        """The mean of a float across ranks."""
        if not self.active:
            return float(value)
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return float(t) / self.world

    def any(self, flag: bool) -> bool:
        """True on every rank where it is True on some rank."""
        if not self.active:
            return bool(flag)
        t = torch.tensor([1 if flag else 0], dtype=torch.int64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t)

    def gather(self, items: list) -> list:
        """Every rank's ``items``, concatenated in rank order (on every rank)."""
        if not self.active:
            return list(items)
        out = [None] * self.world
        dist.all_gather_object(out, list(items))
        return [x for part in out for x in part]

    def batch_moments(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """``(mean, variance, count)`` over the rows of every rank's ``(B, D)`` batch."""
        x = x.reshape(-1, x.shape[-1]).double()
        n = x.shape[0]
        if not self.active:
            return x.mean(0), x.var(0, unbiased=False), n
        s = torch.cat((x.sum(0), x.square().sum(0), torch.tensor([float(n)], dtype=x.dtype,
                                                                    device=x.device)))
        dist.all_reduce(s)
        d = x.shape[1]
        total = s[-1]
        mean = s[:d] / total
        return mean, (s[d:2 * d] / total - mean.square()).clamp_min(0.0), int(total)

    def check_same(self, params) -> None:
        """Raise if the parameters differ across ranks (they must, after averaged steps)."""
        if not self.active:
            return
        flat = torch.cat([p.detach().reshape(-1).double() for p in params])
        lo, hi = flat.clone(), flat.clone()
        dist.all_reduce(lo, op=dist.ReduceOp.MIN)
        dist.all_reduce(hi, op=dist.ReduceOp.MAX)
        if not torch.equal(lo, hi):
            raise RuntimeError(f"parameters differ across ranks (max {float((hi - lo).max()):.3g})")

    def close(self) -> None:
        """Leave the process group, after every rank is done with it: a rank that destroys
        its gloo group while another still sends on it aborts ('terminate called without an
        active exception', seen in about one run in three)."""
        if self.active and dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
