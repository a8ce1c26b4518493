"""The README's code examples run as written (so the README stays true)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_examples_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example writes map.png; its data ship with the package
    ns = {}
    for i, block in enumerate(BLOCKS):
        try:
            exec(compile(block, f"README.md block {i}", "exec"), ns)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"README python block {i} failed: {type(exc).__name__}: {exc}")
