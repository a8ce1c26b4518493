"""The planners and baselines: policies that drive an offroad env through its public seams, with
no training in them. :mod:`~train.planners.baselines` the named baselines (``random``,
``heuristic``, ``careful``, ``physics``) and the ``--policy`` names, :mod:`~train.planners.mppi`
sampling MPC on the simulator, :mod:`~train.planners.rollout` the closed-loop rollout planner
(the privileged reference), :mod:`~train.planners.options` their ``name:key=value`` options.

The lowest layer of ``train``: it imports only ``offroad_env``, ``terrain`` and ``wrappers``,
nothing of the rest of ``train`` (the shared layer, PPO and the benchmark import it).
"""

from train.planners.baselines import (BASELINES, PLANNERS, baseline, careful_policy,
                                      heuristic_policy, is_policy_name, physics_policy,
                                      random_policy)
from train.planners.mppi import MPPI, MPPIConfig, mppi_policy
from train.planners.rollout import RolloutConfig, RolloutPlanner

__all__ = ["BASELINES", "PLANNERS", "baseline", "is_policy_name", "random_policy",
           "heuristic_policy", "careful_policy", "physics_policy", "MPPI", "MPPIConfig",
           "mppi_policy", "RolloutConfig", "RolloutPlanner"]
