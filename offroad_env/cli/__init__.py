"""The command line: ``python -m offroad_env`` and the ``offroad-env`` console script's env
commands (:mod:`~offroad_env.cli.commands`: ``demo``, ``terrain``, ``ids``, ...) and the demo
(:mod:`~offroad_env.cli.demo`). The top of the package: it may import every layer below.
"""

from offroad_env.cli.commands import add_config_options, command_names, main

__all__ = ["main", "command_names", "add_config_options"]
