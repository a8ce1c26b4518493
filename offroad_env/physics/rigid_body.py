"""The physical vehicle: a 6-DOF chassis on K suspended wheels against the height map.

State (N environments, K wheels): the centre of mass ``c`` (world) and velocity ``v`` (world),
the attitude ``q`` (unit quaternion ``(w, x, y, z)``, body to world; the body axes are the
rear-axle frame's: x forward, y left, z up), the body-frame angular velocity ``w_b`` and the
wheel spins ``omega``. Substeps of ``h`` integrate it semi-implicitly: forces at the substep's
start, then ``v += h F / m``, ``w_b += h I^-1 (tau_b - w_b x I w_b)``, ``c += h v``,
``q <- q exp(h w_b / 2)``.

**Wheels.** Wheel j is a disc of radius r in the plane of its forward direction ``f`` (the body
x axis turned by its steering angle) and the body z axis, on a massless suspension along body z
that compresses by ``s`` from full extension. Its hub sits at the nominal hub (rear-axle frame
``(x_j, y_j, 0)``) when ``s`` is the static sag ``s0``. The disc meets the terrain where one of
its rim points ``Q_i = hub + d_i f - sqrt(r^2 - d_i^2) z_b`` lies on it: rim points are taken
at in-plane offsets ``d_i`` in [-r, r] spaced no wider than the map (``contact_spacing``), so
a ledge's edge is met at the angle ``cos(theta) = 1 - h / r`` where the map resolves the edge
(on a coarser grid the ledge is the grid's ramp, and the wheel climbs it as such). The
compression that brings rim point i onto the ground's tangent plane under it is ``s_i =
(H(Q_i) - Q_i,z) / (z_b . nu) nu_z`` (``nu`` the ground's normal there). The wheel rests on
the highest support of these points and of the segments between them
(:func:`~.body_contact.rim_support`): a massless wheel leaves a lower contact as soon as a
higher one lifts it, so its load is on one contact at a time, and at a ledge it passes from the
lower ground to the edge when the edge starts to lift the wheel. The contact normal is the disc's radius there, ``n = (sqrt(r^2 -
d^2) z_b - d f) / r``; its tangent in the wheel plane ``t = (d z_b + sqrt(r^2 - d^2) f) /
r``; the axle ``l`` (perpendicular to the plane). The ground pushes along its own normal: ``n``
turned about ``t`` by the tread's camber against the ground, and ``l`` with it
(:func:`~.body_contact.contact_frame`; below, ``n`` and ``l`` are those).
The tyre has the vehicle's ``wheel_width`` w: the ground under the tread's two edges may lift
it further, and the contact moves along the axle to the edge that bears
(:func:`~.body_contact.tyre_edges`), so a vehicle tipping over its downhill wheels pivots about
their outer edges.

**Forces at a wheel.** The suspension pushes along z_b with ``F_s = k s + c s' + k_b (s -
s_max)^+`` (``>= 0``: a wheel does not pull), ``s' = -(v_hub . n) / (n . z_b)``. The massless
wheel passes on the ground's force ``G = N n + F_x t + F_y l``, whose z_b component is the
suspension's: ``N (n . z_b) + F_x (t . z_b) + F_y (l . z_b) = F_s``, so ``N = (F_s - F_x t_z -
F_y l_z) / n_z``; where friction binds, ``|F| = mu N`` and N follows in closed form.
Tangential forces are those of the slip seed (:mod:`.slip`): the slip ratio and angle of the
contact's velocity against the rim speed ``omega r``, linear laws ``C_kappa kappa`` and ``-C_alpha
alpha`` capped by the force that stops the slip within the substep (the wheel's inertia and the
contact's share of the body's effective mass), on the friction circle ``mu N``, plus rolling resistance ``-c_rr N``.
The hub carries ``G`` into the chassis; the chassis also takes the reaction ``-T l`` of the
torque its motor (or brake) and bearing apply to the wheel, ``T - b_w omega``, where ``I_w omega' = T - r F_x -
b_w omega``.

**Drive and brake** (:mod:`.drive`): the stiff speed servo within the drive's torque limit, the
driven wheels and their coupling. Where every target of an environment is 0 the holding brake is
on: the wheels lock, and the friction that stops the body's motion in the contact plane within
the substep (against gravity and the springs) is given up to ``sum mu N`` (static, no creep),
kinetic friction ``mu N`` beyond (:func:`~.drive.braked_body_forces`, in the frame of the body's
z axis).

**Chassis.** The belly, bumpers and roof corners meet the terrain with a stiff spring-damper
and Coulomb friction: a bumper or roof point along the terrain's normal (a ledge's face; a body
that rolled over lands on its roof), the belly, facing the ground, as a plate along z_b (a
crest lifts it: the vehicle high-centres), sampled ``L / 6`` apart (a crest can sink between
two samples by up to ``L / 12`` times its flanks' slope). A roof corner on the ground at a
step's end is a vehicle on its side or back (``roof_contact``: the episode ends).

Units: m, s, kg, N, rad. Shapes: ``(N,)`` per environment, ``(K, N)`` per wheel (wheel-major),
``(K, M, N)`` per rim sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .body_contact import chassis_forces, contact_frame, roof_down, wheel_contacts
from .constants import GRAVITY
from .drive import braked_body_forces, caster_mask, group_sum, speed_servo, wheel_spin_rate
from .rigid_params import (RigidBodyParams, chassis_points, check_stable, for_vehicle,
                           inertia_tensor, substeps, suspension)
from .rotations import quat_step, rotation_entries, vcross, vdot, vmat, vrot, vrot_inv
from .slip import friction_ellipse, rolling_resistance, slip_angle, slip_ratio
from .soil import sinkage, tan_phi
from .soil_contact import check_tyre_width, rut_depth, soil_resistance, soil_shear
from .vehicle import Vehicle

__all__ = ["RigidBodyParams", "RigidBodyState", "rigid_body_step", "Layout", "make_layout",
           "BRAKE_RETURN_TIME"]

#: the holding brake returns a body to its anchor with this time constant [s] (``anchor``)
BRAKE_RETURN_TIME = 0.2


@dataclass
class RigidBodyState:
    """Batched state: ``pos`` ``(N, 3)`` centre of mass, world [m]; ``quat`` ``(N, 4)`` body to
    world ``(w, x, y, z)``; ``vel`` ``(N, 3)`` centre-of-mass velocity, world [m/s]; ``ang_vel``
    ``(N, 3)`` body-frame angular velocity [rad/s]; ``wheel_omega`` ``(N, K)`` [rad/s];
    ``wheel_sinkage`` ``(N, K)`` the depth of each wheel's rut on soil [m] (None: hard ground,
    or zeros)."""

    pos: torch.Tensor
    quat: torch.Tensor
    vel: torch.Tensor
    ang_vel: torch.Tensor
    wheel_omega: torch.Tensor
    wheel_sinkage: torch.Tensor | None = None


# ------------------------------------------------------------------------- the step
@dataclass(frozen=True)
class Layout:
    """Constants of a vehicle under a parameter set, as tensors (built once per step call)."""

    bx: torch.Tensor  #: (K, 1) nominal hubs from the centre of mass, body frame [m]
    by: torch.Tensor
    bz: torch.Tensor
    d: torch.Tensor   #: (M, 1) rim sample offsets along the wheel's forward direction [m]
    e: torch.Tensor   #: (M, 1) sqrt(r^2 - d^2) [m]
    belly: tuple      #: the belly's samples from the centre of mass, body frame [m]: three
    bumper: tuple     #: (P, 1) columns x, y, z (and: the bumpers' and the roof's corners,
    roof: tuple       #: which meet the ground's face alike; the roof's corners alone)
    k: torch.Tensor   #: (K, 1) suspension stiffness [N/m] (and below: damping [N s/m], static
    c: torch.Tensor   #: sag and bump-stop compression [m], bump-stop stiffness [N/m])
    s0: torch.Tensor
    s_max: torch.Tensor
    k_b: torch.Tensor
    inertia: tuple    #: 3 x 3 floats [kg m^2]
    inv_inertia: tuple


def make_layout(vehicle: Vehicle, p: RigidBodyParams, spacing: float, dtype, device,
                gravity: float = GRAVITY) -> Layout:
    """The :class:`Layout` of ``vehicle`` under ``p`` with rim samples ``spacing`` [m] apart
    (python floats in, tensors out: no numpy, so that a compiled step may build it)."""
    kw = dict(dtype=dtype, device=device)
    cx, cy, cz = vehicle.com
    col = lambda v: torch.tensor([[float(u)] for u in v], **kw)  # noqa: E731
    r = vehicle.wheel_radius
    reach = r * math.sin(math.radians(80.0))  # the steepest contact normal: 80 deg from z_b
    half = max(1, math.ceil(reach / spacing))
    d = [reach * (i - half) / half for i in range(2 * half + 1)]
    e = [math.sqrt(max(r * r - u * u, 0.0)) for u in d]
    xs, ys, zs, kind = chassis_points(vehicle, p)
    def cols(*k0):  # the points of kinds k0 (0 belly, 1 bumpers, 2 roof) as three columns
        which = [i for i, k in enumerate(kind) if k in k0]
        return (col([xs[i] - cx for i in which]), col([ys[i] - cy for i in which]),
                col([zs[i] - cz for i in which]))

    check_stable(vehicle, p, gravity)
    J, Ji = inertia_tensor(vehicle, p)
    sus = suspension(vehicle, p, gravity)
    return Layout(k=col(sus.k), c=col(sus.c), s0=col(sus.s0), s_max=col(sus.s_max),
                  k_b=col(sus.k_b),
        bx=col([q[0] - cx for q in vehicle.wheel_positions]),
        by=col([q[1] - cy for q in vehicle.wheel_positions]),
        bz=col([-cz] * vehicle.num_wheels), d=col(d), e=col(e),
        belly=cols(0), bumper=cols(1, 2), roof=cols(2), inertia=J,
        inv_inertia=Ji)


def rigid_body_step(vehicle: Vehicle, p: RigidBodyParams, s: RigidBodyState, maps, map_index,
                    targets: torch.Tensor, dt: float, steer: torch.Tensor | None = None,
                    mu=None, gravity: float = GRAVITY, max_torque: float | None = None,
                    driven: torch.Tensor | None = None, coupling: torch.Tensor | None = None,
                    layout: Layout | None = None, soil_strength=None, soil_phi=None,
                    wheel_soil=None, anchor=None):
    """Advance ``s`` by ``dt`` in ``ceil(dt / p.max_substep)`` substeps; returns ``(state,
    info)``.

    Args:
        maps: the height-map stack (simulation frame); map_index: ``(N,)`` int64.
        targets: ``(K, N)`` wheel-speed targets [rad/s] (wheel-major) of the speed servo;
            where all of an environment's are 0, its holding brake is on.
        steer: ``(K, N)`` steering angle of each wheel [rad] (None: none).
        mu: ground friction, a float or ``(N,)`` (None: ``p.mu``).
        max_torque: the drive's limit per wheel [N m] (None: ``p.max_torque``).
        driven: ``(K, 1)`` bool (None: all); coupling: ``(K, K)`` (:mod:`.drive`).
        layout: the constants of :func:`make_layout` (built here when None).
        soil_strength, soil_phi: ``(N,)`` per-environment variations of ``p.soil``
            (:meth:`~.soil.Soil.varied`; None: the soil as given).
        wheel_soil: ``(SoilView, soft, mu, c_rr)`` of :func:`~.soil_contact.wheel_soils`,
            each wheel's soil from the terrain's material map (``(K, N)``; the wheels where
            ``soft`` is False on rigid ground, with a surface's friction where ``mu`` is not
            NaN and its rolling resistance where ``c_rr`` is not NaN; either None: the map sets
            none), in place of ``p.soil`` (None: ``p.soil`` everywhere).
        anchor: ``(N, 3)`` where the holding brake took hold: the centre of mass's world
            ``(x, y)`` [m] and the body's yaw [rad] (None: no anchor). The brake then also
            returns the body toward it in its x-y plane (a velocity of ``-offset /
            BRAKE_RETURN_TIME``, within the same friction capacity): a locked tyre's contact
            sticks where it is instead of creeping by the rounding of a velocity-level
            solve. ``info["brake_slid"]`` ``(N,)`` says where friction gave way this step.

    ``info`` (wheel-major ``(K, N)`` unless said): ``normal_force`` N [N], ``support`` the
    ground force's vertical component [N] (normal and friction) and ``contact``
    (bool) of the last substep, ``contact_point`` and ``hub`` (3 tuples of ``(K, N)``, world
    [m]), ``wheel_hole`` (the disc's centre over a hole), ``compression`` [m], ``kappa``,
    ``torque`` [N m]; ``chassis_contact`` and ``roof_contact`` ``(N,)`` bool (any belly or
    bumper point / any roof corner on the ground in the last substep).
    """
    p = for_vehicle(p, vehicle, gravity)
    n_sub = substeps(dt, p)
    h = dt / n_sub
    dtype, dev = s.pos.dtype, s.pos.device
    if layout is None:
        spacing = p.contact_spacing or min(maps.resolution)
        layout = make_layout(vehicle, p, spacing, dtype, dev, gravity)
    sus = layout
    K, m, r = vehicle.num_wheels, vehicle.mass, vehicle.wheel_radius
    mu, t_max = (p.mu if mu is None else mu), (p.max_torque if max_torque is None else max_torque)
    J, Ji = layout.inertia, layout.inv_inertia
    k_c = m * gravity / (4.0 * p.chassis_sink)
    c_c = math.sqrt(k_c * m / 4.0)  # damping ratio 0.5 on four points
    brake = (targets == 0).all(0)
    caster = caster_mask(vehicle, dev)  # (K, 1) bool, or None: no casters
    group = 1.0 if coupling is None else coupling.sum(1, keepdim=True)
    give_free = r * r / (group * p.wheel_inertia)
    # each component a contiguous (N,) row: the fused loops that read them then vectorise over
    # N (strided reads of (N, 3) rows made them scalar)
    c, v, w, q = (list(_rows(t)) for t in (s.pos, s.vel, s.ang_vel, s.quat))
    omega = torch.stack(_rows(s.wheel_omega))
    if coupling is not None:
        omega = group_sum(coupling, omega) / group
    half_w = 0.5 * vehicle.wheel_width
    soil, soft = p.soil, None  # soft: the wheels on soil (None: all, where soil is given)
    mu_hard = mu  # the rigid ground's friction: the env's, or a surface's per wheel
    c_rr = p.c_rr  # the tyre's rolling resistance: the vehicle's, or a surface's per wheel
    if wheel_soil is not None:
        soil, soft, mu_map, c_rr_map = wheel_soil
        if c_rr_map is not None:
            c_rr = torch.where(torch.isnan(c_rr_map), torch.full_like(c_rr_map, p.c_rr),
                               c_rr_map)
        if mu_map is not None:
            mu_hard = torch.where(torch.isnan(mu_map), torch.as_tensor(mu).to(mu_map), mu_map)
    elif soil is not None and (soil_strength is not None or soil_phi is not None):
        soil = soil.varied(soil_strength, soil_phi)
    if soil is not None:  # the wheels' ruts (wheel-major)
        check_tyre_width(vehicle)
        z_rut = (torch.zeros_like(omega) if s.wheel_sinkage is None
                 else s.wheel_sinkage.T.contiguous())
    # the chassis' friction: the soil's, or the ground's (on a material map)
    mu_body = mu if soil is None or soft is not None else tan_phi(soil)
    slid = None
    for _ in range(n_sub):
        R = rotation_entries(*q)
        xb = (R[0][0], R[1][0], R[2][0])
        yb = (R[0][1], R[1][1], R[2][1])
        zb = (R[0][2], R[1][2], R[2][2])
        w_w = vrot(R, w)  # world angular velocity
        if steer is None:
            f, l_ = xb, yb
        else:
            cs, sn = torch.cos(steer), torch.sin(steer)
            f = tuple(cs * xb[i] + sn * yb[i] for i in range(3))
            l_ = tuple(cs * yb[i] - sn * xb[i] for i in range(3))
        wc = wheel_contacts(layout, c, R, f, l_, maps, map_index, r, half_w,
                            z_rut if soil is not None else None)
        s_c, touch, n, t, A, Cp = wc.compression, wc.touch, wc.n, wc.t, wc.hub, wc.point
        d_s, e_s = wc.d, wc.e
        ratio_n, ratio_t = e_s / r, d_s / r
        nl, ll, n_z, l_z = contact_frame(wc.slope, n, l_, ratio_n, brake)
        rho = tuple(Cp[i] - c[i] for i in range(3))
        wxr = vcross(w_w, rho)
        vC = tuple(v[i] + wxr[i] for i in range(3))
        s_dot = -vdot(vC, n) / ratio_n
        F_s = sus.k * s_c + sus.c * s_dot + sus.k_b * (s_c - sus.s_max).clamp_min(0.0)
        # at most the push that leaves the hub at v_out out of the ground after the substep,
        # holding its share m / K of the weight: ground that a step of the map puts deep under
        # a wheel at once (a wheel moving sideways onto a ledge) lifts it at that speed rather
        # than firing the body off its springs
        F_cap = (m / K) * ((p.max_separation_speed + s_dot).clamp_min(0.0) / h + gravity)
        F_s = torch.where(touch, torch.minimum(F_s, F_cap).clamp_min(0.0), torch.zeros_like(F_s))
        N0 = F_s / n_z
        # the same cap along the contact normal: a wheel wedged against a steep face (its
        # friction cone holding z_b) would need a normal force without bound to hold its
        # suspension's push; the ground gives at most the push that stops the approach and
        # leaves at v_out within the substep
        N_cap = (m / K) * ((p.max_separation_speed - vdot(vC, nl)).clamp_min(0.0) / h + gravity)
        # the other forces' acceleration this substep (gravity and the springs), to predict
        # the contact velocities friction must stop
        a_o = tuple((N0 * nl[i]).sum(0) / m for i in range(3))
        a_o = (a_o[0], a_o[1], a_o[2] - gravity)
        v_t0, v_l0 = vdot(vC, t), vdot(vC, ll)
        a_t, a_l = vdot(a_o, t), vdot(a_o, ll)
        v_t, v_l = v_t0 + h * a_t, v_l0 + h * a_l  # predicted, for the slip laws
        # the force that stops a contact's slip within the substep has two parts: the other
        # forces' acceleration, cancelled by the contact's share m / K of the body (the K
        # contacts then hold it exactly, as against a slope or a ledge's edge), and the slip
        # velocity, stopped with the contact's share of the body's effective mass along t and
        # l, 1 / (K (1/m + (rho x u) . J^-1 (rho x u))) (K contacts stopping a slip at once,
        # Jacobi, then never overshoot, in translation or in yaw: a light body turns faster
        # than it slides)
        m_t, m_l = (1.0 / (K * (1.0 / m + vdot(ub, vmat(Ji, ub))))
                    for ub in (vrot_inv(R, vcross(rho, u)) for u in (t, ll)))
        kappa = slip_ratio(v_t, omega, r, p.slip_eps)
        if soil is None or soft is not None:
            fx_lin = p.c_kappa * kappa
            fy_lin = -p.c_alpha * slip_angle(v_t, v_l, p.slip_eps)
            mu_w = mu_hard
        if soil is not None:
            fx_lin, fy_lin, mu_w = (_pick(soft, a, b) for a, b in zip(soil_shear(
                soil, 2 * half_w, r, z_rut, kappa, v_t, v_l, N0, p.slip_eps),
                (None, None, None) if soft is None else (fx_lin, fy_lin, mu_w)))

        def tyre(give):
            """Tangential forces and the normal force of a wheel whose spin yields to its
            ground force by ``give`` (``r^2 / I_w``; 0 for a wheel held at its speed)."""
            fx_st = (r * omega - v_t0) / (h * (give + 1.0 / m_t)) - a_t / (give + K / m)
            fy_st = -v_l0 * (m_l / h) - a_l * (m / K)
            fx = torch.where(fx_lin.abs() > fx_st.abs(), fx_st, fx_lin)
            fy = torch.where(fy_lin.abs() > fy_st.abs(), fy_st, fy_lin)
            N_d = (F_s - fx * ratio_t - fy * l_z) / n_z
            norm = torch.sqrt(fx * fx + fy * fy)
            over = norm > mu_w * N_d
            tilt = (fx * ratio_t + fy * l_z) / norm.clamp_min(1e-30)  # the slide's, along z_b
            N_sl = F_s / (n_z + mu_w * tilt).clamp_min(0.05)
            N = torch.minimum(torch.where(over, N_sl, N_d).clamp_min(0.0), N_cap)
            fx, fy = friction_ellipse(fx, fy, mu_w * N)
            return fx, fy, N

        fx, fy, N = tyre(give_free)
        fx_h, fy_h, N_h = tyre(0.0)
        torque, within = speed_servo(p, omega, targets, r * fx_h, h, t_max, coupling)
        if driven is not None:
            within = within & driven
        fx, fy, N = (torch.where(within, fx_h, fx), torch.where(within, fy_h, fy),
                     torch.where(within, N_h, N))
        T = torque.clamp(-t_max, t_max)
        if driven is not None:
            T = torch.where(driven, T, torch.zeros_like(T))
        # the holding brake: a velocity-level Coulomb solve in the body's x-y plane (with the
        # anchor: toward it)
        bs = _Planar(vdot(v, xb), vdot(v, yb), w[2])
        if anchor is not None:
            ox, oy = c[0] - anchor[:, 0], c[1] - anchor[:, 1]
            oyaw = torch.remainder(torch.atan2(R[1][0], R[0][0]) - anchor[:, 2] + math.pi,
                                   2 * math.pi) - math.pi
            back = 1.0 / BRAKE_RETURN_TIME
            bs = _Planar(bs.vx + back * (ox * xb[0] + oy * xb[1]),
                         bs.vy + back * (ox * yb[0] + oy * yb[1]),
                         bs.yaw_rate + back * oyaw * zb[2])
        Ng = tuple((N0 * nl[i]).sum(0) for i in range(3))
        fg = (Ng[0], Ng[1], Ng[2] - m * gravity)
        arm_x, arm_y, fgx, fgy = vdot(rho, xb), vdot(rho, yb), vdot(fg, xb), vdot(fg, yb)
        # the brake holds on the braked wheels' loads (a caster rolls and swivels free)
        N0_b = N0 if caster is None else torch.where(caster, torch.zeros_like(N0), N0)
        Fbx, Fby, Mb, share = braked_body_forces(bs, m, J[2][2], N0_b, mu_w, arm_x, arm_y,
                                                 fgx, fgy, h)
        # again with the normal forces that friction along the contact tangents leaves
        N_b = ((F_s - share * (Fbx * ratio_t + Fby * l_z)) / n_z).clamp_min(0.0)
        if caster is not None:
            N_b = torch.where(caster, torch.zeros_like(N_b), N_b)
        Fbx, Fby, Mb, share, slips = braked_body_forces(bs, m, J[2][2], N_b, mu_w, arm_x,
                                                        arm_y, fgx, fgy, h, slip=True)
        slid = slips if slid is None else slid | slips
        # braked wheels: locked; each contact takes its share of the body's friction along its
        # tangent and lateral (in the ground's plane), no rolling resistance
        fbx = share * Fbx
        fx = torch.where(brake, fbx, fx)  # a caster's share is 0: it is not braked
        fy = torch.where(brake, share * Fby, fy)
        if caster is not None:  # a caster turns to follow the motion: no force across it
            fy = torch.where(caster, torch.zeros_like(fy), fy)
        N_lk = ((F_s - fbx * ratio_t - share * Fby * l_z) / n_z).clamp_min(0.0)  # locked
        N = torch.where(brake, torch.minimum(N_lk, N_cap), N)
        if soil is None or soft is not None:  # within the friction circle with the tyre's
            frr = rolling_resistance(v_t, N, c_rr, p.v_eps, fx, fy, mu_w * N)  # forces
        if soil is not None:
            z_roll = sinkage(soil, 2 * half_w, r, N)  # the rolling sinkage of the load
            frr = _pick(soft, soil_resistance(soil, 2 * half_w, z_rut, z_roll, v_t, N,
                                              p.v_eps), None if soft is None else frr)
        frr = torch.where(brake, torch.zeros_like(frr), frr)
        if coupling is None:
            d_omega = (T - r * fx - p.wheel_damping * omega) / p.wheel_inertia
        else:
            d_omega, T = wheel_spin_rate(p, T, r * fx, omega, coupling)
        T = torch.where(brake, r * fx, T)
        # forces on the chassis: the ground's, at the contact
        G = tuple(N * nl[i] + (fx + frr) * t[i] + fy * ll[i] for i in range(3))
        tq = vcross(rho, G)
        # the wheel hands the chassis its ground force's moment less what its motor and bearing
        # take: (r F_x - T + b_w omega) about the axle (0 for a locked wheel, T = r F_x)
        spin = r * fx - T + p.wheel_damping * omega
        tau = [(tq[i] + spin * l_[i]).sum(0) for i in range(3)]
        F = [G[i].sum(0) for i in range(3)]
        tau = [tau[i] + torch.where(brake, Mb * zb[i], torch.zeros_like(Mb)) for i in range(3)]
        # the chassis points: the belly, the bumpers and roof corners against the ground
        F, tau, hit_b, hit_u = chassis_forces(F, tau, layout, R, c, v, w_w, maps, map_index,
                                              k_c, c_c, m / (4.0 * h), mu_body,
                                              p.max_separation_speed, gravity * h)
        F[2] = F[2] - m * gravity
        # semi-implicit Euler
        v = [v[i] + h * F[i] / m for i in range(3)]
        tau_b = vrot_inv(R, tau)
        Jw = vmat(J, w)
        gyro = vcross(w, Jw)
        w_dot = vmat(Ji, tuple(tau_b[i] - gyro[i] for i in range(3)))
        w = [w[i] + h * w_dot[i] for i in range(3)]
        c = [c[i] + h * v[i] for i in range(3)]
        q = quat_step(q, w, h)
        omega = torch.where(brake, torch.zeros_like(omega), omega + h * d_omega)
        if soil is not None:
            z_rut = _pick(soft, rut_depth(soil, 2 * half_w, r, z_rut, N, z_roll, v_t, kappa,
                                          r * omega, h, p.slip_sinkage),
                          None if soft is None else torch.zeros_like(z_rut))
    info = {"normal_force": N, "support": G[2], "contact": touch & (N > 0), "contact_point": Cp, "hub": A,
            "wheel_hole": wc.hole, "compression": s_c,
            "kappa": kappa, "torque": T, "chassis_contact": hit_b.any(0) | hit_u.any(0),
            "roof_contact": roof_down(c, q, layout.roof, maps, map_index),
            "brake_slid": slid}
    if soil is not None:
        info["sinkage"] = z_rut
    # (N, C) views of (C, N) memory: the layout the next step reads (column-major fields)
    new = RigidBodyState(torch.stack(c).T, torch.stack(q).T, torch.stack(v).T,
                         torch.stack(w).T, omega.T,
                         None if soil is None else z_rut.T)
    return new, info


def _rows(t: torch.Tensor):
    """The columns of ``t`` ``(N, C)`` as C contiguous ``(N,)`` tensors."""
    return (t.T if t.stride(0) == 1 else t.T.contiguous()).unbind(0)


def _pick(soft, on_soil, on_hard):
    """``on_soil`` where ``soft`` (None: everywhere), else ``on_hard`` (a tensor or a float)."""
    return on_soil if soft is None else torch.where(soft, on_soil, on_hard)


@dataclass
class _Planar:
    """The planar velocities :func:`~.drive.braked_body_forces` reads."""

    vx: torch.Tensor
    vy: torch.Tensor
    yaw_rate: torch.Tensor
