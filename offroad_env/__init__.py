"""offroad-env: Gymnasium environments for wheeled robots on height-map terrain.

The physics is one batched torch core (first dimension = environment index). This release holds
the terrain foundation (:mod:`terrain`) and the command line (:mod:`offroad_env.cli`); vehicles,
ground following, dynamics and the environments build on it.
"""

__version__ = "0.1.0"
