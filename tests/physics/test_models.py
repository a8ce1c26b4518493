"""The vehicle-model plug-in interface: the built-in models' registry, and a test-only model
that places itself (no ground-following base class) arriving from outside ``offroad_env``:
it registers, steps, is observed and rewarded, and compiles, with no line of ``sim.py`` naming
it (or any model)."""

from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv, TaskConfig
from offroad_env.sim.config import SimConfig
from offroad_env.physics.dynamics import unicycle_step
from offroad_env.physics.ground import place
from offroad_env.physics.models import (MODELS, Field, GroundFollowing, ModelStep,
                                        VehicleModel, model_class, register_model)
from offroad_env.physics.models.ground_following import no_slip
from offroad_env.physics.stability import filter_acceleration
from offroad_env.task.rewards import RewardWeights

NAME = "test_first_order_lag"
FLAT = terrain.FlatConfig(size=(20.0, 20.0), resolution=(0.2, 0.2))


@dataclass(frozen=True)
class LagParams:
    tau: float = 0.2  # the speed's time constant [s]


class FirstOrderLag(VehicleModel):
    """Speed follows the command with a first-order lag (exact discretisation); the model
    places itself on the map (it calls the four-wheel method itself) and reports the
    acceleration it integrated."""

    name = NAME
    action_labels = ("speed command", "yaw rate command")
    fields = {"speed": Field(), "turn": Field()}
    Params = LagParams

    def advance(self, state, vehicle, params, maps, a, want_loads):
        cfg = self.cfg
        keep = torch.exp(torch.tensor(-cfg.dt / self.params.tau, dtype=a.dtype))
        target = a[:, 0] * cfg.max_speed
        new = target + (state.speed - target) * keep
        accel = (new - state.speed) / cfg.dt
        state.speed, state.turn = new, a[:, 1] * cfg.max_yaw_rate
        state.x, state.y, state.yaw = unicycle_step(state.x, state.y, state.yaw, state.speed,
                                                    state.turn, cfg.dt)
        gc = self.place(state, vehicle, maps, None)
        zero = torch.zeros_like(accel)
        return ModelStep(gc, no_slip(state, self.vehicle.num_wheels), self.body_velocity(state),
                         torch.stack((accel, zero, zero), 1))

    def place(self, state, vehicle, maps, idx):
        rows = (lambda v: v) if idx is None else (lambda v: v[idx])
        return place("four_wheel", vehicle, maps, rows(state.x), rows(state.y), rows(state.yaw),
                     rows(state.map_index), gravity=self.cfg.gravity)

    def body_velocity(self, state):
        return torch.stack((state.speed, torch.zeros_like(state.speed), state.turn), 1)


@pytest.fixture
def lag_model():
    register_model(FirstOrderLag)
    yield FirstOrderLag
    del MODELS[NAME]


def _env(**kw):
    task = TaskConfig(kind="velocity", command_speed=(1.0, 1.0), command_yaw_rate=(0.0, 0.0),
                      tip_rule="force_angle",
                      weights=RewardWeights(progress=0.0, goal_reached=0.0, tracking=1.0,
                                            tilt=0.0, angular_rate=0.0, action_rate=0.0,
                                            slip=0.0, energy=0.0, tip_over=0.0))
    return OffroadVectorEnv(num_envs=3, dynamics=NAME, dynamics_params=LagParams(tau=0.25),
                            terrain=FLAT, num_maps=1, task=task, max_episode_steps=200,
                            obs_terms=("body_velocity", "imu", "command", "stability"), **kw)


def test_the_built_in_models_are_registered_in_order_with_their_fields():
    assert tuple(MODELS)[:3] == ("unicycle", "ackermann", "skid_steer")
    for name in ("unicycle", "ackermann", "skid_steer"):
        cls = model_class(name)
        assert issubclass(cls, GroundFollowing) and len(cls.action_labels) == 2
    assert MODELS["skid_steer"].fields["wheel_omega"].column_major
    with pytest.raises(ValueError, match="dynamics must be one of"):
        model_class("hovercraft")


