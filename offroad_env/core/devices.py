"""Where the tensors live: :func:`check_device`, the one check of a device argument; and how
many CPU threads torch should use here (:func:`free_cores`, :func:`default_threads`,
:func:`check_threads`)."""

from __future__ import annotations

import functools
import os
import time
import warnings

import torch

__all__ = ["check_device", "free_cores", "default_threads", "check_threads", "configure_threads",
           "compile", "compile_cache_dir", "SINGLE_THREAD_BELOW", "batch_threads",
           "batch_threaded"]

#: torch's thread count when this module was imported (its default: the physical cores)
_TORCH_THREADS = torch.get_num_threads()

#: Eager CPU batches of fewer rows step on one thread (:class:`batch_threads`; 0: never). An
#: eager step is hundreds of small ops; with two threads some ATen kernels open an OpenMP region
#: even on a few hundred elements (``sqrt`` on the physical model's ``(4, N)`` wheel tensors:
#: 190 us a call at N = 32 against 3 us on one thread, with the other core busy), and each
#: region waits for the second thread: the physical model at N = 32 stepped up to 4.5x slower
#: on two threads than on one; two threads pay off from about 4096 rows
#: (``benchmarks/bench_step_rate.py``, BENCHMARKS.md "Small batches"). A compiled step keeps the
#: caller's threads (its fused kernels are not this many small regions).
SINGLE_THREAD_BELOW = 2048


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


def _cpu_times() -> tuple[int, int] | None:
    """``(busy, total)`` jiffies of all CPUs from ``/proc/stat`` (None off Linux)."""
    try:
        with open("/proc/stat") as f:
            vals = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    return sum(vals) - idle, sum(vals)


def free_cores(sample_s: float = 0.2) -> int:
    """The cores this process may use that other work is not using now (at least 1): the cores
    of its affinity mask less the busy ones, measured from ``/proc/stat`` over ``sample_s``
    seconds (elsewhere: less the 1-minute load average)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    a = _cpu_times()
    if a is not None:
        time.sleep(sample_s)
        b = _cpu_times()
        d_total = b[1] - a[1]
        busy = (b[0] - a[0]) / d_total * (os.cpu_count() or n) if d_total > 0 else 0.0
    else:
        try:
            busy = os.getloadavg()[0]
        except OSError:
            busy = 0.0
    return max(1, min(n, n - int(round(busy))))


def default_threads(free: int | None = None) -> int:
    """The CPU threads for a training or evaluation process: torch's default (the physical
    cores) capped at the free cores. Oversubscribed cores make torch's OpenMP threads spin and
    wait on one another: on a 2-core machine with one core busy, 2 threads trained 5-12x slower
    than 1 (docs/benchmarks-history.md, "CPU threads")."""
    free = free_cores() if free is None else free
    return max(1, min(_TORCH_THREADS, free))


def check_threads(free: int | None = None, stacklevel: int = 2) -> bool:
    """Warn (RuntimeWarning) when torch's thread count exceeds the free cores; returns whether
    it does."""
    free = free_cores() if free is None else free
    n = torch.get_num_threads()
    if n > free:
        warnings.warn(f"torch uses {n} CPU threads but only {free} core(s) are free: other "
                      "work shares them and torch's threads will wait on each other (training "
                      f"ran 5-12x slower so); pass --threads {free} or torch.set_num_threads"
                      f"({free})", RuntimeWarning, stacklevel=stacklevel)
        return True
    return False


def configure_threads(requested: int = 0, share: int = 1) -> int:
    """Set torch's CPU threads for a process and return the count: ``requested`` (>= 1) as
    given, with a :func:`check_threads` warning when it exceeds the free cores; 0: the
    :func:`default_threads` of this process's ``share`` of the free cores (``share``: the
    processes started together on this machine, as torchrun's local ranks)."""
    if int(requested) != requested or requested < 0:
        raise ValueError(f"threads must be an int >= 0 (0: choose), got {requested!r}")
    free = free_cores()
    if requested:
        torch.set_num_threads(int(requested))
        check_threads(max(1, free // max(1, share)), stacklevel=3)
        return int(requested)
    n = default_threads(max(1, free // max(1, share)))
    torch.set_num_threads(n)
    return n


class batch_threads:
    """Context: torch's CPU thread count set to 1 while an eager batch of ``rows`` rows is
    computed on ``device``, where ``rows < SINGLE_THREAD_BELOW``, and restored after; otherwise
    (a compiled step, an accelerator, a large batch) nothing changes. Setting the count costs
    well under a microsecond (it keeps OpenMP's pool)."""

    __slots__ = ("_on", "_was")

    def __init__(self, rows: int, device: torch.device | str = "cpu", compiled: bool = False):
        self._on = (torch.device(device).type == "cpu" and not compiled
                    and rows < SINGLE_THREAD_BELOW)
        self._was = 0

    def __enter__(self):
        if self._on:
            self._was = torch.get_num_threads()
            if self._was != 1:
                torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self._on and self._was != 1:
            torch.set_num_threads(self._was)
        return False


def batch_threaded(rows_of):
    """Decorator: the method runs under :class:`batch_threads` of ``rows_of(self) -> (rows,
    device, compiled)``."""
    def wrap(method):
        @functools.wraps(method)
        def run(self, *args, **kwargs):
            with batch_threads(*rows_of(self)):
                return method(self, *args, **kwargs)
        return run
    return wrap


def compile_cache_dir() -> str:
    """Where ``torch.compile`` keeps the compiled code that a later run reuses:
    ``TORCHINDUCTOR_CACHE_DIR``, else inductor's default (its own private helper, where this
    torch has it)."""
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        return cache_dir()
    except Exception:  # a torch without it: the variable, or say so
        return os.environ.get("TORCHINDUCTOR_CACHE_DIR", "inductor's default cache folder")


def compile(fn, graph_breaks: str | None = None, **kwargs):
    """``torch.compile(fn, **kwargs)``, working where ATen was told to run its scalar kernels
    (``ATEN_CPU_CAPABILITY=default``). There inductor still emits vectorised C++ for the
    processor it finds, but builds it against headers without the vector types (``'at::vec' has
    not been declared``, torch 2.13); scalar loops (``cpp.simdlen = 1``) compile. Anywhere
    else nothing changes.

    ``graph_breaks``: where ``fn`` runs code that is not the package's own (a user's declared
    terms), a sentence naming it. Dynamo splits a graph at what it cannot trace and runs that
    part eagerly, silently; the first call then warns (RuntimeWarning) with the breaks' reasons
    as dynamo counts them, where there are any."""
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        import torch._inductor.config as inductor_config
        inductor_config.cpp.simdlen = 1
    compiled = torch.compile(fn, **kwargs)
    if graph_breaks is None:
        return compiled
    first = [True]

    def call(*args, **kw):
        if not first[0]:
            return compiled(*args, **kw)
        first[0] = False
        from torch._dynamo.utils import counters
        before = dict(counters["graph_break"])
        out = compiled(*args, **kw)
        new = {k: v - before.get(k, 0) for k, v in counters["graph_break"].items()
               if v > before.get(k, 0)}
        if new:
            why = "; ".join(" ".join(str(k).split())[:300] for k in list(new)[:3])
            warnings.warn(f"{graph_breaks}: the compiled step breaks its graph "
                          f"{sum(new.values())} time(s), and what follows each break runs "
                          f"eagerly (slower). Dynamo's reasons: {why}", RuntimeWarning,
                          stacklevel=2)
        return out

    return call
