"""Where a term's function lives: its import path (``"module:qualname"``), as a run's config and
a checkpoint record it, and loading one back, which imports a module only where the user allows
it (importing runs code, which ``weights_only=True`` loading exists to prevent)."""

from __future__ import annotations

import importlib
from typing import Callable

__all__ = ["term_path", "load_term"]


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


def load_term(path: str, allow: tuple[str, ...] = ()) -> Callable:
    """The function at ``path`` (``"module:qualname"``), importing its module only when the
    module or a package above it is in ``allow``; ValueError otherwise (importing runs code)."""
    mod, sep, qual = path.partition(":")
    if not sep or not mod or not qual:
        raise ValueError(f"a term path is 'module:qualname', got {path!r}")
    top = [mod.split(".")[: i + 1] for i in range(mod.count(".") + 1)]
    if not any(".".join(p) in allow for p in top) and mod.split(".")[0] != "offroad_env":
        raise ValueError(f"term {path!r} needs module {mod!r} imported; importing runs its code, "
                         f"so allow it explicitly (allow_modules=({mod!r},))")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj
