"""offroad-env installs four top-level packages side by side: ``offroad_env``, ``terrain``,
``wrappers`` and ``train``. A user's own folder or module of one of those names earlier on
``sys.path`` (the working directory comes first) would be imported in their place; this finds
that at import and says so, instead of a puzzling error later."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

__all__ = ["check_siblings"]


def _found(name: str):
    """Where ``import name`` would load from (its file), or None where it is not found."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return None if spec is None or not spec.origin else Path(spec.origin).resolve()


def check_siblings() -> None:
    """ImportError where ``terrain`` (which offroad_env imports) is not offroad-env's own; a
    warning where a package named ``wrappers`` or ``train`` that is not offroad-env's hides
    those (a single ``train.py`` of the user's is left alone: a common script name)."""
    home = Path(__file__).resolve().parent.parent
    for name in ("terrain", "wrappers", "train"):
        where = _found(name)
        if where is None or where.parent.parent == home:
            continue
        package = where.name == "__init__.py"
        msg = (f"the name {name!r} is taken by {where.parent if package else where}, not "
               f"offroad-env's own {name!r} package in {home}: a folder or module of that name "
               f"in your working directory (or earlier on sys.path) hides it; rename it, or run "
               "from another folder")
        if name == "terrain":
            raise ImportError(msg)
        if package:
            warnings.warn(msg, stacklevel=3)
