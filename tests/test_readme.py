"""The README's and the documentation's code examples run as written, each on its own: every
python block runs in a fresh interpreter (in an empty folder, with a time budget), so a block
pasted alone into a new session works. A block that builds on an earlier one says so on its
first line, ``# continues: NAME``, where the earlier block's first line is ``# example: NAME``
(same page); the test runs the two (or the chain) together, as a reader would."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "docs" / "guides").glob("*.md"))]
#: seconds a block (with the blocks it continues) may take
BUDGET_S = 240

NAME = re.compile(r"#\s*example:\s*([\w-]+)\s*$")
CONTINUES = re.compile(r"#\s*continues:\s*([\w-]+)\s*$")


def blocks(text: str) -> list[str]:
    """The python blocks of a page's markdown text, in order."""
    return re.findall(r"```python\n(.*?)```", text, re.S)


def programs(text: str, where: str = "page") -> list[str]:
    """Each block of ``text`` as the program it runs as: itself, after the blocks it continues.
    ValueError for a continuation of a name no earlier block of the page has."""
    named, out = {}, []
    for i, block in enumerate(blocks(text)):
        first = block.split("\n", 1)[0].strip()
        program = block
        if m := CONTINUES.match(first):
            if m.group(1) not in named:
                raise ValueError(f"{where} block {i} continues {m.group(1)!r}, which no earlier "
                                 f"block names (# example: {m.group(1)}); named: "
                                 f"{sorted(named)}")
            program = named[m.group(1)] + "\n" + block
        if m := NAME.match(first):
            named[m.group(1)] = program
        out.append(program)
    return out


def run_alone(program: str, cwd: Path, budget_s: float = BUDGET_S):
    """Run ``program`` in a fresh interpreter in ``cwd``; the CompletedProcess."""
    return subprocess.run([sys.executable, "-c", program], cwd=cwd, capture_output=True,
                          text=True, timeout=budget_s)


CASES = [(page, i) for page in PAGES for i in range(len(blocks(page.read_text())))]


def test_readme_has_examples_and_is_short():
    assert len(blocks(README.read_text())) >= 1
    lines = README.read_text().count("\n")
    assert lines <= 250, f"README.md has {lines} lines; the front door keeps to 250"


@pytest.mark.parametrize("page,i", CASES, ids=[f"{p.name}:{i}" for p, i in CASES])
def test_each_example_runs_alone(page, i, tmp_path):
    program = programs(page.read_text(), page.name)[i]
    r = run_alone(program, tmp_path)
    assert r.returncode == 0, (f"{page.relative_to(ROOT)} python block {i}, run alone, failed:"
                               f"\n{r.stderr[-2000:]}")


def test_a_block_that_leans_on_an_earlier_one_fails_alone(tmp_path):
    """The check itself: a planted block that uses a name from the block before it fails when
    run alone, and passes once it says it continues that block."""
    page = ("```python\nx = 41\n```\n\ntext\n\n```python\nprint(x + 1)\n```\n")
    assert run_alone(programs(page)[1], tmp_path).returncode != 0
    named = page.replace("x = 41", "# example: answer\nx = 41").replace(
        "print(x", "# continues: answer\nprint(x")
    r = run_alone(programs(named)[1], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "42"
    with pytest.raises(ValueError, match="continues 'nothing'"):
        programs(named.replace("continues: answer", "continues: nothing"))
