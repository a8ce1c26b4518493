"""Test-session setup that must run before torch is imported.

The kernels: torch picks its vectorised CPU kernels (SLEEF ``atan2``, ``pow``, reductions) by
the processor's widest instruction set, and routes ``sqrt``, ``atan``, ``exp``, ``log``,
``tanh`` and matrix products through MKL, which picks its own code path by the processor. The
tests pin both, ``ATEN_CPU_CAPABILITY=avx2`` and ``MKL_CBWR=COMPATIBLE``, so that x86-64
machines compute alike as far as they can; the golden trajectories hold across the rest within
a measured envelope (``tests/test_golden.py`` says what differs and how it was measured). A
user's own setting of either variable is kept (``ATEN_CPU_CAPABILITY=default make test`` runs
the suite on the scalar kernels).
"""

import os
import sys
from pathlib import Path

# the shared helpers (golden_cases, ground_util) import from any test folder
sys.path.insert(0, str(Path(__file__).parent))

if "torch" not in sys.modules:  # torch and MKL read the variables once, when they load
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    os.environ.setdefault("MKL_CBWR", "COMPATIBLE")

# the disk cache of large level stacks (terrain.cache): the session's own folder, so the tests
# neither read a user's entries nor leave files in their home
if "OFFROAD_ENV_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["OFFROAD_ENV_CACHE"] = tempfile.mkdtemp(prefix="offroad_env_cache_")
    atexit.register(shutil.rmtree, os.environ["OFFROAD_ENV_CACHE"], True)
