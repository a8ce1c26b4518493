"""The environment cards: one page per registered id, written from the code at every docs build
(``docs/conf.py`` calls :func:`write_all`), so they cannot go stale.

A card reads the registry (entry points, time limit, kwargs), the env built by ``gym.make``
(spaces, ``obs_layout``, the bounds of each term), the config (the model, the ground, the
vehicle, the task, the reward weights, the fields that differ from ``SimConfig``'s defaults),
the docstrings that define the terms (the observation table of ``offroad_env.task.observations``,
``RewardWeights``, ``TaskConfig``, the tasks of ``make_config``), ``EndReason``, and the
tables written here for users (the description, the arguments that matter, the version
history). The episode GIF is made by ``docs/gifs.py``: a zoomed follow view by the env's own
renderer, so the vehicle shows.

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


#: what each task is for, in a user's words (the card's Description)
DESCRIPTIONS = {
    "nav": "The vehicle drives from a random start to a goal 4-12 m away across rolling "
           "Perlin hills, seeing the goal in its body frame, its attitude, velocity and IMU. "
           "The reward pays progress toward the goal and a bonus on reaching it, and charges "
           "tilt, fast rotation, jerky actions, slip and a tip-over or a fall. It is the first "
           "task to train on: a PPO run on a laptop CPU reaches 95 % success in seconds.",
    "velocity": "The vehicle tracks a commanded forward speed and yaw rate, drawn per episode, "
                "on rolling hills: the task of a low-level controller under an upper planner. "
                "The command replaces the goal in the observation, and the reward pays tracking "
                "instead of progress.",
    "nav_rough": "Navigation to a goal over hills, rocks and holes, with a height scan of the "
                 "ground ahead in the observation: the policy must see an obstacle to go round "
                 "it. Falling into a hole or off the map ends the episode at a cost.",
    "traverse": "Cross terrain that tips careless driving: seven terrain families (slopes, "
                "ditches, boulders, steps, rough ground, soft soil, real DEM windows) at ten "
                "levels each, stated in the vehicle's own physical limits. Tip-over follows "
                "the force-angle stability margin, which is observed and rewarded. It is "
                "OffroadBench's task: train on it (`train.ppo --suite`) and score on the "
                "suite's fixed tasks.",
}

#: each id's versions, in what changed for a user (newest first)
HISTORY = [
    "- **v1** (0.2.0): a fall into a hole or off the map's edge is a fatal end that costs what "
    "a tip-over costs (the `fall` reward term, weight -10, `info[\"reward/fall\"]`). "
    "Observations, actions, ends and trajectories are v0's; only the ending step's reward "
    "differs.",
    "- **v0** (0.1): the first version; a fall cost nothing. It stays registered so that "
    "results made on it repeat (Gymnasium warns that it is out of date).",
]

#: the keyword arguments a user reaches for first: (name, what it takes)
ARGUMENTS = [
    ("dynamics", "the vehicle model: `\"unicycle\"`, `\"ackermann\"`, `\"skid_steer\"`, "
                 "`\"rigid_body\"` (the physical model)"),
    ("ground", "how the wheels meet the ground: `\"four_wheel\"` or `\"rigid_contact\"` "
               "(K wheels at static equilibrium, with loads)"),
    ("vehicle", "a preset name or a URDF path"),
    ("terrain", "a generator config or name, a map file or a GeoTIFF DEM"),
    ("task", "a `TaskConfig`: goal distances, spawn margin, tip-over rule, reward `weights`"),
    ("obs_terms", "the observation terms, in order"),
    ("height_scan", "a `HeightScanConfig` (adds the `height_scan` term), or None"),
    ("max_speed", "full-scale forward speed [m/s]"),
    ("max_yaw_rate", "full-scale yaw rate [rad/s]"),
    ("dt", "the control step [s]"),
    ("dynamics_params", "the model's parameters (`RigidBodyParams(soil=...)`, ...)"),
    ("rewards", "your reward terms (`RewardTerm`), beside `terminations`, `observations`, "
                "`events`"),
]


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


def card(env_id: str) -> str:
    """The Markdown card of ``env_id``."""
    import gymnasium as gym

    import offroad_env
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
        L += ["```{raw} html", f'<img src="../_static/gallery/{short}.gif" alt="An episode of '
              f'{short}" width="320" loading="lazy">', "```", ""]
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
          "## Description", "", DESCRIPTIONS.get(task, _md(_task_texts().get(task, ""))), "",
          "## Actions", "",
          _md(_spec_bullet("Actions")), "",
          "What `a[0]` and `a[1]` command, by model (`dynamics=`); this id's is "
          f"`{cfg.dynamics}`:", "",
          "| `dynamics` | `a[0]` | `a[1]` |", "|---|---|---|",
          *_action_rows(), "",
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
          "Every field of {py:class}`~offroad_env.SimConfig` is a keyword of `gym.make`, "
          "`gym.make_vec` and the env classes; a {py:class}`~offroad_env.TaskConfig` as `task=` "
          "replaces only the task. The ones that matter most, with this id's values:", "",
          "| keyword | this id | what it takes |", "|---|---|---|"]
    for name, what in ARGUMENTS:
        L.append(f"| `{name}` | {_value(getattr(cfg, name))} | {what} |")
    L += ["| `render_mode` | None | `\"rgb_array\"`: top-down frames (`render_view`, "
          "`render_window`) |",
          f"| `max_episode_steps` | {spec.max_episode_steps} | the time limit [steps] |",
          "| `compile` | False | `torch.compile` the step (3-5 x faster at thousands of envs) |",
          "| `num_envs`, `device` | (batched) | the vector env's size and torch device |", "",
          "## On the physical model", "",
          "The same task on the 6-DOF chassis on suspended wheels, with wheel loads, motor "
          "limits, slip and soft soil where the map has it:", "",
          "```python", "import gymnasium as gym", "import offroad_env", "",
          f"env = gym.make(\"{env_id}\", dynamics=\"rigid_body\", ground=\"rigid_contact\")",
          "```", "",
          "It adds the `soil` and `energy_margin` observation terms to choose from "
          "(`obs_terms=`); [Vehicle models](../guides/models.md) has its physics and tests."]
    if task == "traverse":
        L += ["", "## As an OffroadBench task", "",
              "OffroadBench's tasks are this id's, on the physical model, with fixed starts and "
              "goals: `python -m train.bench --suite offroad-bench-v2 --policy heuristic` runs "
              "the 1400 of them, and `python -m train.ppo --suite offroad-bench-v1` trains for "
              "them ([OffroadBench](../guides/offroadbench.md))."]
    L += ["", "## Version history", "", *HISTORY]
    env.close()
    return "\n".join(L) + "\n"


def _value(v) -> str:
    """A config value for a table cell: short, as code."""
    if dataclasses.is_dataclass(v):
        text = type(v).__name__ + "(...)"
    elif isinstance(v, tuple) and len(v) > 4:
        text = repr(v[:3])[:-1] + ", ...)"
    else:
        text = repr(v)
    return f"`{text if len(text) < 40 else text[:37] + '...'}`" if text != "{}" else "none"


def _action_rows() -> list[str]:
    """A row per registered vehicle model: what each action component commands."""
    from offroad_env.physics.models.base import MODELS

    rows = []
    for name, cls in MODELS.items():
        if name == "rigid_body":  # its labels join the layouts: one row each
            rows += ["| `rigid_body`, skid steering (default) | left wheel speed | right wheel "
                     "speed |",
                     "| `rigid_body`, `steering=\"ackermann\"` | speed | steering angle |",
                     "| `rigid_body`, `steering=\"ackermann_rate\"` | speed | steering rate |"]
            continue
        labels = cls.action_labels + ("",) * (2 - len(cls.action_labels))
        rows.append(f"| `{name}` | {labels[0]} | {labels[1]} |")
    return rows


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
