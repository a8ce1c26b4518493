"""The actor's action map: a skid-steered vehicle's policy outputs speed and turn, the env gets
wheel speeds, as the baselines drive; runs record the map and checkpoints keep it."""

import json

import pytest
import torch

from train import ppo
from train.common.agent import RESIDUAL_GAIN, Agent, goal_column
from train.common.checkpoint import load_checkpoint
from train.planners.baselines import drive, steer_at_goal


def test_twist_is_the_baselines_drive_and_direct_is_a_clip():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(500, 2, generator=g) * 1.5
    twist = Agent(4, 2, (8,), action_map="twist")
    v, w = a.clamp(-1, 1).unbind(-1)
    torch.testing.assert_close(twist.to_env(a), drive(v, w, skid=True), atol=0, rtol=0)
    assert twist.to_env(torch.tensor([[1.0, 0.3]]))[0].tolist() == pytest.approx([0.7, 1.0])
    # a speed mean far past 1 still leaves the turn free (the reason for the map)
    assert twist.to_env(torch.tensor([[4.0, -0.5]]))[0].tolist() == pytest.approx([1.0, 0.5])
    direct = Agent(4, 3, (8,))
    assert direct.action_map == "direct"
    b = torch.randn(50, 3, generator=g) * 2
    torch.testing.assert_close(direct.to_env(b), b.clamp(-1, 1), atol=0, rtol=0)
    # act() gives the env's actions, deterministic or sampled; twist bounds the means by tanh
    obs = torch.randn(7, 4, generator=g)
    assert twist.act(obs, deterministic=True).abs().max() <= 1.0
    with torch.no_grad():
        twist.actor_mean[-1].bias.fill_(5.0)  # a raw mean far past the clip
        d = twist.distribution(obs)
    torch.testing.assert_close(d.mean, torch.tanh(twist.actor_mean(twist.normalize(obs))))
    assert float(d.mean.max()) < 1.0
    with pytest.raises(ValueError, match="action_map"):
        Agent(4, 3, (8,), action_map="twist")
    with pytest.raises(ValueError, match="action_map"):
        ppo.PPOConfig(action_map="wheels")


@pytest.mark.parametrize("dynamics,expected", [("unicycle", "direct"), ("skid_steer", "twist")])
def test_auto_takes_twist_for_skid_steering_and_the_run_records_it(tmp_path, dynamics, expected):
    out = tmp_path / dynamics
    cfg = ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64, num_minibatches=2, hidden=(8,),
                        out=str(out), progress=False, tensorboard=False,
                        env={"sim": {"dynamics": dynamics}})
    ppo.train(cfg)
    assert json.loads((out / "config.json").read_text())["action_map"] == expected
    agent, state = load_checkpoint(out / "checkpoint.pt")
    assert agent.action_map == expected == state["config"]["action_map"]


def test_a_checkpoint_from_before_the_map_loads_as_direct(tmp_path):
    ppo.train(ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64, num_minibatches=2,
                            hidden=(8,), out=str(tmp_path), progress=False, tensorboard=False))
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    del state["config"]["action_map"]
    torch.save(state, tmp_path / "old.pt")
    agent, _ = load_checkpoint(tmp_path / "old.pt")
    assert agent.action_map == "direct"


def test_residual_starts_as_the_straight_line_and_adds_its_correction():
    """A fresh residual agent's mean actions are the heuristic's wheel speeds (its correction is
    near 0); a correction is added to the heuristic's speed and turn before the wheel map."""
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(300, 6, generator=g) * 4  # the goal (x, y) in columns 2, 3
    agent = Agent(6, 2, (8,), action_map="residual", goal_col=2)
    v0, w0, _ = steer_at_goal(obs[:, 2:4], RESIDUAL_GAIN)
    straight = drive(v0, w0, skid=True)
    torch.testing.assert_close(agent.to_env(torch.zeros(300, 2), obs), straight, atol=0, rtol=0)
    # the output layer's gain 0.01 keeps a fresh mean within a few hundredths of the heuristic
    assert (agent.act(obs, deterministic=True) - straight).abs().max() < 0.1
    a = torch.randn(300, 2, generator=g)
    expected = drive((v0 + a[:, 0]).clamp(-1, 1), (w0 + a[:, 1]).clamp(-1, 1), skid=True)
    torch.testing.assert_close(agent.to_env(a, obs), expected, atol=0, rtol=0)
    # the means are bounded by 2 tanh: any twist stays in reach, and no further
    with torch.no_grad():
        agent.actor_mean[-1].bias.fill_(50.0)
    with torch.no_grad():
        assert float(agent.distribution(obs).mean.max()) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="needs the observations"):
        agent.to_env(a)
    with pytest.raises(ValueError, match="goal_col"):
        Agent(6, 2, (8,), action_map="residual")
    with pytest.raises(ValueError, match="'goal' observation term"):
        goal_column([["heading", 0, 2], ["height_scan", 2, 27]])


def test_a_residual_run_records_its_map_and_its_checkpoint_drives_the_same(tmp_path):
    """A skid-steer run with ``action_map="residual"``: the checkpoint reloads as a residual
    agent on the layout's goal column and gives the trained agent's actions."""
    cfg = ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64, num_minibatches=2, hidden=(8,),
                        out=str(tmp_path), progress=False, tensorboard=False,
                        action_map="residual", env={"sim": {"dynamics": "skid_steer"}})
    ppo.train(cfg)
    agent, state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert agent.action_map == "residual" == state["config"]["action_map"]
    assert agent.goal_col == goal_column(state["obs_layout"])
    obs = torch.randn(5, state["obs_dim"], generator=torch.Generator().manual_seed(2))
    assert agent.act(obs, deterministic=True).shape == (5, 2)


def test_residual_is_refused_for_a_vehicle_without_wheel_speeds(tmp_path):
    cfg = ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64, num_minibatches=2, hidden=(8,),
                        out=str(tmp_path / "run"), progress=False, tensorboard=False,
                        action_map="residual", env={"sim": {"dynamics": "unicycle"}})
    with pytest.raises(ValueError, match="residual drives wheel speeds.*'unicycle'.*auto"):
        ppo.train(cfg)
    assert not (tmp_path / "run").exists()
