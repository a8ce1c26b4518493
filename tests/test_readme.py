"""The README's and the guides' code examples run as written (so the front door stays true):
each page's python blocks in order, in one namespace per page."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs" / "guides").glob("*.md"))]


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_readme_has_examples_and_is_short():
    assert len(_blocks(README)) >= 1
    lines = README.read_text().count("\n")
    assert lines <= 250, f"README.md has {lines} lines; the front door keeps to 250"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_examples_run_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example writes map.png; its data ship with the package
    ns = {}
    for i, block in enumerate(_blocks(page)):
        try:
            exec(compile(block, f"{page.name} block {i}", "exec"), ns)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{page.name} python block {i} failed: {type(exc).__name__}: {exc}")
