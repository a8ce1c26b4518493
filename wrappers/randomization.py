"""Domain randomization: per-episode vehicle, ground, terrain and sensor parameters.

Values are drawn for each sub-environment at each of its resets (autoresets included) from the
environment's own per-env random stream (a salted copy of it, so the spawns and goals stay those
of the unwrapped env). Hence: the same seed gives the same draws, and sub-env i of a vector env
draws what a single env reset with seed ``s + i`` draws.

The draws go into the batched simulator through the env's public seams (``set_params``,
``set_terrain``, ``add_reset_hook``, ``draw_uniform``), where
ground following (wheel heights, loads), the static tip-over limits, skid-steer dynamics and the
IMU use them; nothing is faked at the observation level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import gymnasium as gym
import numpy as np
import torch

import terrain as terrain_pkg
from offroad_env.seams import SimulatorSeams

__all__ = ["RandomizationConfig", "DomainRandomization", "DomainRandomizationEnv"]

_SALT = 0x5D0A1E5EED  # separates the randomization stream from the spawn stream
_SALT_SOIL = 0x5D0A1E5011  # and the soil's draws from the others
Range = tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class RandomizationConfig:
    """Ranges of uniform draws; ``None`` leaves a quantity at its nominal value.

    Attributes:
        mass_scale: factor on the vehicle mass.
        com_shift: ``((dx range), (dy range), (dz range))`` added to the centre of mass in the
            rear-axle frame [m].
        wheel_radius_scale: factor on the wheel radius.
        friction: friction coefficient (skid-steer: ``mu`` on hard ground, ``mu_peak`` on soft).
        accel_noise: accelerometer white-noise standard deviation [m/s^2].
        gyro_noise: gyro white-noise standard deviation [rad/s].
        soil_strength: factor on the soil's ``k_c``, ``k_phi`` and ``c`` (the physical model on
            soil: ``RigidBodyParams(soil=...)``; default None: the soil as named).
        soil_phi: the soil's friction angle [rad], in [0, pi/2) (default None).
        terrains: terrain generator configs (or height maps); each episode drives on one of
            ``maps_per_terrain`` maps of each, drawn uniformly. All must have the env's map size.
        maps_per_terrain: maps generated per config.
        terrain_seed: seed of the generated maps.
    """

    mass_scale: Range | None = (0.8, 1.2)
    com_shift: tuple[Range, Range, Range] | None = ((-0.05, 0.05), (-0.03, 0.03), (-0.02, 0.05))
    wheel_radius_scale: Range | None = (0.95, 1.05)
    friction: Range | None = (0.4, 1.0)
    accel_noise: Range | None = (0.0, 0.1)
    gyro_noise: Range | None = (0.0, 0.01)
    soil_strength: Range | None = None
    soil_phi: Range | None = None
    terrains: tuple | None = None
    maps_per_terrain: int = 2
    terrain_seed: int = 0

    def __post_init__(self):
        def check(name, r, low, strict=False):
            lo, hi = r
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi
                    and (lo > low if strict else lo >= low)):
                raise ValueError(f"{name} must be a finite (min, max) with min <= max and min "
                                 f"{'>' if strict else '>='} {low}, got {r!r}")
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or f.name in ("terrains", "maps_per_terrain", "terrain_seed"):
                continue
            if f.name == "com_shift":
                if len(v) != 3:
                    raise ValueError(f"com_shift needs three ranges (x, y, z), got {v!r}")
                for axis, r in zip("xyz", v):
                    check(f"com_shift {axis}", r, -math.inf)
            elif f.name in ("mass_scale", "wheel_radius_scale", "soil_strength"):
                check(f.name, v, 0.0, strict=True)
            elif f.name == "soil_phi":
                check(f.name, v, 0.0)
                if v[1] >= math.pi / 2:
                    raise ValueError(f"soil_phi must lie below pi/2 rad, got {v!r}")
            else:
                check(f.name, v, 0.0)
        if int(self.maps_per_terrain) != self.maps_per_terrain or self.maps_per_terrain < 1:
            raise ValueError(f"maps_per_terrain must be an int >= 1, got {self.maps_per_terrain}")
        if self.terrains is not None and len(self.terrains) == 0:
            raise ValueError("terrains must be None or a non-empty sequence")


class _Randomizer:
    """The reset hook: draws and sets the parameters of the masked sub-environments of ``env``
    (an unwrapped offroad env)."""

    def __init__(self, env, cfg: RandomizationConfig):
        self.env, self.cfg = env, cfg
        if cfg.terrains is not None:
            self._set_maps()
        env.add_reset_hook(self)

    def _set_maps(self):
        env, cfg = self.env, self.cfg
        current = env.terrain
        gen = np.random.default_rng(cfg.terrain_seed)
        maps = []
        for t in cfg.terrains:
            if isinstance(t, terrain_pkg.HeightMap):
                maps += [t[i] for i in range(len(t))]
            else:
                maps += [terrain_pkg.make_heightmap(t, gen) for _ in range(cfg.maps_per_terrain)]
        for m in maps:
            if m.size != current.size or m.bounds != current.bounds:
                raise ValueError(f"randomized terrain {m!r} must cover the env's map: size "
                                 f"{current.size}, bounds {current.bounds}")
        try:
            stack = terrain_pkg.HeightMap.stack(maps)
        except ValueError as exc:
            raise ValueError(f"randomized terrains must share one grid: {exc}") from None
        env.set_terrain(stack)

    def __call__(self, mask: torch.Tensor) -> None:
        env, cfg = self.env, self.cfg
        u = env.draw_uniform(8, _SALT)
        veh = env.vehicle

        def draw(r, col):
            return r[0] + u[:, col] * (r[1] - r[0])
        values = {}
        if cfg.mass_scale is not None:
            values["mass"] = veh.mass * draw(cfg.mass_scale, 0)
        if cfg.com_shift is not None:
            base = torch.tensor(veh.com, dtype=u.dtype, device=u.device)
            values["com"] = base + torch.stack([draw(r, 1 + i)
                                                for i, r in enumerate(cfg.com_shift)], 1)
        if cfg.wheel_radius_scale is not None:
            values["wheel_radius"] = veh.wheel_radius * draw(cfg.wheel_radius_scale, 4)
        if cfg.friction is not None:
            values["friction"] = draw(cfg.friction, 5)
        if cfg.accel_noise is not None:
            values["accel_noise"] = draw(cfg.accel_noise, 6)
        if cfg.gyro_noise is not None:
            values["gyro_noise"] = draw(cfg.gyro_noise, 7)
        if cfg.soil_strength is not None or cfg.soil_phi is not None:
            # a stream of their own: the draws above stay as they were without soil
            u = env.draw_uniform(2, _SALT_SOIL)
            if cfg.soil_strength is not None:
                values["soil_strength"] = draw(cfg.soil_strength, 0)
            if cfg.soil_phi is not None:
                values["soil_phi"] = draw(cfg.soil_phi, 1)
        env.set_params(mask, **values)


#: each config field and the per-environment parameter it draws
_FIELDS = {"mass_scale": "mass", "com_shift": "com", "wheel_radius_scale": "wheel_radius",
           "friction": "friction", "accel_noise": "accel_noise", "gyro_noise": "gyro_noise",
           "soil_strength": "soil_strength", "soil_phi": "soil_phi"}


def _install(env, config):
    base = env.unwrapped
    if not isinstance(base, SimulatorSeams):
        raise TypeError(f"domain randomization needs an offroad env, got {type(base).__name__}")
    unsupported = [f for f, p in _FIELDS.items()
                   if getattr(config, f) is not None and p not in base.param_names]
    if unsupported:
        raise ValueError(f"the {base.config.dynamics!r} model does not vary "
                         f"{[_FIELDS[f] for f in unsupported]} per environment: set "
                         + ", ".join(f"{f}=None" for f in unsupported)
                         + " in the RandomizationConfig")
    return _Randomizer(base, config)


class DomainRandomization(gym.vector.VectorWrapper):
    """Domain randomization for :class:`~offroad_env.OffroadVectorEnv` (see the module).

    ``env.params`` holds the current per-env values (``mass``, ``com``, ``wheel_radius``,
    ``friction``, ``accel_noise``, ``gyro_noise``, ``soil_strength``, ``soil_phi``), each with
    the sub-env index first.
    """

    def __init__(self, env: gym.vector.VectorEnv, config: RandomizationConfig | None = None):
        super().__init__(env)
        self.config = config or RandomizationConfig()
        self._randomizer = _install(env, self.config)

    @property
    def params(self) -> dict:
        return self.env.unwrapped.params


class DomainRandomizationEnv(gym.Wrapper):
    """Domain randomization for the single :class:`~offroad_env.OffroadEnv` (same draws as
    sub-env i of a vector env for seed ``s + i``)."""

    def __init__(self, env: gym.Env, config: RandomizationConfig | None = None):
        super().__init__(env)
        self.config = config or RandomizationConfig()
        self._randomizer = _install(env, self.config)

    @property
    def params(self) -> dict:
        params = self.env.unwrapped.params
        return None if params is None else {k: v[0] for k, v in params.items()}
