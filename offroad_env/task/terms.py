"""Your own task without forking: reward, termination, observation and event terms declared as
values in the config (``SimConfig.rewards``, ``terminations``, ``observations``, ``events``).

A term is a function and how it enters the step; user code declares it, nothing in the package
changes::

    from offroad_env import make_config
    from offroad_env.task.terms import RewardTerm, TerminationTerm, ObservationTerm, EventTerm

    def slip_on_sand(ctx, scale=1.0):            # ctx: offroad_env.task.rewards.StepContext
        return scale * ctx.motion.drive.kappa.abs().mean(1)

    cfg = make_config("traverse", rewards={"slip_on_sand": RewardTerm(slip_on_sand, -0.1)})

Signatures (N environments, torch tensors on the env's device):

- reward: ``fn(ctx, **params) -> (N,)`` float, ``ctx`` the step's
  :class:`~offroad_env.task.rewards.StepContext` (state after the step, the model's step, the action,
  the goal distance, the task's judgement). The reward is the built-in terms' weighted sum, in
  :class:`~offroad_env.task.rewards.RewardWeights` order, then each user term's ``weight * value`` in
  declaration order; each is reported as ``info["reward/<name>"]``.
- termination: ``fn(ctx, **params) -> (N,)`` bool. Its name is the end reason's label
  (``info["end_reason"]`` holds its code, :func:`~offroad_env.task.task.end_labels` names them); ``time_out=True``
  makes it a truncation. A built-in end (a hole, the map's edge, tip-over, the goal, stuck) wins
  over a user one on the same step; among user terms the first declared wins.
- observation: ``fn(state, maps, cfg, **params) -> (N, dim)`` (the same inputs as the built-in
  observation terms, :mod:`offroad_env.task.observations`), appended after ``obs_terms`` with its
  ``low``/``high`` bounds; ``clip`` (default True) clips it to them.
- event: ``fn(ev, mask, **params)`` with ``ev`` an :class:`EventContext` (per-env uniforms from
  the environments' own random streams, the state, ``set_params``) and ``mask`` ``(N,)`` bool
  the rows it acts on; ``mode="reset"`` runs at the start of every reset (autoresets included,
  before the spawns are drawn, so parameters it sets apply to the new episode), ``"interval"``
  every ``every`` steps on all rows. Events run eagerly, outside a compiled step.

A reward, termination or event term that keeps something declares it: ``state_fields={"name":
shape}`` (``()`` a float per env, ``("K",)`` one per wheel) or a :class:`Field` (an int64
counter; ``episodic=False`` kept across episodes, as a value an event draws at a reset). Each is
a state field ``(N, *shape)``, zero before the first reset and (episodic) at each episode's
start; the term writes it back whole (``ctx.state.s = ctx.state.s + x``, never in place), and it
travels in snapshots, the look-ahead and the compiled step like every field. A name already in
the state is refused when the env is built, naming both owners.

Terms that are not closures or lambdas have an import path (``module:qualname``); that is how a
checkpoint records them (:func:`term_path`, :func:`load_term`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from offroad_env.physics.models.base import Field
from offroad_env.task.term_paths import load_term, term_path

__all__ = ["Field", "RewardTerm", "TerminationTerm", "ObservationTerm", "EventTerm",
           "EventContext", "TermMap", "EVENT_MODES", "FIRST_USER_CODE", "KINDS", "user_terms",
           "run_events", "term_fields", "terms_to_plain", "terms_from_plain",
           "check_event_params", "term_path", "load_term", "check_term_output", "kept_before",
           "check_kept"]

#: the modes of an event term
EVENT_MODES = ("reset", "interval")
#: the end-reason code of the first user termination (the built-in ones are 0-7)
FIRST_USER_CODE = 8


def _check_fn(kind: str, fn) -> None:
    if not callable(fn):
        raise ValueError(f"a {kind} term's fn must be callable, got {fn!r}")


def _repr(term) -> str:
    """A term's repr names its function by import path (or qualname), not by address, so
    config digests agree across processes."""
    fn = term.fn
    name = term_path(fn) or getattr(fn, "__qualname__", type(fn).__name__)
    rest = ", ".join(f"{f}={getattr(term, f)!r}" for f in term.__dataclass_fields__
                     if f != "fn" and (f != "state_fields" or term.state_fields))
    return f"{type(term).__name__}({name}, {rest})"


def _check_params(kind: str, params) -> None:
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ValueError(f"a {kind} term's params must be a dict of keyword arguments, "
                         f"got {params!r}")


def _state_fields(term) -> None:
    """Normalize ``term.state_fields`` to ``{name: Field}`` (a shape tuple is a float field),
    refusing what is not one."""
    kind, fields, out = type(term).__name__, term.state_fields, {}
    if not isinstance(fields, dict):
        raise ValueError(f"a {kind}'s state_fields must be a dict of name -> Field or shape, "
                         f"got {fields!r}")
    for name, f in fields.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"a {kind}'s state field name must be an identifier, got {name!r}")
        if isinstance(f, (tuple, list)):
            f = Field(tuple(f))
        if not isinstance(f, Field) or f.kind not in ("float", "int64") or not all(
                d in ("K", "A") or (isinstance(d, int) and not isinstance(d, bool) and d >= 1)
                for d in f.shape):
            raise ValueError(f"a {kind}'s state field {name!r} must be a Field or a shape tuple "
                             f"of ints >= 1, 'K' (wheels) or 'A' (action components), got {f!r}")
        out[name] = f
    object.__setattr__(term, "state_fields", out)


@dataclass(frozen=True, eq=False, repr=False)
class RewardTerm:
    """A reward term: ``weight * fn(ctx, **params)`` (see the module docstring)."""

    fn: Callable
    weight: float = 1.0
    params: dict = field(default_factory=dict)
    state_fields: dict = field(default_factory=dict)

    __repr__ = _repr

    def __post_init__(self):
        _check_fn("reward", self.fn)
        _check_params("reward", self.params)
        _state_fields(self)
        if isinstance(self.weight, bool) or not isinstance(self.weight, (int, float)) \
                or not math.isfinite(self.weight):
            raise ValueError(f"a reward term's weight must be a finite number, got "
                             f"{self.weight!r}")


@dataclass(frozen=True, eq=False, repr=False)
class TerminationTerm:
    """An episode end: where ``fn(ctx, **params)`` is True; ``time_out`` True makes it a
    truncation (the state is not terminal), False a termination."""

    fn: Callable
    time_out: bool = False
    params: dict = field(default_factory=dict)
    state_fields: dict = field(default_factory=dict)

    __repr__ = _repr

    def __post_init__(self):
        _check_fn("termination", self.fn)
        _check_params("termination", self.params)
        _state_fields(self)
        if not isinstance(self.time_out, bool):
            raise ValueError(f"a termination term's time_out must be a bool, got "
                             f"{self.time_out!r}")


@dataclass(frozen=True, eq=False, repr=False)
class ObservationTerm:
    """``dim`` observation components ``fn(state, maps, cfg, **params)`` ``(N, dim)`` with the
    bounds ``low``/``high`` (floats or ``dim`` lists), clipped to them where ``clip``."""

    fn: Callable
    dim: int
    low: float | tuple = -math.inf
    high: float | tuple = math.inf
    clip: bool = True
    params: dict = field(default_factory=dict)

    __repr__ = _repr

    def __post_init__(self):
        _check_fn("observation", self.fn)
        _check_params("observation", self.params)
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 1:
            raise ValueError(f"an observation term's dim must be an int >= 1, got {self.dim!r}")

    def spec(self, cfg, vehicle, maps, action_dim):
        """The :class:`~offroad_env.task.observations.ObsTerm` spec: ``(dim, low, high)``."""
        return self.dim, self.low, self.high

    def compute(self, state, maps, cfg):
        return self.fn(state, maps, cfg, **self.params)


@dataclass(frozen=True, eq=False, repr=False)
class EventTerm:
    """``fn(ev, mask, **params)`` at every reset (``mode="reset"``) or every ``every`` steps
    (``mode="interval"``). A reset event runs before the new episodes restart their episodic
    fields, so what it keeps for the episode is a ``Field(episodic=False)`` (written with
    ``ev.state.put(mask, name=value)``). ``sets``: the per-environment parameters it may change
    (:data:`offroad_env.core.params.PARAMS`; ``ev.set_params`` refuses others), checked against the
    model when the config is built."""

    fn: Callable
    mode: str = "reset"
    every: int = 1
    sets: tuple = ()
    params: dict = field(default_factory=dict)
    state_fields: dict = field(default_factory=dict)

    __repr__ = _repr

    def __post_init__(self):
        _check_fn("event", self.fn)
        _check_params("event", self.params)
        if self.mode not in EVENT_MODES:
            raise ValueError(f"an event term's mode must be one of {EVENT_MODES}, got "
                             f"{self.mode!r}")
        if isinstance(self.every, bool) or not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"an event term's every must be an int >= 1, got {self.every!r}")
        from offroad_env.core.params import PARAMS
        _state_fields(self)
        object.__setattr__(self, "sets", tuple(self.sets))
        bad = [p for p in self.sets if p not in PARAMS]
        if bad:
            raise ValueError(f"an event term's sets names unknown parameters {bad}; known: "
                             f"{PARAMS}")


KINDS = _KINDS = {"rewards": RewardTerm, "terminations": TerminationTerm,
          "observations": ObservationTerm, "events": EventTerm}


class TermMap(dict):
    """A read-only ``{name: term}`` (hashable, so a config that holds it is)."""

    def __hash__(self):
        return hash(tuple(self.items()))

    def _refuse(self, *a, **k):
        """Refused: a config's terms are read-only."""
        raise TypeError("a config's terms are read-only; build a new config (dataclasses."
                        "replace) with another dict")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse


