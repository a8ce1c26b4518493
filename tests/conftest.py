"""Test-session setup that must run before torch is imported.

torch picks its vectorised CPU kernels (SLEEF ``atan2``, ``exp``, ...) by the processor's widest
instruction set, and the AVX-512 and AVX2 kernels differ in the last bit of some results. The
golden trajectories (``tests/golden_cases.py``) are recorded with the AVX2 kernels, so the tests
pin them: the records then hold bit for bit on AVX2 and AVX-512 machines alike. A user's own
setting of ``ATEN_CPU_CAPABILITY`` is kept.
"""

import os
import sys
from pathlib import Path

# the shared helpers (golden_cases, ground_util) import from any test folder
sys.path.insert(0, str(Path(__file__).parent))

if "torch" not in sys.modules:  # torch reads the variable once, when it loads
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
