"""OffroadBench, the fixed evaluation suite (a program: ``python -m train.bench``, also under
``torchrun``): :mod:`~train.bench.run` runs a suite's tasks batched (or in chunks shared among
ranks), :mod:`~train.bench.report` writes the table and the plot, :mod:`~train.bench.command` is
the command line. It imports the shared layer (:mod:`train.common`) and the planners, never PPO.
"""

from train.bench.command import POLICIES, main, policy_builder
from train.bench.report import plot_levels, table_markdown
from train.bench.run import OUTCOMES, run_suite, wilson
from train.common.suite import SUITES_DIR, SuiteSpec, load_suite, suite_tasks
from train.planners.baselines import careful_policy

__all__ = ["SuiteSpec", "load_suite", "suite_tasks", "run_suite", "careful_policy", "main",
           "SUITES_DIR", "POLICIES", "policy_builder", "wilson", "OUTCOMES", "table_markdown", "plot_levels"]
