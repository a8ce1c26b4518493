"""Model parameters live in ``SimConfig.dynamics_params`` only: the deprecated fields
(``ackermann``, ``skid``, ``substeps``, ``integrator``) fold into it with a warning and build
the same simulator bit for bit; the training CLI's ``--integrator``/``--substeps`` reach the
run's model, and an old run spec that recorded them still loads."""

import warnings

import pytest
import torch

import terrain
from offroad_env import SimConfig, make_config
from offroad_env.physics.dynamics import AckermannParams, SkidSteerParams, UnicycleParams
from offroad_env.sim.simulator import Simulator

PLANE = terrain.PerlinConfig(size=(20.0, 20.0), resolution=(0.2, 0.2), octaves=2, amplitude=0.3)


def _trajectory(cfg, n=8, steps=30):
    sim = Simulator(cfg, n, dtype=torch.float64)
    sim.reset(torch.ones(n, dtype=torch.bool))
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(steps):
        a = torch.rand(n, 2, generator=g, dtype=torch.float64) * 2 - 1
        obs, r, term, _ = sim.step(a)
        out.append(torch.cat((obs, r[:, None]), 1))
        sim.reset(term)
    return torch.stack(out)


@pytest.mark.parametrize("dynamics, legacy, params", [
    ("skid_steer", dict(skid=SkidSteerParams(mu=0.5, c_rr=0.03), substeps=3),
     SkidSteerParams(mu=0.5, c_rr=0.03, substeps=3)),
    ("ackermann", dict(ackermann=AckermannParams(wheel_base=0.6), integrator="exact",
                       skid=SkidSteerParams(mu=0.4)),
     AckermannParams(wheel_base=0.6, integrator="exact", mu=0.4)),
    ("unicycle", dict(integrator="exact", skid=SkidSteerParams(mu=0.3)),
     UnicycleParams(integrator="exact", mu=0.3)),
])
def test_the_deprecated_fields_fold_into_dynamics_params_and_step_the_same(dynamics, legacy,
                                                                           params):
    with pytest.warns(DeprecationWarning, match="dynamics_params"):
        old = make_config("nav", dynamics=dynamics, terrain=PLANE, num_maps=1, **legacy)
    new = make_config("nav", dynamics=dynamics, terrain=PLANE, num_maps=1,
                      dynamics_params=params)
    assert old.dynamics_params == params and old == new
    assert all(getattr(old, k) is None for k in legacy)
    assert old.ground_mu == new.ground_mu == params.ground_mu if hasattr(
        params, "ground_mu") else params.mu
    assert torch.equal(_trajectory(old), _trajectory(new))


def test_the_defaults_are_the_models_own_and_the_ground_friction_follows_them():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the plain path
        cfg = make_config("nav")
    assert cfg.dynamics_params is None and cfg.ground_mu == 0.8
    assert make_config("nav", dynamics_params=UnicycleParams(mu=0.35)).ground_mu == 0.35
    sim = Simulator(make_config("nav", dynamics="skid_steer", num_maps=1, terrain=PLANE), 2)
    assert sim.model.params == SkidSteerParams() and sim.model.params.substeps == 5


def test_bad_model_parameters_are_refused_where_they_enter():
    with pytest.raises(ValueError, match="integrator must be one of"):
        UnicycleParams(integrator="rk4")
    with pytest.raises(ValueError, match="substeps must be an int >= 1"):
        SkidSteerParams(substeps=0)
    with pytest.raises(ValueError, match="mu must be a finite number >= 0"):
        AckermannParams(mu=float("nan"))
    with pytest.raises(ValueError, match="give the skid_steer model's parameters once"), \
            pytest.warns(DeprecationWarning):
        SimConfig(dynamics="skid_steer", dynamics_params=SkidSteerParams(), substeps=3)
    with pytest.raises(ValueError, match="SimConfig.skid must be a SkidSteerParams"):
        SimConfig(skid={"mu": 0.5})
    with pytest.raises(ValueError, match="must be a UnicycleParams"):
        SimConfig(dynamics_params=SkidSteerParams())


def test_the_cli_options_reach_the_runs_model_and_old_run_specs_load():
    from train.common.envconfig import env_kwargs

    kw = env_kwargs("offroad_env/OffroadNav-v0", {"sim": {"dynamics": "skid_steer",
                                                          "substeps": 3}})
    assert kw["dynamics_params"] == SkidSteerParams(substeps=3)
    kw = env_kwargs("offroad_env/OffroadNav-v0", {"sim": {"integrator": "exact"}})
    assert kw["dynamics_params"] == UnicycleParams(integrator="exact")
    with pytest.raises(ValueError, match="--substeps: the unicycle model has no such"):
        env_kwargs("offroad_env/OffroadNav-v0", {"sim": {"substeps": 3}})
