"""The vehicle models, one module each, registered in :data:`MODELS` by importing them
(:mod:`.base` is the interface; :mod:`.ground_following` the kind the built-in models are)."""

# the built-in models register in this order (the order of MODELS, config choices and docs)
from . import unicycle  # noqa: F401, I001
from . import ackermann  # noqa: F401
from . import skid_steer  # noqa: F401
from . import rigid_body  # noqa: F401
from .base import MODELS, Drive, Field, ModelStep, VehicleModel, model_class, register_model
from .ground_following import WARM_PASSES, GroundFollowing

__all__ = ["MODELS", "Drive", "Field", "ModelStep", "VehicleModel", "GroundFollowing",
           "model_class", "register_model", "WARM_PASSES"]
