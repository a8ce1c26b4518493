"""offroad-env: Gymnasium environments for wheeled robots on height-map terrain.

The physics is one batched torch core (first dimension = environment index). This release holds
the vehicle description (:mod:`offroad_env.vehicle`), ground following
(:mod:`offroad_env.ground`) and the command line (:mod:`offroad_env.cli`) on top of the
:mod:`terrain` package; dynamics and the environments build on them.
"""

from .ground import GroundContact, four_wheel, place, rigid_contact
from .vehicle import Vehicle, eight_wheel_rover, husky, preset, six_wheel_rover

__version__ = "0.1.0"

__all__ = ["Vehicle", "husky", "six_wheel_rover", "eight_wheel_rover", "preset",
           "GroundContact", "four_wheel", "rigid_contact", "place"]
