"""Snapshots: everything a step reads, taken from an environment and put back (the simulator as
a model: save, roll candidate actions forward, restore).

A :class:`Snapshot` is a set of batched tensors, one row per environment, plus plain-Python
metadata:

* ``state/<field>``: every field of the simulator's state (:mod:`offroad_env.core.state`): the
  model's (a physical body's pose, velocities, wheel spins, ruts), the sensors' (the IMU's
  filters and biases), the task's (goal, counters, timers, holds), the previous action, the
  episode's step count and each environment's random stream (``keys``, ``counters``);
* ``contact/<field>``, ``loads/<field>``: the last placement (the next step starts from it);
* ``params/<name>``: per-environment parameters (domain randomization), where set;
  ``map_range/lo``, ``map_range/count``: per-environment map ranges, where set;
* ``ahead/...``: the next starts prepared ahead (:mod:`offroad_env.core.next_starts`), where held:
  a restored env prepares in the same batches and replays bit for bit;
* ``env/done``, ``env/end_reasons`` (the vector env's autoreset bookkeeping);
* ``meta``: the format version, a digest of the config (the fields that take part in config
  equality) and one of the height maps (``SimConfig.heightmap`` does not take part in config
  equality, so the maps are compared by content), the env's ``np_random`` state, whether its
  streams were seeded, and the elapsed steps of Gymnasium ``TimeLimit`` wrappers around it.

Rows keep their memory layout when selected or repeated (the physical model's column-major
fields stay column-major), and a restore writes each field in the layout the env keeps it in,
so a compiled step does not recompile. A snapshot round-trips through ``torch.save`` and loads
with ``weights_only=True`` (tensors and plain Python only).

    snap = env.get_state()            # or offroad_env.get_state(gym_made_env): wrappers too
    ...                               # step, reset, anything
    env.set_state(snap)               # the same env, or another of the same config and maps

A snapshot that does not fit (another config, other maps, another number of rows, other fields,
another format version) is refused with a message that names the difference, and the env is
left unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import torch

from offroad_env.core.params import PARAMS

__all__ = ["Snapshot", "FORMAT_VERSION", "config_digest", "maps_digest", "get_state",
           "set_state"]

#: the layout of a snapshot; a snapshot of another version is refused
FORMAT_VERSION = 1


def _take(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Rows ``idx`` of ``t`` in ``t``'s layout (a column-major ``(N, C)`` stays column-major)."""
    if t.dim() == 2 and t.shape[1] > 1 and t.stride(0) == 1:
        return t.T.index_select(1, idx.to(t.device)).T
    return t.index_select(0, idx.to(t.device))


@dataclass
class Snapshot:
    """Batched tensors ``{name: (M, ...)}`` (the module docstring names them) and ``meta``."""

    tensors: dict[str, torch.Tensor]
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.meta["rows"])

    @property
    def device(self) -> torch.device:
        return next(iter(self.tensors.values())).device

    def select(self, idx) -> "Snapshot":
        """The rows ``idx`` (ints, a bool mask or an index tensor), in that order."""
        idx = torch.as_tensor(idx)
        if idx.dtype == torch.bool:
            if idx.shape != (len(self),):
                raise ValueError(f"a row mask needs shape ({len(self)},), got "
                                 f"{tuple(idx.shape)}")
            idx = torch.nonzero(idx).flatten()
        idx = idx.to(torch.int64).reshape(-1)
        if idx.numel() and (int(idx.min()) < -len(self) or int(idx.max()) >= len(self)):
            raise IndexError(f"row index out of range for a snapshot of {len(self)} rows")
        idx = torch.remainder(idx, max(len(self), 1))
        return Snapshot({k: _take(v, idx) for k, v in self.tensors.items()},
                        dict(self.meta, rows=int(idx.numel())))

    def repeat(self, k: int) -> "Snapshot":
        """Each row ``k`` times in place (rows ``0, 0, ..., 1, 1, ...``): K candidate rollouts
        of every environment, row ``i * k + j`` the j-th copy of row i."""
        if int(k) != k or k < 1:
            raise ValueError(f"repeat needs an int k >= 1, got {k!r}")
        return self.select(torch.arange(len(self)).repeat_interleave(int(k)))

    def to(self, device) -> "Snapshot":
        """The snapshot on ``device`` (layouts kept)."""
        dev = torch.device(device)
        out = {}
        for k, v in self.tensors.items():
            col = v.dim() == 2 and v.shape[1] > 1 and v.stride(0) == 1
            out[k] = v.T.to(dev).T if col else v.to(dev)
        return Snapshot(out, dict(self.meta))

    def clone(self) -> "Snapshot":
        return Snapshot({k: (v.T.clone().T if v.dim() == 2 and v.shape[1] > 1
                             and v.stride(0) == 1 else v.clone())
                         for k, v in self.tensors.items()}, dict(self.meta))

    def save(self, path) -> None:
        """``torch.save`` it (loadable with ``weights_only=True``)."""
        torch.save({"tensors": self.tensors, "meta": self.meta}, path)

    @classmethod
    def load(cls, path, map_location=None) -> "Snapshot":
        raw = torch.load(path, map_location=map_location, weights_only=True)
        if not isinstance(raw, dict) or set(raw) != {"tensors", "meta"}:
            raise ValueError(f"{path} does not hold an offroad_env snapshot")
        return cls(dict(raw["tensors"]), dict(raw["meta"]))


