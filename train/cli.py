"""The ``offroad-env`` console command: ``train``, ``evaluate`` and ``bench`` run the training
package's own command lines (``python -m train.ppo``, ``train.evaluate``, ``train.bench``, with
the same options); every other command is :mod:`offroad_env.cli`'s (demo, terrain tools,
``--version``). It lives here, not in ``offroad_env``, so that the environment package never
imports the training package."""

from __future__ import annotations

import sys

__all__ = ["main", "COMMANDS", "all_commands"]

#: subcommand -> module whose ``main(argv)`` runs it
COMMANDS = {"train": "train.ppo", "evaluate": "train.evaluate", "bench": "train.bench"}


def all_commands() -> list[str]:
    """Every subcommand: the environment's (from its parser) and the training package's."""
    from offroad_env.cli import command_names
    return command_names() + list(COMMANDS)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        import importlib
        return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
    known = all_commands() if argv and not argv[0].startswith("-") else []
    if known and argv[0] not in known:
        import difflib
        close = difflib.get_close_matches(argv[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        print(f"offroad-env: error: unknown command {argv[0]!r}{hint}; commands: "
              f"{', '.join(known)}", file=sys.stderr)
        return 2
    from offroad_env.cli import main as env_main
    return env_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
