"""The environment cards: one page per registered id, written from the code at every docs build
(``docs/conf.py`` calls :func:`write_all`), so they cannot go stale.

A card reads the registry (entry points, time limit, kwargs), the env built by ``gym.make``
(spaces, ``obs_layout``, the bounds of each term), the config (the model, the ground, the
vehicle, the task, the reward weights, the fields that differ from ``SimConfig``'s defaults),
the docstrings that define the terms (the observation table of ``offroad_env.task.observations``,
``RewardWeights``, ``TaskConfig``, the tasks of ``make_config``), ``EndReason``, and the
CHANGELOG's lines that name the id. The episode GIF is the gallery's (``docs/gifs.py``).

    python docs/cards.py OUT_DIR      # what the build does, by hand
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent


def _attributes(doc: str, heading: str = "Attributes") -> dict[str, str]:
    """``{name: text}`` of a Google-style ``Attributes:`` section (names joined by commas each
    get the text)."""
    lines = inspect.cleandoc(doc).split("\n")
    out, cur, on = {}, None, False
    for line in lines:
        if line.startswith(heading):
            on = True
            continue
        if not on:
            continue
        m = re.match(r"^    ([\w, ]+): (.*)$", line)
        if m:
            cur = [n.strip() for n in m.group(1).split(",")]
            for n in cur:
                out[n] = m.group(2).strip()
        elif line.startswith("        ") and cur:
            for n in cur:
                out[n] += " " + line.strip()
        elif line.strip() == "":
            continue
        else:
            break
    return out


def _obs_meanings() -> dict[str, str]:
    """``{term: meaning}`` from the table in :mod:`offroad_env.task.observations`' docstring."""
    import offroad_env.task.observations as obs

    rows, cur = {}, None
    for line in obs.__doc__.split("\n"):
        if line.startswith("=") or not line.strip():
            continue
        m = re.match(r"^(\w+)\s{2,}(\S+)\s{2,}(.*?)\s{2,}(.*)$", line)
        if m and m.group(1) != "term":
            cur = m.group(1)
            rows[cur] = m.group(3).strip()
        elif cur and line.startswith(" "):
            text = line.strip()
            part = re.split(r"\s{2,}", text)[0]
            rows[cur] += " " + part
    return rows


def _task_texts() -> dict[str, str]:
    """``{task: sentence}`` from :func:`offroad_env.make_config`'s docstring."""
    from offroad_env import make_config

    doc = " ".join(inspect.cleandoc(make_config.__doc__).split())
    out = {}
    for m in re.finditer(r'``task="(\w+)"``: (.*?)(?=``task="|``config``|$)', doc):
        out[m.group(1)] = m.group(2).strip()
    return out


