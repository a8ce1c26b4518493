"""The golden trajectories (see ``tests/golden_cases.py``) are reproduced bit for bit."""

import numpy as np
import pytest

from golden_cases import CASES, FILE, rollout


@pytest.fixture(scope="module")
def golden():
    with np.load(FILE) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("case", CASES)
def test_golden_trajectory(golden, case):
    got = rollout(case)
    for key, val in got.items():
        ref = golden[f"{case}/{key}"]
        assert val.shape == ref.shape, (case, key, val.shape, ref.shape)
        if not np.array_equal(val, ref):
            diff = np.abs(val.astype(np.float64) - ref.astype(np.float64))
            first = np.argwhere(diff > 0)[0]
            pytest.fail(f"{case}/{key} differs from the golden record: first at {first.tolist()},"
                        f" max |diff| {diff.max():.3g}")
