"""The task and its terms: the term types a user declares (:mod:`~offroad_env.task.terms`:
``RewardTerm``, ``TerminationTerm``, ``ObservationTerm``, ``EventTerm``), the built-in reward
terms (:mod:`~offroad_env.task.rewards`), the observation terms and the ``Observer``
(:mod:`~offroad_env.task.observations`), the ``Task`` that judges a step (goal, tip rules, end
reasons: :mod:`~offroad_env.task.task`), the tasks' terrains (:mod:`~offroad_env.task.terrains`)
and the import paths that runs and checkpoints record for a term
(:mod:`~offroad_env.task.term_paths`).

Imports: :mod:`offroad_env.core`, :mod:`offroad_env.physics`, :mod:`offroad_env.data` and
:mod:`terrain`; nothing of the simulator or the faces above it.
"""
