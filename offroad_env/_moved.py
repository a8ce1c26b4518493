"""Old import paths of the modules that moved into :mod:`offroad_env.physics`.

``offroad_env.vehicle``, ``offroad_env.ground`` (and its submodules) and the others are the
very module objects of ``offroad_env.physics.*`` (not copies), so classes, functions and
monkeypatches are shared between the two names.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings

__all__ = ["alias"]


def alias(old: str, new: str) -> None:
    """Make the module ``old`` (being imported now) the module ``new``, and likewise for each
    submodule of a package; warns (once: a module is imported once) with the new path."""
    warnings.warn(f"{old} moved to {new}; import it from there ({old} goes in the next minor "
                  "version)", DeprecationWarning, stacklevel=3)
    module = importlib.import_module(new)
    sys.modules[old] = module
    for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
        sub = importlib.import_module(f"{new}.{info.name}")
        sys.modules[f"{old}.{info.name}"] = sub
