"""Physical constants shared by every model. The simulator's gravity is ``SimConfig.gravity``,
passed explicitly to each model; :data:`GRAVITY` is only the default of that field and of the
pure functions' ``gravity`` arguments."""

GRAVITY = 9.81  #: standard gravity [m/s^2], the default everywhere

__all__ = ["GRAVITY"]
