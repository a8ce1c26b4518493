"""A refactor's check, bit for bit, on one machine: record every golden case's whole trajectory
(``tests/golden_cases.py``: 300 steps, observations, rewards, end reasons and every discrete
state array) before a change, and check it after the change on the same machine.

    python benchmarks/golden.py --record /tmp/before.npz     # before the change
    python benchmarks/golden.py --check /tmp/before.npz      # after it: exit 1 on a difference
    python benchmarks/golden.py --check FILE --case skid_rigid

A file from another machine is not expected to match (``tests/test_golden.py`` says why); the
default tests compare across machines within a measured envelope instead. The same kernel
pins as the tests' (``MKL_CBWR=COMPATIBLE``, ``ATEN_CPU_CAPABILITY=avx2``) are set unless the
environment sets them; the file records which were in force and ``--check`` refuses others.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import golden_cases  # noqa: E402  (sets the kernel pins before torch loads)
import numpy as np  # noqa: E402

PINS = ("ATEN_CPU_CAPABILITY", "MKL_CBWR")


def _pins() -> str:
    return " ".join(f"{k}={os.environ.get(k, '')}" for k in PINS)


def record(path: Path, cases) -> None:
    arrays = {"pins": np.array(_pins())}
    for case in cases:
        for k, v in golden_cases.rollout(case).items():
            arrays[f"{case}|{k}"] = v
        print(f"recorded {case}", flush=True)
    np.savez_compressed(path, **arrays)
    print(f"{len(cases)} case(s) to {path} ({_pins()})")


def check(path: Path, cases) -> int:
    with np.load(path) as f:
        stored = {k: f[k] for k in f.files}
    pins = str(stored.pop("pins"))
    if pins != _pins():
        raise SystemExit(f"{path} was recorded with {pins}; this run has {_pins()}: set the "
                         "same")
    bad = 0
    for case in cases:
        keys = [k for k in stored if k.split("|", 1)[0] == case]
        if not keys:
            raise SystemExit(f"{path} has no record of {case!r}")
        got = golden_cases.rollout(case)
        diffs = []
        for k in keys:
            name = k.split("|", 1)[1]
            ref, val = stored[k], got.get(name)
            if val is None or val.shape != ref.shape:
                diffs.append(f"{name}: shape {None if val is None else val.shape} "
                             f"against {ref.shape}")
            else:
                same = val == ref
                if val.dtype.kind == "f":
                    same |= np.isnan(val) & np.isnan(ref)
                if not same.all():
                    d = np.abs(val.astype(np.float64) - ref.astype(np.float64))
                    diffs.append(f"{name}: first at {np.argwhere(~same)[0].tolist()}, "
                                 f"max |diff| {np.nanmax(np.where(same, 0.0, d)):.3g}")
        print(f"{case}: {'identical' if not diffs else 'DIFFERS'}")
        for line in diffs:
            print(f"    {line}")
        bad += bool(diffs)
    print(f"{len(cases) - bad} of {len(cases)} case(s) identical bit for bit")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", type=Path, metavar="FILE")
    g.add_argument("--check", type=Path, metavar="FILE")
    ap.add_argument("--case", action="append", choices=golden_cases.CASES,
                    help="only this case (repeatable; default: all)")
    args = ap.parse_args(argv)
    cases = tuple(args.case or golden_cases.CASES)
    if args.record:
        record(args.record, cases)
        return 0
    return check(args.check, cases)


if __name__ == "__main__":
    sys.exit(main())
