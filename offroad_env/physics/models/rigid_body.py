"""The physical model: a 6-DOF chassis on suspended wheels that places itself
(:func:`~offroad_env.physics.rigid_body.rigid_body_step`; parameters
:class:`~offroad_env.physics.rigid_params.RigidBodyParams` in ``SimConfig.dynamics_params``).

Actions in [-1, 1]:

* ``steering="skid"`` (the Husky, the rovers): ``(left, right)`` wheel-speed targets, scaled by
  ``max_speed / wheel_radius`` [rad/s], as the skid-steer model's; ``(0, 0)`` sets the holding
  brake.
* ``steering="ackermann"`` (the rc_truck, cars): ``(speed, steering angle)``: the driven
  wheels' speed targets are ``max_speed`` times the first component at the rear axle's centre,
  each wheel's scaled by its distance from the turning centre (an electronic differential);
  the front wheels (ahead of the centre of mass) steer to the Ackermann angles of the second
  component times ``max_steer`` [rad] (a steering servo, set each step). Speed 0 brakes.
* ``steering="ackermann_rate"``: ``(speed, steering rate)``: as ``"ackermann"``, but the
  second component moves the steering angle (the state ``steer_angle``, 0 at each episode's
  start) at that fraction of ``max_steer_rate`` [rad/s], held within ``max_steer``: a policy
  cannot jerk the wheels from lock to lock in one step.

Either Ackermann layout keeps its angle [rad] in ``steer_angle`` (the ``steering``
observation).

Which wheels are driven and how they are coupled come from the vehicle (:mod:`offroad_env.physics.drive`).

**Tip-over is a physical event** here (:attr:`RigidBody.judges_tip_over`): the body has rolled or pitched
past recovery, or lies on its roof or side. Past recovery: the centre of mass has passed over
the outermost wheel contacts, so gravity rolls it on: the force-angle margin at rest over the
contact points of all K wheels (airborne wheels at their lowest point) is negative. On a roof or
side: a roof corner of the chassis touches the ground. The static tilt limits of the kinematic
models do not apply (a vehicle on a bump may pass them for an instant). The force-angle margin
under the body's acceleration (the ``stability`` observation) is reported from the true contact
points and forces.

**Soil** is ``RigidBodyParams.soil`` everywhere, or the terrain's material map per sample
(:mod:`terrain.materials`; each wheel takes the soil under its hub at the start of a step, see
:mod:`offroad_env.physics.soil_contact`), not both. On a material map ``soil_strength`` varies every soil, and
``soil_phi`` (one soil's angle) is refused.

**A reset starts at the model's own rest** (:mod:`offroad_env.physics.rest`): from the rigid rest of
``rigid_contact``, the body is moved to where its springs, tyres and (on soil) ruts hold it
braked: each wheel on its surface along its own contact normal, each spring at its own load's
sag, each wheel in the rut of its load. The first observation is that state (loads, rut, an IMU
reading g). A drawn spawn whose rest does not settle, cannot be held by friction
(``|g_xy| > sum mu_j N_j``), or tips (the static margin below) is drawn again.
Per-environment friction (domain randomization) is applied;
per-environment mass properties are refused (the model uses the preset's).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch

from ..drive import coupling_matrix, driven_mask, side_targets
from ..ground import place
from ..ground.contact import assemble
from ..rigid_body import RigidBodyState, make_layout, rigid_body_step
from ..rest import settle
from ..rigid_params import RigidBodyParams, check_stable, for_vehicle, stable_default
from terrain.materials import HARD, material_at

from ..soil import inverse_table
from ..soil_contact import check_tyre_width, soil_table, wheel_soils
from ..body_contact import roof_down
from ..rotations import matvec3, quat_from_ypr, rotation_entries, vrot, ypr_from_entries
from ..stability import edge_table, energy_margin, force_angle_margin
from .base import Drive, Field, ModelStep, VehicleModel, register_model

__all__ = ["RigidBody"]


@register_model
class RigidBody(VehicleModel):
    name = "rigid_body"
    action_labels = ("left wheel speed / speed",
                     "right wheel speed / steering angle / steering rate")
    fields = {"body_pos": Field((3,), column_major=True),
              "body_quat": Field((4,), column_major=True),
              "body_vel": Field((3,), column_major=True),
              "body_rate": Field((3,), column_major=True),
              "wheel_omega": Field(("K",), column_major=True),
              "wheel_sinkage": Field(("K",), column_major=True), "steer_angle": Field(()),
              "brake_anchor": Field((3,)), "energy_margin": Field(())}
    Params = RigidBodyParams
    support_from_loads = True
    judges_tip_over = True
    #: its mass properties and wheel radius are the preset's (its layout and contact constants
    #: are built from them once)
    per_env_params = ("friction", "accel_noise", "gyro_noise", "soil_strength", "soil_phi")

    def __init__(self, cfg, vehicle):
        super().__init__(cfg, vehicle)
        p = for_vehicle(super().params, vehicle, cfg.gravity)
        self._params = p = stable_default(vehicle, p, cfg.gravity)
        check_stable(vehicle, p, cfg.gravity)  # refused here, where the parameters enter
        if p.soil is not None:
            check_tyre_width(vehicle)
        self._cache = {}
        self._checked_params = None
        self._front = [q[0] > vehicle.com[0] for q in vehicle.wheel_positions]
        if p.steering != "skid" and not any(self._front):
            raise ValueError(f"steering={p.steering!r} needs wheels ahead of the centre of "
                             "mass")

    @property
    def params(self) -> RigidBodyParams:
        """``cfg.dynamics_params`` (or the defaults) with the vehicle's defaults filled in."""
        return self._params

    @property
    def ground_mu(self) -> float:
        return self.params.mu

    def check_maps(self, maps) -> None:
        """Material maps name known soils and surfaces (or ``"hard"``), and not beside
        ``p.soil``."""
        names = maps.material_names or ()
        if any(n != HARD for n in names):
            if self.params.soil is not None:
                raise ValueError(
                    f"the terrain's material map names materials {list(names)} and "
                    f"RigidBodyParams.soil is {self.params.soil.name!r}: give soil by one of "
                    "them (soil=None to take the map's)")
            check_tyre_width(self.vehicle)
            # unknown names and bad declarations are refused here
            soil_table(names, torch.float32, "cpu", maps.material_defs_key)

    def param_refusals(self, names, maps) -> dict[str, str]:
        out = super().param_refusals(names, maps)
        soils = [n for n in (maps.material_names or ()) if n != HARD]
        if "soil_phi" in names and soils:
            out["soil_phi"] = (f"one soil's friction angle cannot vary on a material map of "
                               f"several soils ({soils}); vary soil_strength")
        return out

    def _wheel_soils(self, state, maps, params):
        """``(SoilView, soft)`` of each wheel's sample of the material map, under its hub
        (``(K, N)``; :func:`~..soil_contact.wheel_soils`), or None without soil in the map."""
        names = maps.material_names
        if names is None or all(n == HARD for n in names):
            return None
        like = state.x
        key = (names, maps.material_defs_key, like.dtype, like.device)
        if key not in self._cache:
            inverse_table(like.dtype, like.device)
            self._cache[key] = soil_table(names, like.dtype, like.device,
                                          maps.material_defs_key)
        if params is not None and params is not self._checked_params:
            if bool((params["soil_phi"] != 0).any()):
                raise ValueError("soil_phi (one soil's friction angle) cannot vary on a material "
                                 "map of several soils; vary soil_strength")
            self._checked_params = params
        layout = self._constants(like, maps)[0]
        off = vrot(rotation_entries(*state.body_quat.unbind(1)),
                   (layout.bx, layout.by, layout.bz))
        idx = material_at(maps, state.body_pos[:, 0] + off[0], state.body_pos[:, 1] + off[1],
                          state.map_index)
        return wheel_soils(self._cache[key], idx,
                           None if params is None else params["soil_strength"])

    def _constants(self, like, maps):
        """The layout, coupling, driven mask and edge table in ``like``'s dtype and device."""
        key = (like.dtype, like.device, maps.resolution)
        if key not in self._cache:
            p, v = self.params, self.vehicle
            if p.soil is not None:  # the sinkage tables, eagerly (a compiled step reads them)
                inverse_table(like.dtype, like.device)
            spacing = p.contact_spacing or min(maps.resolution)
            self._cache[key] = (make_layout(v, p, spacing, like.dtype, like.device,
                                            self.cfg.gravity),
                                coupling_matrix(v, like.dtype, like.device),
                                driven_mask(v.driven, like.device), edge_table(v, like.device))
        return self._cache[key]

    def _commands(self, a, angle):
        """``(targets (K, N) [rad/s], steering (K, N) [rad] or None, steering angle (N,)
        [rad] or None)`` of actions ``a``; ``angle`` ``(N,)``: the steering angle before."""
        cfg, v, p = self.cfg, self.vehicle, self.params
        r = max(v.wheel_radius, 1e-3)
        if p.steering == "skid":
            return (side_targets(v, a[:, 0], a[:, 1]) * (cfg.max_speed / r)).T, None, None
        speed = a[:, 0] * cfg.max_speed
        if p.steering == "ackermann_rate":
            angle = (angle + a[:, 1] * (p.max_steer_rate * cfg.dt)).clamp(-p.max_steer,
                                                                          p.max_steer)
        else:
            angle = a[:, 1] * p.max_steer
        tan_d = torch.tan(angle)
        L = v.wheel_base
        targets, steer = [], []
        for (x, y), front in zip(v.wheel_positions, self._front):
            # the turning centre lies on the rear axle at y = L / tan(delta): a wheel's speed is
            # its distance from it over the rear axle centre's (x, y: the wheel in the rear-axle
            # frame); a front wheel steers to point square to that radius
            ratio = torch.sqrt((x * tan_d / L) ** 2 + (1.0 - y * tan_d / L) ** 2)
            targets.append(speed * ratio / r)
            steer.append(torch.atan2(x * tan_d, L - y * tan_d) if front
                         else torch.zeros_like(speed))
        return torch.stack(targets), torch.stack(steer), angle

    def _check_vehicle(self, vehicle):
        if vehicle is self.vehicle or getattr(self, "_checked", None) is vehicle:
            return
        base = self.vehicle
        same = (torch.all(vehicle.mass == base.mass)
                and all(torch.all(c == b) for c, b in zip(vehicle.com, base.com))
                and torch.all(vehicle.wheel_radius == base.wheel_radius))
        if not bool(same):
            raise ValueError("the rigid_body model takes per-environment friction, but not "
                             "per-environment mass, centre of mass or wheel radius (it uses "
                             f"the preset's: mass {base.mass} kg, com {base.com} m)")
        self._checked = vehicle

    def advance(self, state, vehicle, params, maps, action, want_loads) -> ModelStep:
        cfg, p, v = self.cfg, self.params, self.vehicle
        self._check_vehicle(vehicle)
        layout, coupling, driven, _ = self._constants(state.x, maps)
        ws = self._wheel_soils(state, maps, params)
        on_soil = p.soil is not None or ws is not None
        s0 = RigidBodyState(state.body_pos, state.body_quat, state.body_vel, state.body_rate,
                            state.wheel_omega, state.wheel_sinkage if on_soil else None)
        targets, steer, angle = self._commands(action, state.steer_angle)
        if angle is not None:
            state.steer_angle = angle
        s, info = rigid_body_step(
            v, p, s0, maps, state.map_index, targets, cfg.dt, steer=steer,
            mu=None if params is None else params["friction"], gravity=cfg.gravity,
            max_torque=v.wheel_torque, driven=driven, coupling=coupling, layout=layout,
            soil_strength=None if params is None else params["soil_strength"],
            soil_phi=None if params is None or ws is not None else params["soil_phi"],
            wheel_soil=ws, anchor=state.brake_anchor)
        state.body_pos, state.body_quat, state.body_vel, state.body_rate = \
            s.pos, s.quat, s.vel, s.ang_vel
        state.wheel_omega = s.wheel_omega
        if on_soil:
            state.wheel_sinkage = s.wheel_sinkage
        # the brake's anchor stays while it holds; it follows the body otherwise
        held = ((targets == 0).all(0) & ~info["brake_slid"]).unsqueeze(1)
        state.brake_anchor = torch.where(held, state.brake_anchor, _anchor(s.pos, s.quat))
        gc, R = self._contact(state, maps, info)
        # the step's mean acceleration of the centre of mass, in the body frame at its end
        acc_w = (s.vel - s0.vel) / cfg.dt
        accel_b = matvec3(R.transpose(1, 2), acc_w)
        drive = Drive(info["kappa"].T, info["torque"].T, s.wheel_omega)
        return ModelStep(gc, drive, self.body_velocity(state), accel_b)

    def rest(self, state, contact, maps, params, idx):
        """The model's own braked rest (:func:`~offroad_env.physics.rest.settle`) of the rows ``idx`` (None: all)
        placed at ``contact`` (their rigid rest): the body at rest there, each spring at its
        own load's sag and each wheel in the rut of its load on soil. Returns ``(fields,
        placement)``: the rows' state fields and their placement from that rest (its loads,
        the ground's whole vertical force on each wheel; ``converged`` False where the rest
        does not settle or friction cannot hold it: the spawn is drawn again)."""
        rows = (lambda u: u) if idx is None else (lambda u: u[idx])
        prm = None if params is None else {k: rows(v) for k, v in params.items()}
        gc, v, p = contact, self.vehicle, self.params
        like = gc.position
        q = quat_from_ypr(gc.yaw, gc.pitch, gc.roll).to(like.dtype)
        com = torch.tensor(v.com, dtype=like.dtype, device=like.device)
        ns = SimpleNamespace(x=rows(state.x), y=rows(state.y), yaw=rows(state.yaw),
                             map_index=rows(state.map_index),
                             body_pos=gc.position + matvec3(gc.rotation, com), body_quat=q,
                             body_rate=torch.zeros_like(gc.position))
        layout = self._constants(like, maps)[0]
        ws = self._wheel_soils(ns, maps, prm)
        soil, soft, mu = p.soil, None, p.mu if prm is None else prm["friction"]
        if ws is not None:
            soil, soft, mu_map = ws.soil, ws.soft, ws.mu
            if mu_map is not None:
                mu = torch.where(torch.isnan(mu_map), torch.as_tensor(mu).to(mu_map), mu_map)
        elif soil is not None and prm is not None:
            soil = soil.varied(prm["soil_strength"], prm["soil_phi"])
        r = settle(v, layout, ns.body_pos.T.unbind(0), q.T.unbind(0), maps, ns.map_index,
                   self.cfg.gravity, mu, soil, soft)
        ns.body_pos, ns.body_quat = torch.stack(r.c).T, torch.stack(r.q).T
        wc = r.contacts
        info = {"contact": wc.touch & (r.N > 0), "contact_point": wc.point, "hub": wc.hub,
                "normal_force": r.N, "support": r.G[2], "wheel_hole": wc.hole,
                "roof_contact": roof_down(r.c, r.q, layout.roof, maps, ns.map_index)}
        placed = self._contact(ns, maps, info, r.settled & r.holds, r.settled)[0]
        zero = torch.zeros_like(ns.body_pos)
        fields = {"brake_anchor": _anchor(ns.body_pos, ns.body_quat), "body_pos": ns.body_pos,
                  "energy_margin": ns.energy_margin, "body_quat": ns.body_quat, "body_vel": zero,
                  "body_rate": zero, "wheel_omega": torch.zeros_like(wc.s.T),
                  "x": ns.x, "y": ns.y, "yaw": ns.yaw}
        if r.z_rut is not None:
            fields["wheel_sinkage"] = r.z_rut.T
        return fields, placed

    def _contact(self, state, maps, info, converged=None, settled=None):
        """The step's placement (a ``GroundContact`` with loads; ``converged`` ``(N,)``: all
        True unless given) and the rotation ``(N, 3, 3)``; writes the rear-axle pose ``x, y,
        yaw`` of ``state`` (yaw continued without wrapping)."""
        cfg, v = self.cfg, self.vehicle
        _, _, _, table = self._constants(state.x, maps)
        Re = rotation_entries(*state.body_quat.unbind(1))
        yaw, pitch, roll = ypr_from_entries(Re)
        yaw = state.yaw + torch.remainder(yaw - state.yaw + math.pi, 2 * math.pi) - math.pi
        cx, cy, cz = v.com
        t = tuple(state.body_pos[:, i] - (Re[i][0] * cx + Re[i][1] * cy + Re[i][2] * cz)
                  for i in range(3))
        state.x, state.y, state.yaw = t[0], t[1], yaw
        hub, cp = info["hub"], info["contact_point"]
        n = info["normal_force"]
        # vertical support of each wheel: the ground force's z component (normal and friction)
        up = torch.where(info["contact"], info["support"], torch.zeros_like(n)).clamp_min(0.0)
        gap = torch.where(info["contact"], torch.zeros_like(n),
                          hub[2] - v.wheel_radius - maps.height(hub[0], hub[1],
                                                                state.map_index))
        ground_h = torch.where(info["contact"], cp[2], hub[2] - v.wheel_radius - gap)
        off_map = ~maps.in_bounds(hub[0], hub[1])
        # past recovery: the static force-angle margin over every wheel's lowest point
        low = torch.stack((cp[0], cp[1], torch.where(info["contact"], cp[2],
                                                     hub[2] - v.wheel_radius)), -1)
        com_w = state.body_pos
        zero = torch.zeros_like(com_w)
        everyone = torch.ones_like(n, dtype=torch.bool).T
        static = force_angle_margin(low.transpose(0, 1), everyone, com_w, zero, cfg.gravity,
                                    table)
        # the energy margin over the same points, with the body's rotation (world)
        J = self._constants(state.x, maps)[0].inertia
        omega_w = torch.stack(vrot(Re, state.body_rate.unbind(1)), 1)

        def about(a):  # a^T (R J R^T) a, through the body-frame axis R^T a
            ab = tuple(sum(Re[k][i].unsqueeze(1) * a[..., k] for k in range(3))
                       for i in range(3))
            return sum(ab[i] * J[i][j] * ab[j] for i in range(3) for j in range(3))
        state.energy_margin = energy_margin(low.transpose(0, 1), com_w, omega_w, about, v.mass,
                                            table, cfg.gravity)
        stable = (static >= 0) & ~info["roof_contact"]
        ypr = torch.stack((yaw, pitch, roll), 1)
        done = torch.ones_like(yaw, dtype=torch.bool) if converged is None else converged
        offs = tuple(hub[i] - t[i] for i in range(3))
        gc = assemble(v, ypr, Re, torch.stack(t, 1), None, ground_h, info["wheel_hole"],
                      off_map, cfg.d_eps, cfg.gravity, done, torch.ones_like(
                          yaw, dtype=torch.int32), gap=gap, forces=up, stable=stable,
                      offs=offs, settled=settled)
        return gc, gc.rotation

    def place(self, state, vehicle, maps, idx):
        self._constants(state.x, maps)  # built here, eagerly, before a compiled step needs them
        rows = (lambda u: u) if idx is None else (lambda u: u[idx])
        return place("rigid_contact", self.vehicle, maps, rows(state.x), rows(state.y),
                     rows(state.yaw), rows(state.map_index), d_eps=self.cfg.d_eps,
                     gravity=self.cfg.gravity, loads=False).with_loads()

    def lost_support(self, contact):
        return ~contact.stable

    def unrestful(self, contact):
        return ~contact.converged | ~contact.stable

    def unstable(self, contact):
        return ~contact.settled | ~contact.stable

    def body_velocity(self, state):
        """Forward and left speed of the centre of mass [m/s] and the body's yaw rate [rad/s]
        (body frame)."""
        R = rotation_entries(*state.body_quat.unbind(1))
        v = state.body_vel.unbind(1)
        vx = R[0][0] * v[0] + R[1][0] * v[1] + R[2][0] * v[2]
        vy = R[0][1] * v[0] + R[1][1] * v[1] + R[2][1] * v[2]
        return torch.stack((vx, vy, state.body_rate[:, 2]), 1)


def _anchor(pos, quat):
    """``(N, 3)`` the brake's anchor of a body: its centre of mass's world ``(x, y)`` [m] and
    its heading [rad] (the body x axis' azimuth)."""
    R = rotation_entries(*quat.unbind(1))
    return torch.stack((pos[:, 0], pos[:, 1], torch.atan2(R[1][0], R[0][0])), 1)