# ---------------------------------------------------------------------------- digests
def config_digest(cfg) -> str:
    """A digest of the :class:`~offroad_env.sim.config.SimConfig` fields that take part in its
    equality (``heightmap`` does not: :func:`maps_digest` covers the maps)."""
    parts = [f"{f.name}={getattr(cfg, f.name)!r}" for f in dataclasses.fields(cfg) if f.compare]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def maps_digest(maps) -> str:
    """A digest of a height-map stack's grid and contents (heights, offsets, materials and their
    declarations)."""
    head = (maps.shape, maps.resolution, maps.origin, len(maps), str(maps.dtype),
            maps.material_names)
    if maps.material_defs_key:  # declared materials (none: the digest of earlier versions)
        head = head + (maps.material_defs_key,)
    h = hashlib.sha256(repr(head).encode())
    for t in (maps.heights, maps.z_offset, maps.materials):
        if t is not None:
            h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------------------- a simulator
def _contact_tensors(gc) -> dict[str, torch.Tensor]:
    gc = gc.with_loads()
    out = {f"contact/{f.name}": getattr(gc, f.name) for f in dataclasses.fields(gc)
           if not f.metadata.get("shared") and f.name != "loads"}
    out.update({f"loads/{f.name}": getattr(gc.loads, f.name)
                for f in dataclasses.fields(gc.loads)})
    return out


def sim_tensors(sim) -> dict[str, torch.Tensor]:
    """A simulator's rows (clones: the snapshot shares no memory with the env)."""
    if sim.state.contact is None:
        raise RuntimeError("get_state() before the first reset: there is no state to take")
    out = sim_tensors_view(sim)
    if sim.params is not None:
        out.update({f"params/{k}": v for k, v in sim.params.items()})
    if sim.map_range is not None:
        out["map_range/lo"], out["map_range/count"] = sim.map_range
    held = None if sim.next_starts is None else sim.next_starts.held()
    if held is not None:  # the prepared next starts (offroad_env.core.next_starts)
        out.update({f"ahead/state/{k}": v for k, v in held.pop("rows").items()})
        out.update({f"ahead/{k}": v for k, v in _contact_tensors(held.pop("contact")).items()})
        out.update({f"ahead/{k}": v for k, v in held.items()})
    return Snapshot(out).clone().tensors


