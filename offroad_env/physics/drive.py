"""The drive: motors, the holding brake and the drive layout, for every model with wheel spin.

A model with spinning wheels (skid-steer today, the physical model next) drives them with these:

* :func:`side_targets` -- left/right commands to per-wheel values.
* :func:`speed_servo` -- the stiff wheel-speed servo within the drive's torque limit;
  :func:`speed_controller` -- the slip seed's proportional one.
* :func:`braked_body_forces` -- the holding brake at zero command: locked wheels, static
  friction up to ``mu`` times the normal loads (no creep), kinetic friction beyond.
* The layout (:class:`~offroad_env.physics.vehicle.Vehicle`'s ``driven`` and ``coupling``):
  :func:`driven_mask` -- the wheels the motors drive (an undriven wheel rolls free);
  :func:`coupling_matrix` -- which driven wheels turn together. ``"independent"``: a motor per
  wheel; ``"side"``: each side's driven wheels are geared together (a chain or a belt to one
  motor, as on the Husky), so they share one speed and the side's torque, ``n_side`` times a
  wheel's limit, goes to whichever wheel has grip: a wheel that leaves the ground hands its
  share to the others on its side.

``params`` here is any parameter set with ``wheel_inertia`` ``I_w`` [kg m^2] and
``wheel_damping`` ``b_w`` [N m s/rad] (and ``speed_gain``, ``max_torque`` for the proportional
controller), such as :class:`~offroad_env.physics.skid.SkidSteerParams`. Arrays are wheel-major
``(K, N)`` where the docstrings say so; body frame x forward, y left.
"""

from __future__ import annotations

import torch

from .vehicle import Vehicle

__all__ = ["side_targets", "speed_controller", "speed_servo", "wheel_spin_rate",
           "braked_body_forces", "driven_mask", "caster_mask", "coupling_matrix", "group_sum"]


def side_targets(vehicle: Vehicle, left, right) -> torch.Tensor:
    """``(N, K)`` per-wheel values from left/right ``(N,)`` values (left: wheels with y > 0)."""
    is_left = torch.tensor([p[1] > 0 for p in vehicle.wheel_positions], device=left.device)
    return torch.where(is_left, left.unsqueeze(1), right.unsqueeze(1))


def speed_controller(params, omega, target, t_max=None) -> torch.Tensor:
    """The ``"proportional"`` controller's torque ``clamp(k (target - omega), +-T_max)`` [N m]
    (``t_max``: the limit; None: ``params.max_torque``)."""
    t_max = params.max_torque if t_max is None else t_max
    return (params.speed_gain * (target - omega)).clamp(-t_max, t_max)


def speed_servo(params, omega, target, ground_torque, dt: float, t_max, coupling=None):
    """The stiff wheel-speed servo: ``(torque, within)``, each shaped like ``omega``.

    The torque that brings a wheel from ``omega`` to ``target`` [rad/s] within ``dt`` against
    its ``ground_torque`` (``R F_x`` [N m]) and its bearing damping,
    ``I_w (target - w) / dt + R F_x + b_w w``, where that is within the drive's limit ``t_max``
    [N m] (``within``); the limit, with its sign, where it is not (the wheel then gives way).

    ``coupling``: the ``(K, K)`` :func:`coupling_matrix` (wheel-major ``(K, N)`` arrays), or
    None. Coupled wheels are held while their group's summed torque is within ``n t_max`` (each
    wheel gets the torque it needs, the gearing shares it out); beyond, every wheel of the
    group gets ``t_max`` with the group's sign and the group gives way together."""
    held = params.wheel_inertia * (target - omega) / dt + ground_torque \
        + params.wheel_damping * omega
    if coupling is None:
        within = held.abs() <= t_max
        return torch.where(within, held, torch.sign(held) * t_max), within
    held_g = group_sum(coupling, held)
    within = held_g.abs() <= coupling.sum(1, keepdim=True) * t_max
    return torch.where(within, held, torch.sign(held_g) * t_max), within


def wheel_spin_rate(params, torque, ground_torque, omega, coupling=None):
    """``(d omega / dt, torque at each wheel)`` [rad/s^2, N m] of wheels driven by ``torque``
    against ``ground_torque`` (``R F_x``) and bearing damping: ``I_w w' = T - R F_x - b_w w``.
    Coupled wheels (``coupling``, wheel-major) share one spin rate,
    ``sum_g (T - R F_x - b_w w) / (n I_w)``, and each wheel's torque is what the gearing
    hands it, ``I_w w' + R F_x + b_w w``."""
    net = torque - ground_torque - params.wheel_damping * omega
    if coupling is None:
        return net / params.wheel_inertia, torque
    rate = group_sum(coupling, net) / (coupling.sum(1, keepdim=True) * params.wheel_inertia)
    return rate, params.wheel_inertia * rate + ground_torque + params.wheel_damping * omega