def check_event_params(events: dict, model) -> None:
    """Refuse events whose declared parameters (``sets``) the model class ``model`` does not
    vary per environment, naming the event and the model."""
    allowed = model.per_env_params
    for name, ev in events.items():
        bad = [p for p in ev.sets if allowed is not None and p not in allowed]
        if bad:
            raise ValueError(f"event term {name!r} sets {bad}, which the {model.name} model does "
                             f"not vary per environment (it varies {allowed})")


def user_terms(kind: str, terms, builtin: tuple[str, ...]) -> TermMap:
    """A ``SimConfig`` field of user terms as a :class:`TermMap`; ValueError if it is not
    ``{name: term}`` of the right type, or a name clashes with a built-in one of that kind
    (``builtin``)."""
    cls = _KINDS[kind]
    if terms is None:
        return TermMap()
    if not isinstance(terms, dict):
        raise ValueError(f"SimConfig.{kind} must be a dict of name -> {cls.__name__}, got "
                         f"{type(terms).__name__}")
    for name, term in terms.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"SimConfig.{kind}: a term's name must be an identifier, got "
                             f"{name!r}")
        if not isinstance(term, cls):
            raise ValueError(f"SimConfig.{kind}[{name!r}] must be a {cls.__name__}, got "
                             f"{type(term).__name__}")
        if name in builtin:
            raise ValueError(f"SimConfig.{kind}[{name!r}]: the name is a built-in one "
                             f"({', '.join(builtin)}); choose another")
    return TermMap(terms)


