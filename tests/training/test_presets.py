"""Training presets (issue 28): ``--preset fast`` sets its values under the flags given, and
the trainer's rate is end to end (rollout and update)."""

import pytest

from train.ppo import PRESETS, PPOConfig, parse_args


def test_a_preset_sets_its_values_and_flags_given_win():
    args = parse_args(["--preset", "fast", "--num-envs", "512"])
    assert args["num_envs"] == 512  # given
    assert args["num_steps"] == 16 and args["update_epochs"] == 2  # the preset's
    assert tuple(args["hidden"]) == (64, 64)
    plain = parse_args([])
    assert plain["num_envs"] == PPOConfig().num_envs == 1024 and plain["num_steps"] == 16
    # the classic preset is the defaults before issue 28 (the published runs)
    classic = PPOConfig.preset("classic")
    assert (classic.num_envs, classic.num_steps, classic.hidden) == (256, 64, (128, 128))
    assert classic.batch_size == PPOConfig().batch_size
    # the suite preset: the teacher and 128 x 128 networks (three seeds each way on v2)
    suite = PPOConfig.preset("suite")
    assert suite.teacher == "path" and suite.hidden == (128, 128)
    assert tuple(parse_args(["--preset", "suite", "--hidden", "64", "64"])["hidden"]) == (64, 64)
    cfg = PPOConfig.preset("fast", total_steps=1000)
    assert cfg.num_envs == PRESETS["fast"]["num_envs"] and cfg.total_steps == 1000
    assert cfg.batch_size % cfg.num_minibatches == 0
    with pytest.raises(ValueError,
                       match=r"unknown preset 'turbo'; known: \['classic', 'fast', 'suite'\]"):
        PPOConfig.preset("turbo")
    with pytest.raises(SystemExit):
        parse_args(["--preset", "turbo"])
