"""Options given by name on the command line: ``"name=value,name=value"`` (the planners'
``--policy mppi:K=32,H=15`` and ``--policy rollout:R=20``)."""

from __future__ import annotations

__all__ = ["parse_options"]


def parse_options(text: str, types: dict[str, type], short: dict[str, str], who: str) -> dict:
    """``text`` as keywords: each ``name=value`` with ``name`` a key of ``types`` (or a key of
    ``short``, the short name of one), its value converted by that type; ValueError naming
    ``who``, the option and what is accepted."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, val = part.partition("=")
        key = short.get(key.strip(), key.strip())
        if not sep or key not in types:
            also = f" (or {', '.join(short)})" if short else ""
            raise ValueError(f"{who} option {part!r}: give name=value with a name of "
                             f"{sorted(types)}{also}")
        try:
            out[key] = types[key](val.strip())
        except ValueError:
            raise ValueError(f"{who} option {key}={val!r} is not a {types[key].__name__}") \
                from None
    return out
