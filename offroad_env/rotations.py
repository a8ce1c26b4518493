"""Moved to :mod:`offroad_env.physics.rotations`; this path is kept for existing imports (the same
module object)."""
from ._moved import alias

alias(__name__, "offroad_env.physics.rotations")
