"""Where a term's function lives: its import path (``"module:qualname"``), as a run's config and
a checkpoint record it, and loading one back, which imports a module only where the user allows
it (importing runs code, which ``weights_only=True`` loading exists to prevent)."""

from __future__ import annotations

import importlib
from typing import Callable

__all__ = ["term_path", "load_term", "MOVED_MODULES"]

#: where the modules of offroad_env 0.1 went in 0.2.0: a term recorded under an old path
#: (``"offroad_env.rewards:fn"``) loads from the new one
MOVED_MODULES = {
    "offroad_env.actions": "offroad_env.core.actions",
    "offroad_env.animation": "offroad_env.drawing.animation",
    "offroad_env.cli": "offroad_env.cli.commands",
    "offroad_env.config": "offroad_env.sim.config",
    "offroad_env.datafiles": "offroad_env.data",
    "offroad_env.demo": "offroad_env.cli.demo",
    "offroad_env.devices": "offroad_env.core.devices",
    "offroad_env.frames": "offroad_env.core.frames",
    "offroad_env.next_starts": "offroad_env.core.next_starts",
    "offroad_env.observations": "offroad_env.task.observations",
    "offroad_env.params": "offroad_env.core.params",
    "offroad_env.plots": "offroad_env.drawing.plots",
    "offroad_env.render": "offroad_env.drawing.render",
    "offroad_env.rest_probe": "offroad_env.sim.rest_probe",
    "offroad_env.rewards": "offroad_env.task.rewards",
    "offroad_env.rng": "offroad_env.core.rng",
    "offroad_env.sensors": "offroad_env.core.sensors",
    "offroad_env.sim": "offroad_env.sim.simulator",
    "offroad_env.spawn": "offroad_env.core.spawn",
    "offroad_env.state": "offroad_env.core.state",
    "offroad_env.task_terrains": "offroad_env.task.terrains",
    "offroad_env.tasks": "offroad_env.task.task",
    "offroad_env.term_paths": "offroad_env.task.term_paths",
    "offroad_env.terms": "offroad_env.task.terms",
    # the 0.1 aliases of the physics modules
    "offroad_env.batch": "offroad_env.physics.batch",
    "offroad_env.constants": "offroad_env.physics.constants",
    "offroad_env.dynamics": "offroad_env.physics.dynamics",
    "offroad_env.ground": "offroad_env.physics.ground",
    "offroad_env.imu": "offroad_env.physics.imu",
    "offroad_env.rotations": "offroad_env.physics.rotations",
    "offroad_env.slip": "offroad_env.physics.slip",
    "offroad_env.stability": "offroad_env.physics.stability",
    "offroad_env.urdf": "offroad_env.physics.urdf",
    "offroad_env.vehicle": "offroad_env.physics.vehicle",
}


def term_path(fn) -> str | None:
    """``"module:qualname"`` of a function importable by that path, else None (a lambda or a
    closure)."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not mod or "<" in qual:
        return None
    if mod == "__main__":  # a script: its own name, where that imports the same file
        return _script_path(qual)
    try:
        obj = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return f"{mod}:{qual}" if obj is fn else None


def _script_path(qual: str) -> str | None:
    """``"stem:qualname"`` of a function of the running script, where ``import stem`` finds
    that very file (its folder is on ``sys.path``, as a script's own folder is), else None."""
    import importlib.util
    import sys
    from pathlib import Path

    file = getattr(sys.modules.get("__main__"), "__file__", None)
    if not file or "." in qual:
        return None
    stem = Path(file).stem
    try:
        spec = importlib.util.find_spec(stem)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or Path(spec.origin).resolve() != Path(file).resolve():
        return None
    return f"{stem}:{qual}"


def _import_allowed(mod: str):
    """Import an allowed module; one not on ``sys.path`` is looked for in the working directory
    too (a console script such as ``offroad-env`` puts its own folder first, not the working
    directory, where ``python -m`` would find a user's module)."""
    import os
    import sys

    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name != mod.split(".")[0] or os.getcwd() in sys.path:
            raise
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name != mod.split(".")[0]:
            raise
        raise ModuleNotFoundError(f"module {mod!r} (an allowed term module) is neither on "
                                  f"sys.path nor in the working directory {os.getcwd()}: run "
                                  "from its folder or add that folder to PYTHONPATH",
                                  name=mod) from None
    finally:
        sys.path.remove(os.getcwd())


def load_term(path: str, allow: tuple[str, ...] = ()) -> Callable:
    """The function at ``path`` (``"module:qualname"``), importing its module only when the
    module or a package above it is in ``allow``; ValueError otherwise (importing runs code).
    A module of offroad_env that moved (:data:`MOVED_MODULES`) is read at its new path."""
    mod, sep, qual = path.partition(":")
    if not sep or not mod or not qual:
        raise ValueError(f"a term path is 'module:qualname', got {path!r}")
    mod = MOVED_MODULES.get(mod, mod)
    top = [mod.split(".")[: i + 1] for i in range(mod.count(".") + 1)]
    if not any(".".join(p) in allow for p in top) and mod.split(".")[0] != "offroad_env":
        raise ValueError(f"term {path!r} needs module {mod!r} imported; importing runs its code, "
                         f"so allow it explicitly: allow_modules=({mod!r},) in Python, "
                         f"--allow-module {mod} on the command line")
    obj = _import_allowed(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj
