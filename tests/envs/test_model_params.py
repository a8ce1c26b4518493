"""Model parameters live in ``SimConfig.dynamics_params`` only: the fields removed in 0.2.0
(``ackermann``, ``skid``, ``substeps``, ``integrator``) are refused, naming the model's
parameters; the training CLI's ``--integrator``/``--substeps`` reach the run's model, and an old
run spec that recorded them still loads."""

import dataclasses
import warnings

import gymnasium as gym
import pytest

import terrain
from offroad_env import SimConfig, make_config
from offroad_env.sim.config import RemovedFieldError
from offroad_env.physics.dynamics import AckermannParams, SkidSteerParams, UnicycleParams
from offroad_env.sim.simulator import Simulator

PLANE = terrain.PerlinConfig(size=(20.0, 20.0), resolution=(0.2, 0.2), octaves=2, amplitude=0.3)


@pytest.mark.parametrize("dynamics, given, says", [
    ("unicycle", dict(substeps=0), ["the unicycle model has no parameter 'substeps'",
                                    "UnicycleParams", "'integrator', 'mu'"]),
    ("skid_steer", dict(substeps=3), ["substeps= is dynamics_params=SkidSteerParams(substeps=...)"]),
    ("ackermann", dict(integrator="exact", ackermann=AckermannParams()),
     ["integrator= is dynamics_params=AckermannParams(integrator=...)",
      "ackermann= (a AckermannParams) is dynamics_params="]),
    ("unicycle", dict(skid=SkidSteerParams(mu=0.3)), ["skid= (a SkidSteerParams)",
                                                      "UnicycleParams"]),
])
def test_the_removed_fields_are_refused_naming_the_models_parameters(dynamics, given, says):
    """0.2.0 removed SimConfig's ackermann, skid, substeps and integrator: ``substeps=0`` on the
    unicycle was accepted with a warning and ignored; now it is refused where it enters, and
    the message names what to give instead (as the CLI's --substeps does)."""
    for build in (lambda: SimConfig(dynamics=dynamics, **given),
                  lambda: make_config("nav", dynamics=dynamics, **given),
                  lambda: dataclasses.replace(SimConfig(dynamics=dynamics), **given),
                  lambda: gym.make("offroad_env/OffroadNav-v1", dynamics=dynamics, **given)):
        with pytest.raises(RemovedFieldError) as info:
            build()
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
        assert "removed in 0.2.0" in str(info.value)
        for text in says:
            assert text in str(info.value)
    assert not hasattr(SimConfig(), "substeps")


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
    with pytest.raises(ValueError, match="must be a UnicycleParams"):
        SimConfig(dynamics_params=SkidSteerParams())


def test_the_cli_options_reach_the_runs_model_and_old_run_specs_load():
    from train.common.envconfig import env_kwargs

    kw = env_kwargs("offroad_env/OffroadNav-v1", {"sim": {"dynamics": "skid_steer",
                                                          "substeps": 3}})
    assert kw["dynamics_params"] == SkidSteerParams(substeps=3)
    kw = env_kwargs("offroad_env/OffroadNav-v1", {"sim": {"integrator": "exact"}})
    assert kw["dynamics_params"] == UnicycleParams(integrator="exact")
    with pytest.raises(ValueError, match="--substeps: the unicycle model has no such"):
        env_kwargs("offroad_env/OffroadNav-v1", {"sim": {"substeps": 3}})
