"""Per-environment counter-based random numbers, batched and device-independent.

Each environment has a 64-bit key and a counter. Draw ``j`` of call ``c`` is
``splitmix64(key + golden * (c * 64 + j))``: a stream per environment that depends on its key
alone, so environment i of a vector env equals a single env with the same key whatever the
number of environments, with no Python loop and no host sync. An int seed ``s`` gives
sub-environment i the key of seed ``s + i`` (Gymnasium's convention), see
:func:`keys_from_seeds`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["keys_from_seeds", "random_keys", "uniform", "normal", "MAX_DRAWS"]

MAX_DRAWS = 64  #: draws per call (the counter advances by one per call)
_GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
_M1 = -4658895280553007687      # 0xBF58476D1CE4E5B9
_M2 = -7723592293110705685      # 0x94D049BB133111EB


def keys_from_seeds(seeds, device=None) -> torch.Tensor:
    """``(N,)`` int64 keys of integer seeds: ``splitmix64(seed)``, batched (no Python loop, so
    an int seed for 10^5 sub-environments is instant). The same seed gives the same key in a
    single env and in a vector env."""
    s = torch.as_tensor(seeds, dtype=torch.int64, device=device).reshape(-1)
    return _splitmix64(s * _GOLDEN + 0x632BE59BD9B4E019)


def random_keys(gen: np.random.Generator, n: int, device=None) -> torch.Tensor:
    """``(n,)`` keys drawn from a numpy Generator (unseeded resets)."""
    return torch.as_tensor(gen.integers(-2**63, 2**63 - 1, size=n, dtype=np.int64),
                           device=device)


def _srl(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's >> is arithmetic)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _splitmix64(z: torch.Tensor) -> torch.Tensor:
    z = (z ^ _srl(z, 30)) * _M1
    z = (z ^ _srl(z, 27)) * _M2
    return z ^ _srl(z, 31)


def uniform(keys: torch.Tensor, counters: torch.Tensor, n: int, dtype=torch.float32
            ) -> torch.Tensor:
    """``(N, n)`` uniforms in [0, 1) for call ``counters`` of each key (int64 ``(N,)`` each)."""
    if n > MAX_DRAWS:
        raise ValueError(f"at most {MAX_DRAWS} draws per call, asked for {n}")
    j = torch.arange(n, dtype=torch.int64, device=keys.device)
    z = keys.unsqueeze(1) + _GOLDEN * (counters.unsqueeze(1) * MAX_DRAWS + j + 1)
    bits = _srl(_splitmix64(z), 11)  # 53 random bits
    return (bits.to(torch.float64) * (1.0 / 2**53)).to(dtype)


def normal(keys: torch.Tensor, counters: torch.Tensor, n: int, dtype=torch.float32
           ) -> torch.Tensor:
    """``(N, n)`` standard normals (Box-Muller on ``2 n`` uniforms)."""
    u = uniform(keys, counters, 2 * n, torch.float64)
    r = torch.sqrt(-2.0 * torch.log1p(-u[:, :n]))
    return (r * torch.cos(2 * math.pi * u[:, n:])).to(dtype)