def term_fields(cfg) -> list[tuple[str, dict]]:
    """``[(owner, {name: Field})]``: the state fields the config's terms keep, for
    :func:`~offroad_env.core.state.join_fields`."""
    return [(f"{kind[:-1]} term {name!r}", t.state_fields) for kind in KINDS
            for name, t in getattr(cfg, kind, {}).items() if getattr(t, "state_fields", None)]


def kept_before(term, state) -> dict:
    """``{field: (shape, dtype)}`` of a term's state fields before it runs."""
    return {f: (getattr(state, f).shape, getattr(state, f).dtype)
            for f in getattr(term, "state_fields", ())}


def check_kept(kind: str, name: str, state, before: dict) -> None:
    """Refuse a term's write of its state fields that changed their shape or dtype, or (eager)
    holds NaN or inf, naming the term and the field."""
    for f, (shape, dtype) in before.items():
        v = getattr(state, f)
        if not isinstance(v, torch.Tensor) or v.shape != shape or v.dtype != dtype:
            got = (f"{tuple(v.shape)} {v.dtype}" if isinstance(v, torch.Tensor)
                   else type(v).__name__)
            raise ValueError(f"{kind} term {name!r} wrote its state field {f!r} as {got}; it "
                             f"is {tuple(shape)} {dtype}")
        if (dtype.is_floating_point and not torch.compiler.is_compiling()
                and not bool(torch.isfinite(v).all())):
            raise ValueError(f"{kind} term {name!r} wrote NaN or inf into its state field {f!r}")


def check_term_output(kind: str, name: str, value, n: int, device, shape_tail=(),
                      boolean: bool = False, dtype=None) -> None:
    """Refuse a term's output that is not a tensor of shape ``(n, *shape_tail)`` on ``device``
    (bool where ``boolean``, else of ``dtype`` (None: any float) and finite), naming the
    term."""
    want = (n,) + tuple(shape_tail)
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{kind} term {name!r} returned {type(value).__name__}, not a tensor "
                         f"of shape {want}")
    if tuple(value.shape) != want:
        raise ValueError(f"{kind} term {name!r} returned shape {tuple(value.shape)}, expected "
                         f"{want}")
    if value.device != torch.device(device):
        raise ValueError(f"{kind} term {name!r} returned a tensor on {value.device}, the env "
                         f"is on {device}")
    if boolean:
        if value.dtype != torch.bool:
            raise ValueError(f"{kind} term {name!r} returned {value.dtype}, expected torch.bool")
        return
    if not value.dtype.is_floating_point or (dtype is not None and value.dtype != dtype):
        raise ValueError(f"{kind} term {name!r} returned {value.dtype}, expected "
                         f"{dtype or 'a float tensor'} (the env's dtype)")
    if not torch.compiler.is_compiling() and not bool(torch.isfinite(value).all()):
        rows = torch.nonzero(~torch.isfinite(value.reshape(n, -1)).all(1))[:5].flatten()
        raise ValueError(f"{kind} term {name!r} returned NaN or inf in rows {rows.tolist()}")


