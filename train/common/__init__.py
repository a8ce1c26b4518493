"""What the programs of ``train`` share, one layer below them: :mod:`~train.common.suite` (a
suite's spec, tasks and env), :mod:`~train.common.episodes` (running a policy over episodes, the
evaluation seeds), :mod:`~train.common.outcomes` (per-episode outcomes),
:mod:`~train.common.agent` (the actor-critic a checkpoint holds), :mod:`~train.common.checkpoint`
(saving and loading it), :mod:`~train.common.envconfig` (the env options of a run and their
record), :mod:`~train.common.logs` (run logs, progress, plots), :mod:`~train.common.distributed`
(torchrun ranks).

It imports the planners (a baseline by name; the residual action map steers at the goal as the
heuristic does) and never PPO, the benchmark or the program modules above it.
"""
