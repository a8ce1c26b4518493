"""Training and evaluation on the offroad environments: :mod:`train.ppo` (PPO on the native
vector env) and :mod:`train.evaluate` (success, tip-over, attitude statistics and videos of a
checkpoint, a random policy or a drive-to-the-goal heuristic)."""