def test_a_name_registers_once_and_a_model_names_its_actions(lag_model):
    assert model_class(NAME) is FirstOrderLag
    register_model(FirstOrderLag)  # the same class again: nothing happens

    class Other(FirstOrderLag):
        pass
    with pytest.raises(ValueError, match="already registered"):
        register_model(Other)

    class Mute(FirstOrderLag):
        name = "test_mute"
        action_labels = ("speed",)
    with pytest.raises(ValueError, match="action_labels"):
        register_model(Mute)


def test_config_checks_the_model_and_its_parameters(lag_model):
    SimConfig(dynamics=NAME, dynamics_params=LagParams())
    with pytest.raises(ValueError, match="must be a LagParams"):
        SimConfig(dynamics=NAME, dynamics_params=0.2)
    with pytest.raises(ValueError, match="'unicycle' must be a UnicycleParams"):
        SimConfig(dynamics="unicycle", dynamics_params=LagParams())


def test_a_model_whose_field_clashes_with_the_state_is_refused(lag_model):
    class Clash(FirstOrderLag):
        name = "test_clash"
        fields = {"x": Field()}
    register_model(Clash)
    try:
        with pytest.raises(ValueError, match="'x' .* already declared"):
            OffroadVectorEnv(num_envs=1, dynamics="test_clash", terrain=FLAT, num_maps=1)
    finally:
        del MODELS["test_clash"]


def test_a_self_placing_plug_in_steps_is_observed_and_rewarded(lag_model):
    env = _env()
    obs, _ = env.reset(seed=0)
    sl = {n: slice(a, b) for n, a, b in env.obs_layout}
    keep = torch.exp(torch.tensor(-0.05 / 0.25)).item()
    st = env.unwrapped.sim.state
    accel_f = torch.zeros(3, 3)
    for k in range(1, 21):
        prev = st.speed.clone()
        obs, reward, term, trunc, info = env.step(torch.tensor([[1.0, 0.0]] * 3))
        v = 1.0 - keep ** k  # the lag's closed form from rest
        torch.testing.assert_close(obs[:, sl["body_velocity"]][:, 0], torch.full((3,), v),
                                   rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(info["reward/tracking"],
                                   torch.full((3,), torch.exp(torch.tensor(-(v - 1.0) ** 2
                                                                           / 0.25)).item() + 1.0),
                                   rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(reward, info["reward/tracking"])
        # the task filters the acceleration the model reports (not a difference of speeds)
        acc = torch.stack(((st.speed - prev) / 0.05, torch.zeros(3), torch.zeros(3)), 1)
        accel_f = filter_acceleration(accel_f, acc, 0.05)
        torch.testing.assert_close(st.accel_b, accel_f)
        assert not (term | trunc).any()
    # on flat ground the IMU reads the lag's acceleration forward and g up
    torch.testing.assert_close(obs[:, sl["imu"]][:, 0], (st.speed - prev) / 0.05, rtol=1e-3,
                               atol=1e-3)
    torch.testing.assert_close(obs[:, sl["imu"]][:, 2], torch.full((3,), 9.81), rtol=1e-4,
                               atol=1e-4)
    assert bool((obs[:, sl["stability"]] > 0).all())  # accelerating gently on flat ground


def test_the_simulator_names_no_model():
    src = (Path(__file__).parents[2] / "offroad_env" / "sim" / "simulator.py").read_text()
    for name in ("unicycle", "ackermann", "skid_steer", "four_wheel", "rigid_contact", NAME):
        assert name not in src, name


@pytest.mark.slow
def test_the_plug_in_compiles_and_agrees_with_eager(lag_model):
    from env_util import assert_compiled_agrees
    assert_compiled_agrees(_env(), _env(compile=True),
                           torch.tensor([[1.0, 0.3], [0.5, -0.2], [-0.4, 0.1]]), 15, seed=2)
