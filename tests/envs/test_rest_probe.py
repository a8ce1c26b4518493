"""The share of drawn spawns that rest on each map (offroad_env.sim.rest_probe, ``env.rest_shares``).

References: on a plane of slope theta the seed's four-wheel placement (``pitch = atan((z_rear -
z_front) / wheel_base)``, ``roll = atan((z_left - z_right) / track_width)``, the wheels at their
planar footprint) gives ``tan pitch = tan(theta) cos psi`` and ``tan roll = tan(theta) sin psi``
at heading psi from the fall line, so the share of uniform headings within the static tip
limits is an integral over psi; on the physical model a plane steeper than ``atan(mu)`` holds
no braked vehicle and a gentle one holds every one.
"""

import math

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.task.task import static_tip_limits


def _plane(deg: float, size: float = 30.0):
    return terrain.PlaneConfig(size=(size, size), resolution=(0.1, 0.1), slope_x=0.0,
                               slope_y=math.tan(math.radians(deg)))


def _closed_form_share(theta_deg: float, roll_limit: float, pitch_limit: float) -> float:
    """The share of uniform headings at which the four-wheel placement on a ``theta`` plane
    is within both static tip limits [rad] (a fine grid over psi)."""
    psi = torch.linspace(-math.pi, math.pi, 200_001, dtype=torch.float64)[:-1]
    t = math.tan(math.radians(theta_deg))
    pitch, roll = torch.atan(t * psi.cos().abs()), torch.atan(t * psi.sin().abs())
    return float(((pitch <= pitch_limit) & (roll <= roll_limit)).double().mean())


@pytest.mark.parametrize("deg", [0.0, 55.0, 60.0, 75.0])
def test_the_share_on_a_tilted_plane_meets_the_closed_form(deg):
    # 55 deg: past the Husky's static pitch limit (53.6) near headings up or down the slope,
    # under its roll limit (56.5) across it: about 80 % of uniform headings rest; 60: past
    # both, the diagonal headings still rest; 75: none does (the kinematic default model)
    env = OffroadVectorEnv(num_envs=2, terrain=_plane(deg), num_maps=1)
    n = 2048
    share = env.rest_shares(samples=n)
    roll_limit, pitch_limit = static_tip_limits(env.vehicle)
    want = _closed_form_share(deg, roll_limit, pitch_limit)
    assert share.shape == (1,) and share.dtype == torch.float64
    sd = math.sqrt(want * (1 - want) / n)
    assert abs(float(share[0]) - want) <= 4 * sd + 1e-12, (float(share[0]), want)
    assert {0.0: want == 1.0, 55.0: 0.7 < want < 0.9, 60.0: 0.1 < want < 0.6,
            75.0: want == 0.0}[deg]


@pytest.mark.parametrize("deg,want", [(20.0, 1.0), (40.0, 0.0)])
def test_the_physical_model_rests_under_atan_mu_and_slides_past_it(deg, want):
    # mu 0.8: atan(mu) = 38.7 deg; 40 deg is under the tip limits but friction holds no heading
    env = OffroadVectorEnv(num_envs=2, dynamics="rigid_body", terrain=_plane(deg), num_maps=1,
                           dynamics_params=RigidBodyParams(mu=0.8))
    assert env.rest_shares(samples=16).tolist() == [want]


def test_the_probe_leaves_the_env_as_it_was():
    # the same seed, the same trajectory (prepared starts and autoresets included), whether or
    # not the shares were measured in between
    def run(probe: bool):
        env = OffroadVectorEnv(num_envs=6, dynamics="rigid_body", terrain=_plane(10.0),
                               num_maps=1, max_episode_steps=15)
        obs = [env.reset(seed=4)[0]]
        env.set_episode_steps(torch.arange(6) * 2)  # resets of a few rows: prepared starts
        if probe:
            env.rest_shares(samples=8, seed=3)
        g = torch.Generator().manual_seed(0)
        for _ in range(40):
            obs.append(env.step(torch.rand(6, 2, generator=g) * 2 - 1)[0])
        return torch.stack(obs)

    assert torch.equal(run(False), run(True))


def test_the_shares_are_reproducible_and_per_map():
    env = OffroadVectorEnv(num_envs=2, terrain=_plane(55.0), num_maps=3)
    a, b = env.rest_shares(samples=32, seed=1), env.rest_shares(samples=32, seed=1)
    assert a.shape == (3,) and torch.equal(a, b)


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_bad_sample_counts_are_refused(bad):
    env = OffroadVectorEnv(num_envs=2, terrain=_plane(0.0), num_maps=1)
    with pytest.raises(ValueError, match="samples must be an int >= 1"):
        env.rest_shares(samples=bad)
