"""Terrains, vehicles and the equilibrium laws shared by the ground-following tests."""

import numpy as np
import torch

import terrain
from offroad_env.physics.vehicle import Vehicle

F64 = torch.float64
G = 9.81


def plane_map(a, b, c, size=20.0, res=0.25):
    cfg = terrain.PlaneConfig(size=(size, size), resolution=res, slope_x=a, slope_y=b, height=c)
    return terrain.make_heightmap(cfg, dtype=F64)


def flat_map(height=0.0, size=20.0, res=0.25):
    return terrain.make_heightmap(terrain.FlatConfig(size=(size, size), resolution=res,
                                                     height=height), dtype=F64)


def rough_map(seed=0, amplitude=0.4):
    cfg = terrain.PerlinConfig(size=(30.0, 30.0), resolution=0.1, octaves=3, frequency=0.15,
                               amplitude=amplitude)
    return terrain.make_heightmap(cfg, seed, dtype=F64)


def check_equilibrium(res, vehicle, g=G, d_eps=0.01, gap_tol=1e-6, rel=1e-6):
    """The laws a rest must satisfy: forces hold the weight, moments about the CoM vanish, no
    force is negative, no wheel is below the terrain, loaded wheels are within d_eps."""
    f = res.normal_force
    W = vehicle.mass * g
    torch.testing.assert_close(f.sum(1), torch.full_like(f[:, 0], W), rtol=rel, atol=rel * W)
    com = res.position + (res.rotation @ torch.tensor(vehicle.com, dtype=F64))
    lever = res.wheel_position[..., :2] - com[:, None, :2]
    moment = (f.unsqueeze(-1) * lever).sum(1)  # (N, 2): moments of vertical forces about the CoM
    assert moment.abs().max() <= rel * W * 10, moment.abs().max()
    assert (f >= 0).all()
    assert (res.gap >= -gap_tol).all(), res.gap.min()
    loaded = f > 1e-9 * W
    assert (res.gap[loaded] <= d_eps + gap_tol).all()
    assert res.stable.all()


def step_under_front_left(v, height):
    """Flat ground with a raised block under the FL wheel of a vehicle at the origin, yaw 0."""
    hm = flat_map(0.0, size=10.0, res=0.01)
    h = hm.heights.clone()
    X, Y = np.meshgrid(hm.x_coords().numpy(), hm.y_coords().numpy())
    fl = np.asarray(v.wheel_positions[0])
    block = (np.abs(X - fl[0]) < 0.15) & (np.abs(Y - fl[1]) < 0.15)
    h[torch.from_numpy(block)] = height
    return terrain.HeightMap(h, hm.resolution, dtype=F64)


def off_centre(v):
    """The vehicle with its centre of mass moved off the diagonals' crossing and lowered."""
    return Vehicle(wheel_base=v.wheel_base, track_width=v.track_width,
                   wheel_radius=v.wheel_radius, wheel_positions=v.wheel_positions, mass=v.mass,
                   com=(0.35 * v.wheel_base, 0.12 * v.track_width, 0.0),
                   inertia_roll=v.inertia_roll, inertia_pitch=v.inertia_pitch)


# Symmetric presets balance on a diagonal or an axle (the wobbly table) at most random poses, so
# few of their rests are unique (at these 24 poses: husky 0, six wheels 1, eight wheels 6); moving
# the centre of mass off the crossing makes most unique (husky 11, six wheels 17). The symmetric
# husky has no unique rest to compare (None): there only each method's rest is checked as a rest.
