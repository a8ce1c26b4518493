"""Shared timing helper of the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Median wall time [s] of ``fn()`` over ``repeats`` calls after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
