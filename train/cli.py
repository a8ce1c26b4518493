"""The ``offroad-env`` console command: ``train``, ``evaluate`` and ``bench`` run the training
package's own command lines (``python -m train.ppo``, ``train.evaluate``, ``train.bench``, with
the same options); every other command is :mod:`offroad_env.cli`'s (demo, terrain tools,
``--version``). It lives here, not in ``offroad_env``, so that the environment package never
imports the training package."""

from __future__ import annotations

import sys

__all__ = ["main", "COMMANDS"]

#: subcommand -> module whose ``main(argv)`` runs it
COMMANDS = {"train": "train.ppo", "evaluate": "train.evaluate", "bench": "train.bench"}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        import importlib
        return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
    from offroad_env.cli import main as env_main
    return env_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
