"""Training and evaluation on the offroad environments: :mod:`train.ppo` (PPO on the native
vector env), :mod:`train.evaluate` (success, tip-over, attitude statistics and videos of a
checkpoint, a random policy or a drive-to-the-goal heuristic) and :mod:`train.bench`
(OffroadBench, the fixed evaluation suite). Installed with the package; ``offroad-env train``,
``offroad-env evaluate`` and ``offroad-env bench`` run them (:mod:`train.cli`)."""

import os

# OpenMP's threads spin while they wait for work. On a machine whose cores are busy with other
# work that made a two-thread step 6 x slower than one thread (issue 46; BENCHMARKS.md, "CPU
# threads"). So the training commands wait passively. OpenMP reads the variable once, when
# torch loads it: this takes effect where the train package is imported before torch (``python
# -m train.ppo``, ``offroad-env train``). A user's own setting is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