def _md(text: str) -> str:
    """Docstring markup as Markdown: roles become code, double backticks single."""
    text = re.sub(r":\w+:`~?([^`]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return text.replace("``", "`").replace("|", "\\|")


def _bounds(lo: np.ndarray, hi: np.ndarray) -> str:
    def f(v):
        return "inf" if np.isposinf(v) else "-inf" if np.isneginf(v) else f"{v:.4g}"
    if np.all(lo == lo[0]) and np.all(hi == hi[0]):
        return f"[{f(lo[0])}, {f(hi[0])}]"
    return ", ".join(f"[{f(a)}, {f(b)}]" for a, b in zip(lo[:4], hi[:4])) + (
        ", ..." if lo.size > 4 else "")


def _spec_bullet(head: str) -> str:
    """The ``* <head> ...`` bullet of :mod:`offroad_env.vector_env`'s spec sheet, one line."""
    import offroad_env.vector_env as ve

    m = re.search(rf"^\* {head}(.*?)(?=^\* |\Z)", ve.__doc__, re.S | re.M)
    return head + " " + " ".join(m.group(1).split()) if m else ""


def _history(name: str) -> list[str]:
    """The CHANGELOG's bullets that name ``name`` (a bullet with its continuation lines)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    out, section = [], ""
    for block in re.split(r"\n(?=- |#)", text):
        if block.startswith("#"):  # the release a bullet belongs to
            if block.startswith("## "):
                section = block.split("\n")[0].lstrip("# ").strip()
            continue
        if name in block:
            out.append(f"- *{section}*: " + " ".join(block[2:].split()))
    return out


def card(env_id: str) -> str:
    """The Markdown card of ``env_id``."""
    import gymnasium as gym

    import offroad_env
    from offroad_env.sim.config import SimConfig
    from offroad_env.task.rewards import RewardWeights
    from offroad_env.task.task import REASONS

    spec = gym.spec(env_id)
    env = gym.make(env_id)
    sim = env.unwrapped.sim
    cfg = sim.cfg
    short = env_id.split("/")[-1]
    task = offroad_env.ENV_IDS[env_id]
    lo, hi = env.observation_space.low, env.observation_space.high
    meaning = _obs_meanings()
    rewards = _attributes(RewardWeights.__doc__, "Attributes")
    task_doc = _attributes(offroad_env.TaskConfig.__doc__)
    model_doc = " ".join(inspect.cleandoc(sys.modules[type(sim.model).__module__].__doc__
                                          or "").split("\n\n")[0].split())
    gif = DOCS / "_static" / "gallery" / f"{short}.gif"
    seconds = spec.max_episode_steps * cfg.dt * cfg.action_repeat
    t = cfg.task
    L = [f"# {short}", ""]
    if gif.exists():
        L += [f"![An episode of {short}](../_static/gallery/{short}.gif)", ""]
    L += ["| | |", "|---|---|",
          f"| make | `gym.make(\"{env_id}\")`; batched: `gym.make_vec(\"{env_id}\", num_envs=N, "
          "vectorization_mode=\"vector_entry_point\")` |",
          f"| action space | `Box(-1.0, 1.0, ({env.action_space.shape[0]},), float32)` |",
          f"| observation space | `Box(low, high, ({env.observation_space.shape[0]},), float32)` "
          "(table below) |",
          f"| vehicle, model | `{cfg.vehicle}`, `{cfg.dynamics}` on `{cfg.ground}` ground "
          f"following, dt = {cfg.dt} s |",
          f"| time limit | {spec.max_episode_steps} steps ({seconds:g} s), a truncation |",
          f"| entry points | `{spec.entry_point}`, `{spec.vector_entry_point}` |", "",
          "## Description", "", _md(_task_texts().get(task, "")), "",
          "## Actions", "",
          _md(_spec_bullet("Actions")), "",
          "| component | commands | range |", "|---|---|---|",
          *[f"| `a[{i}]` | {label} | [-1, 1] |"
            for i, label in enumerate(type(sim.model).action_labels)], "",
          f"This id's model, `dynamics=\"{cfg.dynamics}\"`: {_md(model_doc)} Here `max_speed` = "
          f"{cfg.max_speed} m/s, `max_yaw_rate` = {cfg.max_yaw_rate} rad/s, `nan_action` = "
          f"`\"{cfg.nan_action}\"`.", "",
          "## Observations", "",
          "| slice | term | meaning (frame, unit) | bounds |", "|---|---|---|---|"]
    for name, a, b in sim.obs_layout:
        L.append(f"| {a}:{b} | `{name}` | {_md(meaning.get(name, ''))} | "
                 f"{_bounds(lo[a:b], hi[a:b])} |")
    L += ["", "Each term is clipped to its bounds. `env.unwrapped.obs_layout` gives these "
          "slices.", "", "## Rewards", "",
          "The reward is the weighted sum of the terms, each reported in "
          "`info[\"reward/<term>\"]`.", "",
          "| term | weight | what it measures |", "|---|---|---|"]
    for name, w in t.weights.items():
        if w:
            L.append(f"| `{name}` | {w:g} | {_md(rewards.get(name, ''))} |")
    off = [n for n, w in t.weights.items() if not w]
    L += ["", f"Off (weight 0): {', '.join(f'`{n}`' for n in off)}.", "",
          "## Starting state", "",
          f"Every reset starts on a stable rest: the spawn is drawn from the env's own stream "
          f"at least `spawn_margin` = {t.spawn_margin} m inside the map, and drawn again where "
          f"it cannot rest. " + (
              f"The goal lies `goal_distance` = {t.goal_distance[0]:g}-{t.goal_distance[1]:g} m "
              f"away and counts as reached within `goal_radius` = {t.goal_radius} m."
              if t.kind == "nav" else
              f"The command is drawn from `command_speed` = {t.command_speed} m/s and "
              f"`command_yaw_rate` = {t.command_yaw_rate} rad/s."), "",
          "## Episode end", "",
          "`info[\"end_reason\"]` holds the code (`offroad_env.EndReason`).", "",
          "| code | label | ends as |", "|---|---|---|"]
    stuck = t.stuck_time is not None
    for code, label in REASONS.items():
        if code == 0:
            continue
        kind = ("truncated" if label in ("time_limit", "stuck") else "terminated")
        note = ""
        if label == "tip_over":
            rule = _md(task_doc.get("tip_rule", "")).split(". ")[0]
            note = f" (`tip_rule=\"{t.tip_rule}\"`: {rule})"
        if label == "stuck" and not stuck:
            note = " (off: `stuck_time` is None)"
        if label == "goal_reached" and t.kind != "nav":
            note = " (not in this task)"
        L.append(f"| {code} | `{label}` | {kind}{note} |")
    L += ["", "## Arguments", "",
          "Any `SimConfig` field by keyword (`gym.make(id, dynamics=\"rigid_body\", ...)`); a "
          "`TaskConfig` as `task=` replaces only the task. This id sets:", "",
          "| field | value |", "|---|---|"]
    default = SimConfig()
    for f in dataclasses.fields(SimConfig):
        if not f.compare or f.name in ("task",):
            continue
        v = getattr(cfg, f.name)
        if repr(v) != repr(getattr(default, f.name)):
            text = repr(v)
            text = text if len(text) < 160 else text[:157] + "..."
            L.append(f"| `{f.name}` | `{text}` |")
    L += ["", "## Version history", "", f"- v0: registered as `{env_id}`."]
    L += _history(short) or []
    env.close()
    return "\n".join(L) + "\n"


def write_all(out: Path) -> list[Path]:
    """Write a card per registered id and an index into ``out``; returns the pages."""
    import offroad_env

    out.mkdir(parents=True, exist_ok=True)
    pages = []
    rows = ["# Environments", "",
            "One card per registered id, generated from the code at every build.", "",
            "| id | task | model |", "|---|---|---|"]
    texts = _task_texts()
    for env_id, task in offroad_env.ENV_IDS.items():
        short = env_id.split("/")[-1]
        page = out / f"{short}.md"
        text = card(env_id)
        if not page.exists() or page.read_text() != text:
            page.write_text(text)
        pages.append(page)
        first = _md(texts.get(task, "")).split(". ")[0].rstrip(".")
        rows.append(f"| [{short}]({short}.md) | {first} | "
                    f"`{offroad_env.make_config(task).dynamics}` |")
    for stale in set(out.glob("*.md")) - set(pages) - {out / "index.md"}:
        stale.unlink()  # the card of an id no longer registered (an id's old version)
    rows += ["", "```{toctree}", ":hidden:", "",
             *[p.stem for p in pages], "```", ""]
    index = out / "index.md"
    text = "\n".join(rows)
    if not index.exists() or index.read_text() != text:
        index.write_text(text)
    return pages


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for p in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS / "envs"):
        print(p)
