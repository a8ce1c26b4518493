"""How often a drawn spawn on each map is a stable rest: the share a reset's redraws live on.

A reset draws a spawn again where it is no stable rest
(:func:`~offroad_env.core.spawn.redraw_until_rest`), up to :data:`~offroad_env.core.spawn.MAX_REDRAWS`
times, and raises where the vehicle still tips. A map whose spawns almost never rest (a DEM
window steeper than ``atan(mu)`` on average) therefore stops any environment sent there.
:func:`rest_shares` measures, for every map of a simulator's stack, the share of spawns drawn on
it that rest, with the reset's own code (spawn draws with their hole and goal redraws, the
model's placement and its braked rest, the same judgement), on scratch rows: the simulator's
state, streams and prepared starts are not touched. A terrain curriculum uses it to keep
environments off levels where they cannot start (:class:`wrappers.TerrainCurriculum`).
"""

from __future__ import annotations

import torch

from offroad_env.core import rng as rngmod
from offroad_env.core.spawn import spawn_with_redraws
from offroad_env.core.state import SimState
from offroad_env.task.task import static_tip_limits, tipped_over

__all__ = ["rest_shares", "MIN_REST_SHARE"]

#: the least share of resting spawns that makes a map range a place to start: below it the
#: 65 draws of a reset all fail for more than one reset in 10^8 (``0.75 ** 65 = 7e-9``)
MIN_REST_SHARE = 0.25
_SALT = 0x5E57  # the probe's streams, apart from any environment's seeds


def rest_shares(sim, samples: int = 32, seed: int = 0, chunk: int = 1024) -> torch.Tensor:
    """``(M,)`` float64: for each of the ``M`` maps of ``sim.maps``, the share of ``samples``
    spawns drawn on it (from fixed streams of ``seed``, so the figure is reproducible) that are
    a stable rest for the nominal vehicle: not past the static tip limits and, on a model with
    its own rest (the physical model), settling braked where friction holds it. Rows are
    computed ``chunk`` at a time (memory); nothing of ``sim`` changes.

    Cost: one placement (and, on the physical model, one braked settle) per sample; about 1.4 s
    for 140 maps x 32 samples on two cores. Raises ValueError for ``samples`` < 1."""
    if int(samples) != samples or samples < 1:
        raise ValueError(f"samples must be an int >= 1, got {samples!r}")
    maps, dev, dtype = sim.maps, sim.device, sim.dtype
    m = len(maps)
    which = torch.arange(m, device=dev).repeat_interleave(int(samples))
    keys = rngmod.keys_from_seeds(torch.arange(which.numel(), device=dev) + int(seed) * 2**32,
                                  device=dev) ^ _SALT
    roll_limit, pitch_limit = static_tip_limits(sim.vehicle)
    ok = torch.empty(which.numel(), dtype=torch.bool, device=dev)
    for lo in range(0, which.numel(), chunk):
        rows = which[lo:lo + chunk]
        n = rows.numel()
        st = SimState.zeros(n, sim.vehicle.num_wheels, sim.action_dim, dtype, dev,
                            sim.state.fields)
        st.keys = keys[lo:lo + chunk]
        use = torch.ones(n, dtype=torch.bool, device=dev)

        def draw(k, advance, st=st):
            u = rngmod.uniform(st.keys, st.counters, k, dtype)
            st.counters = st.counters + advance.to(torch.int64)
            return u
        s = spawn_with_redraws(draw, use, maps, sim.vehicle, sim.cfg.task, None, None,
                               (rows, torch.ones_like(rows)))
        st.restart(use, None, x=s.x, y=s.y, yaw=s.yaw, map_index=s.map_index,
                   goal_w=torch.stack((s.goal_x, s.goal_y), 1),
                   command=torch.stack((s.cmd_speed, s.cmd_yaw_rate), 1))
        gc = st.contact = sim.model.place(st, sim.vehicle, maps, None)
        rest = sim.model.rest(st, gc, maps, None, None)
        if rest is not None:
            gc = rest[1]
        bad = tipped_over(gc.roll, gc.pitch, roll_limit, pitch_limit)
        restless = sim.model.unrestful(gc)
        ok[lo:lo + n] = ~(bad if restless is None else bad | restless)
    return ok.view(m, int(samples)).double().mean(1)