def _like(value: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """``value`` on ``ref``'s device in ``ref``'s layout (column-major where ``ref`` is)."""
    if ref.dim() == 2 and ref.shape[1] > 1 and ref.stride(0) == 1:
        return value.to(ref.device).T.contiguous().T
    return value.to(ref.device).contiguous()


def check_fits(sim, snap: Snapshot, expected: dict[str, torch.Tensor]) -> None:
    """ValueError naming what differs between ``snap`` and the env whose tensors of the same
    names are ``expected``."""
    meta = snap.meta
    if meta.get("format") != FORMAT_VERSION:
        raise ValueError(f"snapshot format {meta.get('format')!r}; this version of offroad_env "
                         f"reads format {FORMAT_VERSION}")
    if meta.get("config") != config_digest(sim.cfg):
        raise ValueError("the snapshot was taken on another config (config digest "
                         f"{meta.get('config')} against this env's {config_digest(sim.cfg)})")
    if meta.get("maps") != sim_maps_digest(sim):
        raise ValueError("the snapshot was taken on other height maps (maps digest "
                         f"{meta.get('maps')} against this env's {sim_maps_digest(sim)})")
    if len(snap) != sim.n:
        raise ValueError(f"the snapshot has {len(snap)} rows; this env has {sim.n} "
                         "environments (select or repeat its rows to fit)")
    adopted = ("params/", "map_range/", "ahead/")  # taken as the snapshot has them (or not)
    got = {k for k in snap.tensors if not k.startswith(adopted)}
    want = set(expected)
    if got != want:
        raise ValueError(f"the snapshot's tensors differ from this env's: missing "
                         f"{sorted(want - got)}, extra {sorted(got - want)}")
    for k, v in snap.tensors.items():
        if k.startswith(adopted) and (v.dim() == 0 or v.shape[0] != sim.n):
            raise ValueError(f"snapshot tensor {k!r} has {tuple(v.shape)}; rows must be "
                             f"{sim.n}")
        if k.startswith("params/") and k[7:] not in PARAMS:
            raise ValueError(f"snapshot parameter {k[7:]!r} is not one of {tuple(PARAMS)}")
    for k, ref in expected.items():
        v = snap.tensors[k]
        if v.shape != ref.shape or v.dtype != ref.dtype:
            raise ValueError(f"snapshot tensor {k!r} is {tuple(v.shape)} {v.dtype}; this env "
                             f"keeps {tuple(ref.shape)} {ref.dtype}")


def sim_maps_digest(sim) -> str:
    """The digest of ``sim``'s maps, computed once per map stack."""
    key = id(sim.world_maps)
    cached = getattr(sim, "_maps_digest", None)
    if cached is None or cached[0] != key:
        cached = sim._maps_digest = (key, maps_digest(sim.world_maps))
    return cached[1]


def restore_sim(sim, snap: Snapshot) -> None:
    """Put ``snap``'s simulator rows into ``sim`` (checked by the caller)."""
    st, t = sim.state, snap.tensors
    for name in st.fields:
        setattr(st, name, _like(t[f"state/{name}"], getattr(st, name)))
    st.contact = _contact_from(t, "", st.contact)
    if sim.next_starts is not None:  # what it had prepared, or nothing
        held = {k[6:]: v.to(sim.device) for k, v in t.items() if k.startswith("ahead/")
                and not k.startswith(("ahead/state/", "ahead/contact/", "ahead/loads/"))}
        sim.next_starts.hold(None if not held else dict(
            held, contact=_contact_from(t, "ahead/", st.contact),
            rows={n: _like(t[f"ahead/state/{n}"], getattr(st, n)) for n in st.fields}))
    params = {k[7:]: v.to(sim.device) for k, v in t.items() if k.startswith("params/")}
    sim.use_params(params or None)
    sim.map_range = ((t["map_range/lo"].to(sim.device), t["map_range/count"].to(sim.device))
                     if "map_range/lo" in t else None)


def _contact_from(t: dict, prefix: str, like):
    """The ground contact held in ``t`` under ``prefix`` (``contact/``, ``loads/``), in the
    layouts of ``like`` (a ``GroundContact`` of the same env)."""
    from offroad_env.physics.ground.contact import GroundContact, WheelLoads
    old = like.with_loads()
    kw = {f.name: (getattr(old, f.name) if f.metadata.get("shared")
                   else _like(t[f"{prefix}contact/{f.name}"], getattr(old, f.name)))
          for f in dataclasses.fields(old) if f.name not in ("loads", "load_inputs")}
    loads = WheelLoads(**{f.name: _like(t[f"{prefix}loads/{f.name}"], getattr(old.loads, f.name))
                          for f in dataclasses.fields(WheelLoads)})
    return GroundContact(**kw, loads=loads)


# ---------------------------------------------------------------------------- an env
def face_state(face) -> Snapshot:
    """The snapshot of an offroad_env face (:class:`~offroad_env.OffroadEnv` or
    :class:`~offroad_env.OffroadVectorEnv`): its simulator's rows, the vector env's autoreset
    bookkeeping, ``np_random`` and whether its streams are seeded."""
    sim = face.sim
    t = sim_tensors(sim)
    t.update({k: v.clone() for k, v in _face_tensors(face).items()})
    gen = getattr(face, "_np_random", None)
    meta = {"format": FORMAT_VERSION, "config": config_digest(sim.cfg),
            "maps": sim_maps_digest(sim), "rows": sim.n, "face": type(face).__name__,
            "np_random": None if gen is None else gen.bit_generator.state,
            "seeded": bool(face._seeded)}
    return Snapshot(t, meta)


def _face_tensors(face) -> dict[str, torch.Tensor]:
    return ({"env/done": face._done, "env/end_reasons": face._end_reasons}
            if hasattr(face, "_done") else {})


def restore_face(face, snap: Snapshot) -> None:
    """Put ``snap`` (:func:`face_state`) back into ``face``; checked first (the env is
    unchanged where it is refused)."""
    import numpy as np
    if not isinstance(snap, Snapshot):
        raise TypeError(f"set_state needs a Snapshot (from get_state()), got "
                        f"{type(snap).__name__}")
    sim = face.sim
    if sim.state.contact is None:
        raise RuntimeError("set_state() before the first reset: reset the env once first")
    if snap.meta.get("face") != type(face).__name__:
        raise ValueError(f"the snapshot was taken from an {snap.meta.get('face')}; this is an "
                         f"{type(face).__name__}")
    expected = {k: v for k, v in sim_tensors_view(sim).items()
                if not k.startswith(("params/", "map_range/"))}
    expected.update(_face_tensors(face))
    check_fits(sim, snap, expected)
    restore_sim(sim, snap)
    for k, v in _face_tensors(face).items():
        setattr(face, "_done" if k == "env/done" else "_end_reasons",
                _like(snap.tensors[k], v))
    state = snap.meta.get("np_random")
    if state is not None:
        gen = np.random.Generator(getattr(np.random, state["bit_generator"])())
        gen.bit_generator.state = state
        face._np_random = gen
    face._seeded = bool(snap.meta.get("seeded", True))
    face._view_contact = None


def sim_tensors_view(sim) -> dict[str, torch.Tensor]:
    """:func:`sim_tensors` without the copies (for shape checks)."""
    st = sim.state
    out = {f"state/{name}": getattr(st, name) for name in st.fields}
    out.update(_contact_tensors(st.contact))
    return out


def _time_limits(env):
    """The Gymnasium ``TimeLimit`` wrappers around ``env``, outermost first."""
    import gymnasium as gym
    out, e = [], env
    while isinstance(e, gym.Wrapper):
        if isinstance(e, gym.wrappers.TimeLimit):
            out.append(e)
        e = e.env
    return out


def get_state(env) -> Snapshot:
    """The snapshot of ``env`` (an offroad_env env, or a Gymnasium wrapper around one, as
    ``gymnasium.make`` builds: the elapsed steps of its ``TimeLimit`` wrappers are kept)."""
    snap = env.unwrapped.get_state()
    snap.meta["time_limits"] = [w._elapsed_steps for w in _time_limits(env)]
    return snap


def set_state(env, snap: Snapshot) -> None:
    """Restore ``snap`` (:func:`get_state`) into ``env`` and its ``TimeLimit`` wrappers."""
    limits = _time_limits(env)
    kept = snap.meta.get("time_limits", [])
    if len(kept) != len(limits):
        raise ValueError(f"the snapshot was taken through {len(kept)} TimeLimit wrapper(s); "
                         f"this env has {len(limits)}")
    env.unwrapped.set_state(snap)
    for w, steps in zip(limits, kept):
        w._elapsed_steps = steps