def braked_body_forces(s: SkidSteerState, m, Iz, fz, mu, dxj, dyj, fgx, fgy, dt: float,
                       slip: bool = False):
    """The holding brake: the wheels are locked, and the ground holds the body by static
    friction or lets it slide with kinetic friction (a velocity-level Coulomb solve, no creep).

    The friction force that stops the body's planar motion within the substep ``dt``, against
    the other forces ``(fgx, fgy)`` (gravity along the ground) and the rotating frame's terms,
    is ``F = -(m v / dt + F_g) + m w (-v_y, v_x)``; the ground gives it while ``|F|`` is within
    the capacity ``sum_j mu_j F_z,j`` (the body stays exactly at rest), and that capacity,
    against the motion, beyond it (a locked wheel slides with kinetic friction ``mu F_z`` and
    no rolling resistance): ``F = F_req min(1, capacity / |F_req|)``. The yaw moment stops the
    yaw rate within the step up to the capacity times the wheels' mean lever arm. Body-frame,
    ``(N,)`` each: returns ``(F_x, F_y, M_z, each wheel's share F_z,j / sum F_z (K, N))``,
    and with ``slip`` also ``(N,)`` bool: friction gave way (the body slides)."""
    cap = (mu * fz).sum(0)
    req_x = -(m * s.vx / dt + fgx) - m * s.yaw_rate * s.vy
    req_y = -(m * s.vy / dt + fgy) + m * s.yaw_rate * s.vx
    need = torch.sqrt(req_x * req_x + req_y * req_y)
    scale = torch.where(need > cap, cap / need.clamp_min(1e-30), torch.ones_like(need))
    arm = torch.sqrt(dxj * dxj + dyj * dyj).mean(0)
    m_cap = cap * arm
    Mz = torch.maximum(torch.minimum(-Iz * s.yaw_rate / dt, m_cap), -m_cap)
    total = fz.sum(0)
    share = fz / torch.where(total > 0, total, torch.ones_like(total))
    if slip:
        return req_x * scale, req_y * scale, Mz, share, need > cap
    return req_x * scale, req_y * scale, Mz, share


def group_sum(coupling, x):
    """``coupling @ x`` for a wheel-major ``(K, N)`` ``x``: each wheel's group sum, as a
    broadcast product and a sum over K (elementwise work that a compiled step fuses with its
    neighbours; a matrix product is a library call that splits the fused kernels). Equal to the
    matrix product to the last bit where a group has at most two wheels."""
    return (coupling.unsqueeze(-1) * x.unsqueeze(0)).sum(1)


def driven_mask(driven, device=None):
    """``(K, 1)`` bool of a vehicle's ``driven`` (K bools, or None: all): the wheels the motors
    drive; None where all are (the common case, which the callers skip)."""
    if driven is None or all(driven):
        return None
    return torch.tensor([[bool(d)] for d in driven], device=device)


def caster_mask(vehicle, device=None):
    """``(K, 1)`` bool of a vehicle's ``casters`` (the wheels that swivel freely: no force
    across their rolling direction, no brake), or None where it has none (the callers skip)."""
    casters = getattr(vehicle, "casters", None)
    if casters is None:
        return None
    return torch.tensor([[bool(c)] for c in casters], device=device)


def coupling_matrix(vehicle: Vehicle, dtype=torch.float32, device=None):
    """``(K, K)`` 0/1: entry ``(i, j)`` is 1 where wheels i and j turn together (the same
    side's driven wheels under ``coupling="side"``; a wheel with itself otherwise), or None
    where every wheel is on its own (``"independent"``, or no side has two driven wheels).

    ``S @ x`` sums a wheel-major ``(K, N)`` quantity over each wheel's group and hands the sum
    to every wheel of the group; ``S.sum(1)`` is each group's size."""
    if vehicle.coupling == "independent":
        return None
    k = vehicle.num_wheels
    drv = vehicle.driven or (True,) * k
    left = [p[1] > 0 for p in vehicle.wheel_positions]
    rows = [[1.0 if i == j or (drv[i] and drv[j] and left[i] == left[j]) else 0.0
             for j in range(k)] for i in range(k)]
    if all(sum(row) == 1.0 for row in rows):  # (plain Python: no tensor decides, so a
        return None                            # compiled step that builds it does not break)
    return torch.tensor(rows, dtype=dtype, device=device)
