"""A cheaper model of a live env, for planning: the same config, maps and task on a kinematic
vehicle model, started from the live rows' state.

A sampling planner (MPPI) rolls many candidate action sequences forward each control step. On
the physical model (``dynamics="rigid_body"``) every look-ahead step integrates a 6-DOF chassis
on suspended wheels; a ground-following model over the same height map costs a fraction of that
and predicts the pose, the goal and the tilt limits from the same terrain. :class:`Surrogate`
keeps such a model beside a live env:

* :meth:`Surrogate.snapshot` converts the live rows' state into the cheaper model's: every
  field the two share is copied (pose, goal, task counters, the random streams, the sensors'
  filters, the previous action, the step count), the model's own fields come from the live
  body's velocities (:data:`TWINS`), and the vehicles are placed on the ground by the cheaper
  model (its own contact: ground following at the live pose);
* :meth:`Surrogate.lookahead` steps candidate actions from such a snapshot, as the live env's
  ``lookahead`` does (a :class:`~offroad_env.lookahead.Rollout`).

The cheaper model reads the same actions with the same meaning (:data:`TWINS`: the physical
model's ``steering="skid"`` drives as ``skid_steer``, ``"ackermann_rate"`` as ``ackermann``);
it does not model soil sinkage, suspension or dynamic tip-over (its tip-over is the static tilt
limits; a map's soils and surfaces it drives as hard ground of the config's friction), so a
plan's outcome may differ from the world's. How often it does is measured, not
assumed (``benchmarks/bench_surrogate.py``).

    from offroad_env.surrogate import Surrogate
    model = Surrogate(env)                            # env: an OffroadVectorEnv (physical)
    ro = model.lookahead(model.snapshot().repeat(K), actions)   # (H, N K, A) actions
"""

from __future__ import annotations

from dataclasses import replace

import torch

from terrain.materials import soft_materials

from offroad_env.lookahead import Lookahead, Rollout
from offroad_env.sim.simulator import Simulator
from offroad_env.snapshot import Snapshot, FORMAT_VERSION, config_digest, sim_maps_digest, \
    sim_tensors

__all__ = ["Surrogate", "TWINS", "twin_of"]


def _skid_fields(live, body) -> dict[str, torch.Tensor]:
    return {"vx_b": body[:, 0], "vy_b": body[:, 1], "yaw_rate": body[:, 2],
            "wheel_omega": live.state.wheel_omega}


def _ackermann_fields(live, body) -> dict[str, torch.Tensor]:
    return {"steer": live.state.steer_angle, "v": body[:, 0], "w": body[:, 2]}


#: ``{physical model's steering: (cheaper model, its fields from (live sim, body velocity (N,
#: 3): forward, left [m/s], yaw rate [rad/s]))}``
TWINS = {"skid": ("skid_steer", _skid_fields), "ackermann_rate": ("ackermann", _ackermann_fields)}


def twin_of(sim) -> str:
    """The kinematic model that reads ``sim``'s actions with their meaning (:data:`TWINS`);
    ValueError where there is none."""
    if sim.cfg.dynamics != "rigid_body":
        raise ValueError(f"a surrogate models the physical model (dynamics='rigid_body'); this "
                         f"env's dynamics is {sim.cfg.dynamics!r}, already a kinematic one: plan "
                         "on the env itself")
    steering = sim.model.params.steering
    if steering not in TWINS:
        raise ValueError(f"the physical model's steering {steering!r} has no kinematic twin "
                         f"that reads its actions alike; twins exist for {sorted(TWINS)}")
    return TWINS[steering][0]


class Surrogate:
    """A kinematic twin of the live env ``env`` (an offroad_env vector or single env, or a
    wrapper around one) on the same maps (shared, not copied); see the module docstring.
    ``dynamics``: the twin's model (default :func:`twin_of`); ``ground``: its ground method
    (default the live config's)."""

    def __init__(self, env, dynamics: str | None = None, ground: str | None = None):
        self.face = env.unwrapped
        live = self.face.sim
        steering = getattr(getattr(live.model, "params", None), "steering", None)
        want = twin_of(live)
        if dynamics is not None and dynamics != want:
            raise ValueError(f"the surrogate of a physical model with steering {steering!r} is "
                             f"{want!r} (the model that reads its actions alike), got "
                             f"dynamics={dynamics!r}")
        self._fields = TWINS[steering][1]
        maps = live.world_maps
        #: whether the live maps hold soils or surfaces that the twin drives as hard ground
        self.hard_ground = bool(soft_materials(live.maps))
        if self.hard_ground:  # the twin reads the heights only (a copy of the map stack)
            maps = maps.with_materials(materials=None, material_names=None)
        cfg = replace(live.cfg, heightmap=maps, dynamics=want, dynamics_params=None,
                      **({} if ground is None else {"ground": ground}))
        self.sim = Simulator(cfg, live.n, device=live.device, dtype=live.dtype,
                             compile=live.compiled)
        if not self.hard_ground:  # the live maps, shared
            self.sim.world_maps, self.sim.maps = live.world_maps, live.maps
        self.sim.next_starts = None  # it never resets on its own
        self.sim.reset(torch.ones(live.n, dtype=torch.bool, device=live.device))
        self.max_episode_steps = getattr(self.face, "max_episode_steps", None)
        self._lookaheads: dict[int, Lookahead] = {}

    def snapshot(self) -> Snapshot:
        """The live env's rows now, as the twin's snapshot (the module docstring says what is
        copied and what is converted)."""
        live, sim = self.face.sim, self.sim
        if live.state.contact is None:
            raise RuntimeError("Surrogate.snapshot() before the live env's first reset")
        own = self._fields(live, live.model.body_velocity(live.state))
        st = sim.state
        for name in st.fields:
            if name in own:
                value = own[name]
            elif name in live.state.fields:
                value = getattr(live.state, name)
            else:
                raise ValueError(f"the surrogate's state field {name!r} is neither in the live "
                                 "state nor converted from it")
            setattr(st, name, value.to(getattr(st, name).dtype).clone())
        sim.use_params(live.params)
        sim.map_range = live.map_range
        st.contact = sim._place_cold(None)  # the twin's own ground contact at the live pose
        t = sim_tensors(sim)
        done = getattr(self.face, "_done", None)
        if done is not None:
            t["env/done"] = done.clone()
        meta = {"format": FORMAT_VERSION, "config": config_digest(sim.cfg),
                "maps": sim_maps_digest(sim), "rows": sim.n, "face": "Surrogate"}
        return Snapshot(t, meta)

    def lookahead(self, snapshot: Snapshot, actions, horizon: int | None = None) -> Rollout:
        """Step ``actions`` (``(H, M, A)``, or a policy) on the twin from ``snapshot`` (M rows
        of :meth:`snapshot`, selected or repeated), as the live env's ``lookahead``."""
        m = len(snapshot)
        if m not in self._lookaheads:
            self._lookaheads[m] = Lookahead(self.sim, m, self.max_episode_steps)
        return self._lookaheads[m](snapshot, actions, horizon)
