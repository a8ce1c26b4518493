"""Per-environment physical parameters (domain randomization): the vehicle's mass, centre of
mass and wheel radius, the ground friction, the soil's strength and friction angle and the IMU
noise levels, each ``(N,)`` (``com`` ``(N, 3)``), checked where they enter."""

from __future__ import annotations

import math

import torch

from offroad_env.physics.vehicle import Vehicle

__all__ = ["PARAMS", "nominal_params", "update_params"]

#: the names :func:`update_params` accepts: ``mass`` ``(N,)`` [kg]; ``com`` ``(N, 3)`` centre of
#: mass in the rear-axle frame [m]; ``wheel_radius`` ``(N,)`` [m]; ``friction`` ``(N,)`` (the
#: skid-steer ``mu`` on hard ground, ``mu_peak`` on soft soil); ``accel_noise`` / ``gyro_noise``
#: ``(N,)`` [m/s^2], [rad/s]; on soil (the physical model's ``RigidBodyParams.soil``):
#: ``soil_strength`` ``(N,)`` a factor on its ``k_c``, ``k_phi`` and ``c`` (nominal 1) and
#: ``soil_phi`` ``(N,)`` its friction angle [rad] in [0, pi/2) (nominal the soil's)
PARAMS = ("mass", "com", "wheel_radius", "friction", "accel_noise", "gyro_noise",
          "soil_strength", "soil_phi")


def nominal_params(vehicle: Vehicle, cfg, n: int, dtype, device) -> dict[str, torch.Tensor]:
    """Every parameter at its nominal value: the vehicle's, and ``cfg``'s (a
    :class:`~offroad_env.sim.config.SimConfig`) friction and IMU noise."""
    def full(x):
        return torch.full((n,), float(x), dtype=dtype, device=device)
    soil = getattr(cfg.dynamics_params, "soil", None)
    return {"mass": full(vehicle.mass), "wheel_radius": full(vehicle.wheel_radius),
            "com": torch.tensor(vehicle.com, dtype=dtype, device=device).expand(n, 3).clone(),
            "friction": full(cfg.ground_mu), "accel_noise": full(cfg.imu.accel_noise),
            "gyro_noise": full(cfg.imu.gyro_noise), "soil_strength": full(1.0),
            "soil_phi": full(0.0 if soil is None else soil.phi)}


def update_params(params: dict, mask: torch.Tensor, values: dict,
                  refusals: dict[str, str] | None = None) -> dict[str, torch.Tensor]:
    """``params`` with the masked rows of the given ``values`` (tensors over all N rows; None
    skips a name). Raises ValueError on an unknown name, a name in ``refusals`` (the vehicle
    model's :meth:`~offroad_env.physics.models.VehicleModel.param_refusals`, with its reason), a
    wrong shape, or a masked value that is not finite, negative, or (mass) not positive."""
    unknown = sorted(set(values) - set(PARAMS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown}; known: {PARAMS}")
    refused = {k: why for k, why in (refusals or {}).items() if values.get(k) is not None}
    if refused:
        raise ValueError("; ".join(f"{k}: {why}" for k, why in sorted(refused.items())))
    ref = params["mass"]
    n = ref.shape[0]
    mask = torch.as_tensor(mask, device=ref.device)
    out = dict(params)
    for name, val in values.items():
        if val is None:
            continue
        val = torch.as_tensor(val, dtype=ref.dtype, device=ref.device)
        shape = (n, 3) if name == "com" else (n,)
        if val.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(val.shape)}")
        sel = val[mask]
        low = 0.0 if name != "com" else -math.inf
        positive = name in ("mass", "soil_strength")
        if not bool(torch.isfinite(sel).all()) or bool((sel < low).any()) or (
                positive and bool((sel <= 0).any())):
            raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}"
                             f" in every environment, got {sel.tolist()[:8]}")
        if name == "soil_phi" and bool((sel >= math.pi / 2).any()):
            raise ValueError(f"soil_phi must be below pi/2 rad in every environment, got "
                             f"{sel.tolist()[:8]}")
        m = mask.view(-1, 1) if name == "com" else mask
        out[name] = torch.where(m, val, out[name])
    return out
