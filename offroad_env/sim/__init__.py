"""The simulator: the ``Simulator`` (:mod:`~offroad_env.sim.simulator`: actuate and place ->
sense -> task -> observe; reset; the compile plumbing), its configuration
(:mod:`~offroad_env.sim.config`: ``SimConfig``, ``TaskConfig``, ``make_config``) and the rest
probe that checks a map's starts hold still (:mod:`~offroad_env.sim.rest_probe`).

Imports: :mod:`offroad_env.task`, :mod:`offroad_env.core`, :mod:`offroad_env.physics`,
:mod:`offroad_env.data` and :mod:`terrain`; nothing of the faces or the command line above it.
"""
