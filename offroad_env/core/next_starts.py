"""Each environment's next start, prepared ahead in batches: what a masked reset computes, for
many rows at once.

A reset draws a spawn from the row's own random stream, places the vehicle and, on the physical
model, settles it at its braked rest (:func:`~offroad_env.physics.rest.settle`, a Newton solve
with a host sync per iteration), drawing again where the spawn cannot rest. That costs mostly per
call, not per row (eager on two cores: about 70 ms for one row, 440 ms for 256), and training
resets a few rows at almost every step. :class:`NextStarts` computes the start of each row's
next episode (its draws, its redraws, its rest: the reset's own code, run on the row's current
stream) for many rows in one call, keeps it, and a masked reset puts in the rows it has ready.

What a reset would compute for a row depends only on its stream (``keys``, ``counters``), its
map range, the per-environment parameters and the maps, and a row's rest does not depend on the
rows settled with it (``settle`` holds a settled row where it settled). So a prepared start is
used only while those are what they were when it was prepared; then the reset is the same as
without it (to the last bit with ATen's scalar kernels; vectorised, a row can round by 1 ulp by
where it falls in a batch, as between any two subset resets). A reset that meets a row without a valid prepared start computes that row together
with up to ``batch`` other rows whose start is not ready: never more solver calls than
without preparation.

Snapshots (:mod:`.snapshot`) carry the prepared starts: an env restored from one prepares in
the batches of the env it was taken from, so it replays it bit for bit.

It is used only where it can pay and stay exact: on the CPU's subset resets, without reset or
interval events, without per-environment parameters, with a noiseless IMU (those move the
streams during an episode), and for drawn starts (a given start pose or goal is computed where
it is given).
"""

from __future__ import annotations

import torch

from offroad_env.physics.batch import merge_rows
from offroad_env.core.spawn import redraw_until_rest, warn_restless_starts
from offroad_env.core.state import STREAM_FIELDS

__all__ = ["NextStarts", "usable", "start_rows"]


def usable(sim) -> bool:
    """Whether ``sim``'s resets can be prepared ahead (module docstring): subset resets, no
    events, no per-environment parameters, a noiseless IMU."""
    imu = sim.cfg.imu
    quiet = not (imu.accel_noise or imu.gyro_noise or imu.accel_bias_walk
                 or imu.gyro_bias_walk)
    events = any(sim._events.values())
    return bool(sim.subset_resets and quiet and not events and sim.params is None)


def start_rows(sim, mask: torch.Tensor, idx: torch.Tensor | None, start, goal):
    """Start new episodes in the reset rows of ``sim`` (``mask``; ``idx`` their indices, or
    None for all N rows; ``start`` / ``goal`` given poses / goals of those rows, or None) and
    return their placement: a drawn spawn off a stable rest is drawn again from the row's own
    stream, from the prepared starts where they serve (:class:`NextStarts`); a given start is
    kept, and one that cannot rest is said (once)."""
    ahead = sim.next_starts
    if ahead is not None and idx is not None and start is None and goal is None \
            and usable(sim):
        return ahead.start(mask, idx)
    gc = sim._start_episodes(mask, idx, start, goal)
    if start is None:
        return redraw_until_rest(sim, gc, mask, idx, goal)
    warn_restless_starts(sim, gc, mask, idx)
    return gc


