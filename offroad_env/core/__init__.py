"""The simulator's state and what fills it, below the task: the one state table
(:mod:`~offroad_env.core.state`: ``SimState``, the core fields, ``join_fields``), spawns and goals
(:mod:`~offroad_env.core.spawn`, :mod:`~offroad_env.core.next_starts`), the sensors
(:mod:`~offroad_env.core.sensors`: IMU, height scan), per-env physical parameters
(:mod:`~offroad_env.core.params`), counter-based random streams (:mod:`~offroad_env.core.rng`),
the simulation frame (:mod:`~offroad_env.core.frames`), the one action check
(:mod:`~offroad_env.core.actions`) and CPU threads and devices (:mod:`~offroad_env.core.devices`).

Imports: :mod:`offroad_env.physics`, :mod:`offroad_env.data` and :mod:`terrain`; nothing of the
task, the simulator or the faces above it.
"""
