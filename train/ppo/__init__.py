"""PPO on the native vector env (a program: ``python -m train.ppo``): :mod:`~train.ppo.trainer`
the run (options, the loop, checkpoints, logs), :mod:`~train.ppo.algorithm` the rollout buffer,
GAE and the update, :mod:`~train.ppo.config` the hyperparameters and presets,
:mod:`~train.ppo.validation` held-out validation during a run. It imports the shared layer
(:mod:`train.common`) and the planners (the residual action map's heuristic); the benchmark and
the planners never import it.
"""

from train.ppo.trainer import (CHECKPOINT_FORMAT, PRESETS, Agent, CheckpointError,
                               EpisodeWindow, PPOConfig, bootstrap_truncated, check_env_id,
                               compute_gae, load_checkpoint, main, make_optimizer,
                               make_vec_env, parse_args, plot_learning_curve, save_checkpoint,
                               train)

__all__ = ["PPOConfig", "PRESETS", "make_optimizer", "parse_args", "Agent", "check_env_id",
           "make_vec_env", "train", "load_checkpoint", "CHECKPOINT_FORMAT", "save_checkpoint",
           "CheckpointError", "compute_gae", "bootstrap_truncated", "EpisodeWindow",
           "plot_learning_curve", "main"]
