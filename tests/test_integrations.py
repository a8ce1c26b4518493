"""Integration with the trainers and tools users bring: an SB3 PPO run that learns, a TorchRL
rollout in the autoreset modes GymWrapper takes, and Gymnasium's RecordVideo (moviepy).

These form the optional ``integration`` group (``make test-integration``, run by ``.ci/run``);
each skips cleanly when its library is not installed."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import offroad_env  # noqa: F401
import terrain

pytestmark = pytest.mark.integration

NAV = "offroad_env/OffroadNav-v1"
FLAT = terrain.FlatConfig(size=(20.0, 20.0), resolution=(0.1, 0.1))


def test_sb3_ppo_learns_flat_navigation():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from offroad_env.sim.config import TaskConfig
    from wrappers import SB3VecEnv

    def make():
        return VecMonitor(SB3VecEnv.make(NAV, 16, terrain=FLAT, max_episode_steps=100,
                                         task=TaskConfig(goal_distance=(1.5, 3.0))))

    def success(model, seed):
        env = SB3VecEnv.make(NAV, 64, terrain=FLAT, max_episode_steps=100,
                             task=TaskConfig(goal_distance=(1.5, 3.0)))
        env.seed(seed)
        obs = env.reset()
        ended = np.zeros(64, bool)
        reached = np.zeros(64, bool)
        for _ in range(100):
            act, _ = model.predict(obs, deterministic=True)
            obs, _, done, infos = env.step(act)
            for i in np.flatnonzero(done & ~ended):
                reached[i] = infos[i]["end_reason"] == "goal_reached"
            ended |= done
        return reached.mean()

    model = PPO("MlpPolicy", make(), n_steps=128, batch_size=512, learning_rate=1e-3, seed=0,
                device="cpu", verbose=0)
    before = success(model, 123)
    model.learn(total_timesteps=40_000)
    after = success(model, 123)
    print(f"SB3 PPO success before {before:.2f}, after {after:.2f}")
    assert after >= 0.6 and after > before + 0.3, (before, after)


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_torchrl_gym_wrapper_rollout(mode):
    pytest.importorskip("torchrl")
    from torchrl.envs import GymWrapper

    env = gym.make_vec(NAV, num_envs=4, vectorization_mode="vector_entry_point",
                       max_episode_steps=30, autoreset_mode=mode)
    tenv = GymWrapper(env)
    td = tenv.rollout(70, break_when_any_done=False)
    assert td.batch_size == torch.Size([4, 70])
    assert td["observation"].shape == (4, 70, env.single_observation_space.shape[0])
    # 70 steps of 30-step episodes: each sub-env finishes twice
    assert int(td["next", "truncated"].sum()) == 8
    assert torch.isfinite(td["next", "reward"]).all()


def test_torchrl_rejects_next_step_mode_as_documented():
    pytest.importorskip("torchrl")
    from torchrl.envs import GymWrapper

    env = gym.make_vec(NAV, num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(Exception):
        GymWrapper(env).rollout(3)


def test_record_video_on_the_single_env(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gym.make(NAV, render_mode="rgb_array", max_episode_steps=20),
                      str(tmp_path), episode_trigger=lambda k: True, disable_logger=True)
    env.reset(seed=0)
    for _ in range(20):
        _, _, term, trunc, _ = env.step(np.array([1.0, 0.2], dtype=np.float32))
        if term or trunc:
            break
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_evaluate_writes_a_video(tmp_path):
    pytest.importorskip("moviepy")
    from train import evaluate, ppo

    ppo.train(ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=64, num_minibatches=2,
                            hidden=(8,), out=str(tmp_path / "run"), progress=False))
    out = tmp_path / "ev"
    assert evaluate.main([str(tmp_path / "run" / "checkpoint.pt"), "--episodes", "2",
                          "--max-episode-steps", "15", "--video", "--out", str(out)]) == 0
    assert (out / evaluate.VIDEO).stat().st_size > 1000


def test_ppo_writes_tensorboard_events(tmp_path):
    pytest.importorskip("tensorboard")
    from train import ppo

    ppo.train(ppo.PPOConfig(num_envs=8, num_steps=8, total_steps=128, num_minibatches=2,
                            hidden=(8,), out=str(tmp_path), progress=False, tensorboard=True))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = list((tmp_path / "tb").glob("events.out.tfevents.*"))
    assert events
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert "losses/value_loss" in tags and "reward/progress" in tags  # train.common.logs.TB_TAGS
    assert len(acc.Scalars("losses/value_loss")) == 2  # one per iteration


def test_torchrl_gym_env_by_id():
    # TorchRL builds the env by id, first with its frameskip keyword; an unknown keyword must
    # be the TypeError Python gives, so that it retries without it
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv

    tenv = GymEnv(NAV)
    td = tenv.rollout(5)
    assert td["observation"].shape[-1] == tenv.observation_spec["observation"].shape[-1]
    assert torch.isfinite(td["next", "reward"]).all()


_GYMENV_SCRIPT = '''
import offroad_env  # registers the ids; spawned workers re-import this script and register too
from torchrl.envs import GymEnv
if __name__ == "__main__":
    env = GymEnv("offroad_env/OffroadNav-v1", num_envs=2)
    td = env.rollout(4, break_when_any_done=False)
    print(tuple(td.batch_size), td["next", "end_reason"].dtype)
'''


def test_torchrl_gym_env_with_several_workers(tmp_path):
    """Issue 27, item 7: TorchRL's GymEnv(id, num_envs=N) runs N single envs in spawned workers.
    By the module-prefixed id Gymnasium imports offroad_env in each worker; by the plain id the
    user's script imports it at the top (which a spawned worker re-runs). Every info value is a
    number TorchRL's specs hold (the end reason an int code, not a string)."""
    pytest.importorskip("torchrl")
    import subprocess
    import sys

    from torchrl.envs import GymEnv

    env = GymEnv("offroad_env:offroad_env/OffroadNav-v1", num_envs=2)
    td = env.rollout(4, break_when_any_done=False)
    assert td.batch_size == torch.Size([2, 4])
    assert td["next", "end_reason"].dtype == torch.int64
    assert torch.isfinite(td["next", "reward"]).all()
    env.close()
    script = tmp_path / "user_script.py"
    script.write_text(_GYMENV_SCRIPT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "(2, 4) torch.int64" in run.stdout
