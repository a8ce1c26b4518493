"""The API reference's pages: one per package, an ``automodule`` per module (every module of
``offroad_env``, ``terrain``, ``wrappers`` and ``train`` but the entry points), written at every docs build (``docs/conf.py``), so a new module is documented
without an edit here."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

PACKAGES = {"offroad_env": "The batched core: the envs, the simulator, the physics",
            "terrain": "Height maps, files, generators, terrain families",
            "wrappers": "Gymnasium wrappers", "train": "The planners, what the programs share, PPO, OffroadBench"}
SKIP = ("__main__", "cli", "_siblings")
#: packages whose subpackages get a page each (one page of all of ``offroad_env`` weighed
#: 1.4 MB of HTML)
SPLIT = ("offroad_env",)
SUBTITLES = {"offroad_env.core": "State, actions, sensors, spawns, random streams, devices",
             "offroad_env.physics": "Vehicles, URDF, the vehicle models, ground contact, soil, "
                                    "stability, the IMU",
             "offroad_env.sim": "The simulator and its config",
             "offroad_env.task": "Observation, reward and termination terms, the task",
             "offroad_env.drawing": "Rendering, plots and animations"}


def modules(pkg: str) -> list[str]:
    """The documented modules of ``pkg``, the package first."""
    p = importlib.import_module(pkg)
    out = [pkg]
    for m in pkgutil.walk_packages(p.__path__, pkg + "."):
        leaf = m.name.rsplit(".", 1)[-1]
        if leaf in SKIP:
            continue
        out.append(m.name)
    return out


def write_all(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    index = ["# API reference", "",
             "Generated from the docstrings, which state shapes, frames and units.", "",
             "```{toctree}", ":maxdepth: 1", ""]
    for pkg, title in PACKAGES.items():
        pages = {pkg: []}
        for mod in modules(pkg):
            parts = mod.split(".")
            sub = ".".join(parts[:2])
            if pkg in SPLIT and len(parts) > 1 and sub in SUBTITLES:
                pages.setdefault(sub, []).append(mod)
            else:
                pages[pkg].append(mod)
        for page, mods in pages.items():
            index.append(page)
            lines = [f"# `{page}`", "", (title if page == pkg else SUBTITLES[page]) + ".", ""]
            if page == pkg and len(pages) > 1:
                lines += ["Its subpackages have pages of their own: " + ", ".join(
                    f"[`{p}`]({p}.md)" for p in pages if p != pkg) + ".", ""]
            for mod in mods:
                lines += ["```{eval-rst}", f".. automodule:: {mod}",
                          *(("   :members:", "   :ignore-module-all:") if mod != pkg
                            else ("   :no-members:",)), "```", ""]
            _write(out / f"{page}.md", "\n".join(lines))
    _write(out / "index.md", "\n".join(index + ["```", ""]))


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