class NextStarts:
    """The prepared next starts of ``sim``'s rows (module docstring).

    Attributes:
        batch: rows prepared at most in one call besides those a reset needs now.
        prepared: ``(N,)`` bool, the rows holding a prepared start (valid or not).
        calls: how many prepare calls ran.
        rows_prepared: how many rows they prepared.
        rows_taken: how many reset rows took a prepared start.
    """

    def __init__(self, sim, batch: int = 512):
        self.sim = sim
        self.batch = int(batch)
        n = sim.n
        self.prepared = torch.zeros(n, dtype=torch.bool, device=sim.device)
        self._keys = torch.zeros(n, dtype=torch.int64, device=sim.device)
        self._counters = torch.zeros(n, dtype=torch.int64, device=sim.device)
        self._range = None  # the map range rows at preparation (lo, count), or None
        self._maps = None
        self._rows: dict | None = None  # field -> (N, ...) prepared values
        self._contact = None
        self.calls = self.rows_prepared = self.rows_taken = 0

    def held(self) -> dict | None:
        """What it holds, for a snapshot (None: nothing prepared on these maps): ``rows``
        (field -> ``(N, ...)``), ``contact``, and ``(N,)`` ``prepared``, ``keys``,
        ``counters`` and the map range ``range_lo``, ``range_count`` (absent: no range)."""
        if self._rows is None or self.sim.maps is not self._maps:
            return None
        out = {"rows": self._rows, "contact": self._contact, "prepared": self.prepared,
               "keys": self._keys, "counters": self._counters}
        if self._range is not None:
            out["range_lo"], out["range_count"] = self._range
        return out

    def hold(self, held: dict | None) -> None:
        """Take what :meth:`held` gave (a snapshot's restore; None: nothing prepared). A
        restored env then prepares in the same batches as the env the snapshot was taken
        from, so it replays it bit for bit (a row's rest may round by 1 ulp by where it falls
        in a batch)."""
        if held is None:
            self._rows = self._contact = self._range = self._maps = None
            self.prepared = torch.zeros_like(self.prepared)
            return
        self._rows, self._contact = dict(held["rows"]), held["contact"]
        self.prepared, self._keys, self._counters = (held[k] for k in
                                                     ("prepared", "keys", "counters"))
        self._range = ((held["range_lo"], held["range_count"]) if "range_lo" in held
                       else None)
        self._maps = self.sim.maps

    def valid(self) -> torch.Tensor:
        """``(N,)`` bool: the rows whose prepared start is what their reset would compute now."""
        st, sim = self.sim.state, self.sim
        if self._rows is None or sim.maps is not self._maps:
            return torch.zeros_like(self.prepared)
        ok = self.prepared & (st.keys == self._keys) & (st.counters == self._counters)
        rng = sim.map_range
        if (rng is None) != (self._range is None):
            return torch.zeros_like(ok)
        if rng is not None:
            ok = ok & (rng[0] == self._range[0]) & (rng[1] == self._range[1])
        return ok

    def start(self, mask: torch.Tensor, idx: torch.Tensor):
        """Start new episodes in the rows ``idx`` ``(M,)`` (``mask`` ``(N,)`` marks them), as
        the reset's spawn, redraws and rest would; returns their placement (M rows)."""
        if idx.numel() == 0:  # nothing to start
            return self.sim.state.contact[idx]
        valid = self.valid()
        if not bool(valid[idx].all()):
            invalid = ~valid
            invalid[idx] = False
            others = torch.nonzero(invalid).flatten()[:self.batch]
            self._prepare(torch.cat((idx[~valid[idx]], others)))
        st = self.sim.state
        for name, f in st.fields.items():  # a term's field kept across episodes stays live
            if f.episodic or name in STREAM_FIELDS:
                setattr(st, name, merge_rows(getattr(st, name), self._rows[name][idx], idx=idx))
        st.contact = st.contact.merge_rows(self._contact[idx], idx=idx)
        self.prepared = self.prepared.index_fill(0, idx, False)
        self.rows_taken += idx.numel()
        return st.contact[idx]

    def _prepare(self, rows: torch.Tensor) -> None:
        """Run the reset's draws, redraws and rest on ``rows`` (their current streams), keep
        what they start with, and put the live state back as it was."""
        sim = self.sim
        st = sim.state
        names = (*st.fields, "contact")
        saved = {name: getattr(st, name) for name in names}
        rng = sim.map_range
        fresh = (self._rows is None or sim.maps is not self._maps
                 or (rng is None) != (self._range is None))
        try:
            m = torch.zeros(sim.n, dtype=torch.bool, device=sim.device).index_fill_(0, rows, True)
            gc = sim._start_episodes(m, rows, None, None)
            redraw_until_rest(sim, gc, m, rows, None)
            if fresh:  # every row's prepared start is void: keep whole tensors
                self._rows = {name: getattr(st, name) for name in st.fields}
                self._contact = st.contact
            else:
                for name in st.fields:
                    self._rows[name] = merge_rows(self._rows[name], getattr(st, name)[rows],
                                                  idx=rows)
                self._contact = self._contact.merge_rows(st.contact[rows], idx=rows)
        finally:
            for name, value in saved.items():
                setattr(st, name, value)
        if fresh:
            self.prepared = torch.zeros_like(self.prepared)
            self._maps = sim.maps
            self._range = None if rng is None else (rng[0].clone(), rng[1].clone())
        elif rng is not None:
            self._range = (merge_rows(self._range[0], rng[0][rows], idx=rows),
                           merge_rows(self._range[1], rng[1][rows], idx=rows))
        self._keys = merge_rows(self._keys, st.keys[rows], idx=rows)
        self._counters = merge_rows(self._counters, st.counters[rows], idx=rows)
        self.prepared = self.prepared.index_fill(0, rows, True)
        self.calls += 1
        self.rows_prepared += rows.numel()
