"""Every script in examples/ runs, as a smoke run of seconds with tiny budgets (none can rot)."""

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _main(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # importable by name, as a run records its terms
    spec.loader.exec_module(mod)
    return mod.main


def test_the_examples_folder_holds_the_listed_scripts():
    names = {p.stem for p in EXAMPLES.glob("*.py")}
    assert {"ppo_cleanrl", "sb3_ppo", "torchrl_rollout", "geotiff_training", "urdf_vehicle",
            "record_video"} <= names


def test_ppo_example(tmp_path):
    assert _main("ppo_cleanrl")(["--num-envs", "16", "--total-steps", "512", "--out",
                                 str(tmp_path / "ppo")]) == 0


def test_sb3_example():
    assert _main("sb3_ppo")(["--num-envs", "4", "--total-steps", "256"]) == 0


def test_geotiff_example(tmp_path):
    assert _main("geotiff_training")(["--total-steps", "512", "--out", str(tmp_path / "dem")]) == 0


def test_urdf_example(capsys):
    assert _main("urdf_vehicle")(["--steps", "5"]) == 0
    assert "wheel base 0.512 m" in capsys.readouterr().out


@pytest.mark.integration
def test_torchrl_example():
    pytest.importorskip("torchrl")
    assert _main("torchrl_rollout")(["--steps", "5"]) == 0


@pytest.mark.integration
def test_record_video_example(tmp_path):
    pytest.importorskip("moviepy")
    assert _main("record_video")(["--out", str(tmp_path), "--steps", "10"]) == 0
    assert list(tmp_path.glob("*.mp4"))


def test_mppi_example(tmp_path):
    assert _main("mppi")(["--steps", "6", "--samples", "4", "--seconds", "0.2", "--every", "3",
                          "--out", str(tmp_path / "mppi.png")]) == 0
    assert (tmp_path / "mppi.png").stat().st_size > 10_000


def test_custom_task_example(tmp_path):
    # the four declared terms, a 2-iteration PPO run on them and its evaluation
    assert _main("custom_task")(["--num-envs", "4", "--total-steps", "64", "--episodes", "4",
                                 "--out", str(tmp_path / "ct")]) == 0
    import json
    res = json.loads((tmp_path / "ct" / "custom_eval.json").read_text())
    assert "left_corridor" in res["ppo"]["end_reasons"]
