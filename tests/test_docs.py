"""The documentation's generated parts follow the code: an environment card per registered id
holds every observation term, reward term and end of that id; the API pages list every module
but the entry points; a cached GIF made from other inputs is named stale."""

import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import offroad_env

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))

import api_pages  # noqa: E402
import cards  # noqa: E402
import gifs  # noqa: E402


@pytest.mark.parametrize("env_id", list(offroad_env.ENV_IDS))
def test_a_card_holds_the_ids_spaces_terms_and_ends(env_id):
    text = cards.card(env_id)
    env = gym.make(env_id)
    sim = env.unwrapped.sim
    for name, a, b in sim.obs_layout:
        assert f"| {a}:{b} | `{name}` |" in text
    for name, w in sim.cfg.task.weights.items():
        if w:
            assert f"| `{name}` | {w:g} |" in text
    for label in ("tip_over", "off_map", "hole", "goal_reached", "time_limit", "stuck"):
        assert f"`{label}`" in text
    assert f"({env.observation_space.shape[0]},)" in text
    assert f"{env.spec.max_episode_steps} steps" in text
    # meanings come from the docstrings, not from the card's code
    assert "base_link height above the ground [m]" in text


def test_the_api_pages_cover_every_module_but_the_entry_points():
    mods = api_pages.modules("offroad_env")
    assert "offroad_env.task.terms" in mods and "offroad_env.physics.rigid_body" in mods
    assert "offroad_env.cli.commands" in mods and "offroad_env.core.state" in mods
    assert "offroad_env.cli" not in mods


def test_a_gif_whose_episode_changed_is_stale(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gifs, "OUT", tmp_path)
    monkeypatch.setattr(gifs, "MANIFEST", tmp_path / "manifest.json")
    items = gifs.items()
    prints = {name: f"fp-{name}" for name in items}
    monkeypatch.setattr(gifs, "fingerprints", lambda names=None: prints)
    manifest = {}
    for name, settings in items.items():
        (tmp_path / f"{name}.gif").write_bytes(b"GIF89a")
        manifest[name] = {"key": gifs.key(settings, prints[name]), "settings": settings}
    manifest["slopes-9"]["key"] = gifs.key(items["slopes-9"], "an older episode")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "ditches-5.gif").unlink()
    assert gifs.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert "slopes-9.gif stale: the episode or its frame changed" in out
    assert "ditches-5.gif missing" in out
    assert "2 of" in out
    assert "boulders-0.gif" not in out


def test_a_fingerprint_is_the_episode_not_the_code():
    """The same episode gives the same fingerprint (so a commit that changes no pictured
    trajectory leaves the gallery current); another episode another one."""
    settings = dict(gifs.items()["OffroadNav-v1"])
    a, b = gifs.fingerprint(settings), gifs.fingerprint(settings)
    assert a == b
    assert gifs.fingerprint({**settings, "seed": settings["seed"] + 1}) != a


def test_a_card_is_finished():
    """A description in sentences, the arguments that matter (never an empty table), the
    actions of every model, the physical model, a history in user terms."""
    from offroad_env.physics.models.base import MODELS

    text = cards.card("offroad_env/OffroadTraverse-v1")
    desc = text.split("## Description\n\n", 1)[1].split("\n", 1)[0]
    assert desc[0].isupper() and desc.endswith(".") and desc.count(". ") >= 2
    args = text.split("## Arguments", 1)[1].split("##", 1)[0]
    assert args.count("\n| `") >= 10 and "| `dynamics` | `'unicycle'` |" in args
    for name in MODELS:
        assert f"| `{name}`" in text
    assert "## On the physical model" in text and "## As an OffroadBench task" in text
    history = text.split("## Version history", 1)[1]
    assert "**v1**" in history and "**v0**" in history and "issue" not in history.lower()


def test_the_custom_task_guide_lists_every_field_a_term_can_read():
    """The third trial: a user needed help() to find the state and contact fields."""
    import dataclasses
    from pathlib import Path

    from offroad_env.core.sensors import SENSORS
    from offroad_env.core.state import CORE_FIELDS
    from offroad_env.physics.ground import GroundContact
    from offroad_env.physics.models import MODELS
    from offroad_env.task.rewards import StepContext
    from offroad_env.task.task import TASK_FIELDS

    text = (Path(__file__).parents[1] / "docs" / "guides" / "custom-task.md").read_text()
    names = set(CORE_FIELDS) | set(TASK_FIELDS) | set(StepContext._fields)
    names |= {f for s in SENSORS.values() for f in s.fields}
    names |= {f for m in MODELS.values() for f in m.fields}
    names |= {f.name for f in dataclasses.fields(GroundContact)}
    names |= {n for n, v in vars(GroundContact).items() if isinstance(v, property)}
    missing = sorted(n for n in names if f"`{n}`" not in text)
    assert missing == [], missing
