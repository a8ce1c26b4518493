"""Training and evaluation on the offroad environments: :mod:`train.ppo` (PPO on the native
vector env), :mod:`train.evaluate` (success, tip-over, attitude statistics and videos of a
checkpoint, a random policy or a drive-to-the-goal heuristic) and :mod:`train.bench`
(OffroadBench, the fixed evaluation suite). Installed with the package; ``offroad-env train``,
``offroad-env evaluate`` and ``offroad-env bench`` run them (``train.cli``)."""
