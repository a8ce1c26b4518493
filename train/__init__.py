"""Training, evaluation and planning on the offroad environments, in layers that import
downwards only (ARCHITECTURE.md draws them):

* :mod:`train.planners`: the baselines, MPPI and the rollout planner (imports nothing of train);
* :mod:`train.common`: what the programs share (suites, episodes, outcomes, the agent and its
  checkpoints, run options, logs, torchrun ranks);
* the programs: :mod:`train.ppo` (``python -m train.ppo``), :mod:`train.bench` (OffroadBench,
  ``python -m train.bench``), :mod:`train.evaluate`, :mod:`train.reference` and
  :mod:`train.suite_starts`; PPO and the benchmark never import each other.

Installed with the package; ``offroad-env train``, ``offroad-env evaluate`` and ``offroad-env
bench`` run them (``train.cli``)."""