class EventContext:
    """What an event term may use: ``state`` (the simulator state), ``n`` and ``device``,
    :meth:`uniform` draws from each environment's own random stream, and :meth:`set_params`
    (:meth:`offroad_env.sim.simulator.Simulator.set_params`, with its range checks)."""

    def __init__(self, sim, name: str):
        self._sim, self.name = sim, name
        self.state, self.n, self.device = sim.state, sim.n, sim.device

    def uniform(self, k: int, mask: torch.Tensor) -> torch.Tensor:
        """``(N, k)`` uniforms in [0, 1) from each environment's stream, advancing the streams
        of the ``mask`` rows only (the others' values are drawn but not used up)."""
        return self._sim._draw(k, None, mask)

    def set_params(self, mask: torch.Tensor, **values) -> None:
        undeclared = sorted(set(values) - set(self._sim.cfg.events[self.name].sets))
        if undeclared:
            raise ValueError(f"event term {self.name!r} sets {undeclared}, which its sets= does "
                             "not declare (the config checks declared parameters against the "
                             "model when it is built)")
        try:
            self._sim.set_params(mask, **values)
        except ValueError as exc:
            raise ValueError(f"event term {self.name!r}: {exc}") from None


def run_events(sim, events: dict, mask: torch.Tensor | None) -> None:
    """Run ``events`` (``{name: EventTerm}`` of one mode) on ``sim``: reset events on the rows
    ``mask``; interval events (``mask`` None) each on the rows whose coming step is a multiple
    of its ``every`` (episode steps; a row at step 0 counts). Eager, outside a compiled step."""
    for name, ev in events.items():
        rows = mask if mask is not None else (sim.state.steps % ev.every == 0)
        before = kept_before(ev, sim.state)
        ev.fn(EventContext(sim, name), rows, **ev.params)
        check_kept("event", name, sim.state, before)


def terms_to_plain(cfg) -> dict:
    """A config's own terms as JSON-able values, ``{kind: {name: {"fn": "module:qualname",
    ...fields}}}`` (empty kinds left out), as a run's config and checkpoint record them;
    ValueError naming a term whose function has no import path (a lambda or a closure: define
    it at a module's top level)."""
    out = {}
    for kind in KINDS:
        for name, term in getattr(cfg, kind, {}).items():
            path = term_path(term.fn)
            if path is None:
                raise ValueError(f"{kind[:-1]} term {name!r}: its function {term.fn!r} has no "
                                 "import path (a lambda or a closure), so a run cannot record "
                                 "it; define it at a module's top level")
            fields = {f: getattr(term, f) for f in term.__dataclass_fields__ if f != "fn"}
            fields.pop("state_fields", None)
            if getattr(term, "state_fields", None):  # left out where none (as runs before)
                fields["state_fields"] = {k: {**dataclasses.asdict(v), "shape": list(v.shape)}
                                          for k, v in term.state_fields.items()}
            out.setdefault(kind, {})[name] = {"fn": path, **fields}
    return out


def terms_from_plain(plain: dict, allow: tuple[str, ...] = ()) -> dict:
    """The terms of :func:`terms_to_plain`, ``{kind: {name: term}}``, importing each
    function's module only where ``allow`` names it or a package above it (:func:`load_term`)."""
    out = {}
    for kind, terms in (plain or {}).items():
        if kind not in KINDS:
            raise ValueError(f"unknown kind of terms {kind!r}; known: {tuple(KINDS)}")
        for name, fields in terms.items():
            fields = dict(fields)
            fn = load_term(fields.pop("fn"), allow)
            if "state_fields" in fields:
                fields["state_fields"] = {k: Field(**{**v, "shape": tuple(v["shape"])})
                                          for k, v in fields["state_fields"].items()}
            for key in ("low", "high"):
                if isinstance(fields.get(key), list):
                    fields[key] = tuple(fields[key])
            out.setdefault(kind, {})[name] = KINDS[kind](fn, **fields)
    return out
