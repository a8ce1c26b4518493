"""Validation during training (``--validate-every``): the agent's mean actions on held-out
worlds, logged where it validates, and the best-scoring checkpoint kept as ``best.pt``."""

import csv

import pytest
import torch

from train import ppo
from train.common.checkpoint import load_checkpoint
from train.evaluate import evaluate
from train.ppo.validation import HELD_OUT_TERRAIN_SEED, VALIDATION_SEED


def test_validation_is_evaluate_on_held_out_worlds_and_keeps_the_best(tmp_path):
    cfg = ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=8 * 8 * 5, num_minibatches=2,
                        hidden=(8,), out=str(tmp_path), progress=False, tensorboard=False,
                        max_episode_steps=60, validate_every=2, validate_episodes=12)
    summary = ppo.train(cfg)
    rows = list(csv.DictReader(open(tmp_path / "progress.csv")))
    scored = {int(r["iteration"]): float(r["val_success_rate"]) for r in rows
              if r["val_success_rate"] != ""}
    assert sorted(scored) == [2, 4, 5]  # every 2 iterations, and after the last
    # the best: the highest success, ties broken by return, saved as best.pt
    returns = {int(r["iteration"]): float(r["val_return_mean"]) for r in rows
               if r["val_return_mean"] != ""}
    best_it = summary["best_iteration"]
    assert max((scored[i], returns[i]) for i in scored) == (scored[best_it], returns[best_it])
    assert summary["best_val_success_rate"] == scored[best_it]
    agent, state = load_checkpoint(tmp_path / "best.pt")
    assert state["iteration"] == best_it
    assert summary["best_checkpoint"] == str(tmp_path / "best.pt")
    # the last validation equals train.evaluate of the final checkpoint on the same worlds
    final, _ = load_checkpoint(tmp_path / "checkpoint.pt")
    ev = evaluate(lambda o: final.act(o, deterministic=True), cfg.env_id, episodes=12,
                  seed=VALIDATION_SEED, terrain_seed=HELD_OUT_TERRAIN_SEED,
                  max_episode_steps=60)
    assert scored[5] == pytest.approx(ev["success_rate"], abs=0)
    last = [r for r in rows if r["iteration"] == "5"][0]
    assert float(last["val_return_mean"]) == pytest.approx(ev["return_mean"], rel=1e-6)


def test_without_validation_nothing_extra_is_written(tmp_path):
    summary = ppo.train(ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64,
                                      num_minibatches=2, hidden=(8,), out=str(tmp_path),
                                      progress=False, tensorboard=False))
    assert not (tmp_path / "best.pt").exists() and "best_checkpoint" not in summary
    assert "val_success_rate" not in open(tmp_path / "progress.csv").readline()


@pytest.mark.parametrize("field,value", [("validate_every", -1), ("validate_episodes", 0),
                                         ("validate_episodes", 2.5)])
def test_bad_validation_settings_are_named(field, value):
    with pytest.raises(ValueError, match=field):
        ppo.PPOConfig(**{field: value})


def test_validation_leaves_the_agent_in_training_mode(tmp_path):
    from train.common.agent import Agent
    from train.ppo.validation import Validation

    v = Validation("offroad_env/OffroadNav-v1", {}, 4, 20)
    obs_dim = v.env.single_observation_space.shape[0]
    agent = Agent(obs_dim, 2, (8,))
    score = v(agent)
    assert agent.training and set(score) == {"val_success_rate", "val_return_mean"}
    assert v.improved(score) and not v.improved(score)  # equal is not better
    v.close()
    torch.testing.assert_close(agent.obs_mean, torch.zeros(obs_dim))  # no stats moved


def test_a_run_resumed_in_its_folder_goes_on_from_its_best(tmp_path):
    def cfg(total_iterations):
        return ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=8 * 8 * total_iterations,
                             num_minibatches=2, hidden=(8,), out=str(tmp_path), progress=False,
                             tensorboard=False, max_episode_steps=60, validate_every=2,
                             validate_episodes=12)
    first = ppo.train(cfg(3))
    _, state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert state["best"] == {k: v for k, v in first.items() if k.startswith("best_")}
    summary = ppo.train(cfg(6), resume=str(tmp_path / "checkpoint.pt"))
    rows = list(csv.DictReader(open(tmp_path / "progress.csv")))
    scored = {int(r["iteration"]): (float(r["val_success_rate"]), float(r["val_return_mean"]))
              for r in rows if r["val_success_rate"] != ""}
    assert sorted(scored) == [2, 3, 4, 6]
    best_it = max(scored, key=scored.get)  # over both parts of the run
    assert summary["best_iteration"] == best_it
    assert load_checkpoint(tmp_path / "best.pt")[1]["iteration"] == best_it
    # a best the resumed part cannot beat stays the best, and best.pt is left as it was
    _, state = load_checkpoint(tmp_path / "checkpoint.pt")
    state["best"] = {**state["best"], "best_val_success_rate": 2.0}
    torch.save(state, tmp_path / "checkpoint.pt")
    kept = (tmp_path / "best.pt").read_bytes()
    again = ppo.train(cfg(8), resume=str(tmp_path / "checkpoint.pt"))
    assert again["best_val_success_rate"] == 2.0 and again["best_iteration"] == state["best"][
        "best_iteration"]
    assert (tmp_path / "best.pt").read_bytes() == kept


def test_the_user_sees_validation_beside_training(tmp_path):
    """The log line, the printed summary, the learning curve and TensorBoard carry the
    validation's success next to training's."""
    from train.common.logs import TB_LAYOUT, iteration_line, summary_json, tb_tag

    row = {"iteration": 4, "global_step": 256, "steps_per_s": 10.0, "window_episodes": 3,
           "success_rate": 0.5, "return_mean": 1.0, "val_success_rate": 0.75}
    assert iteration_line(row, 5).endswith("validation success 0.75")
    assert "validation" not in iteration_line({**row, "val_success_rate": None}, 5)
    assert tb_tag("val_success_rate") == "eval/success_rate"
    chart = TB_LAYOUT["success"]
    assert [tb_tag("success_rate"), "eval/success_rate"] in [v[1] for v in chart.values()]
    cfg = ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=8 * 8 * 2, num_minibatches=2,
                        hidden=(8,), out=str(tmp_path), progress=False, tensorboard=False,
                        max_episode_steps=60, validate_every=1, validate_episodes=4)
    summary = ppo.train(cfg)
    js = summary_json({**summary, "window_episodes": summary.get("window_episodes") or 1})
    assert js["val_success_rate"] == summary["val_success_rate"]
    assert js["best_checkpoint"] == str(tmp_path / "best.pt")
    assert js["best_val_success_rate"] == summary["best_val_success_rate"]
