"""Recording a video of a policy with Gymnasium's ``RecordVideo`` (needs moviepy: the ``video``
extra) on the single env.

    python examples/record_video.py --out runs/videos
"""

import argparse

import gymnasium as gym
from gymnasium.wrappers import RecordVideo

import offroad_env  # noqa: F401


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="runs/videos")
    p.add_argument("--steps", type=int, default=100)
    a = p.parse_args(argv)
    env = RecordVideo(gym.make("offroad_env/OffroadNav-v1", render_mode="rgb_array",
                               max_episode_steps=a.steps), a.out, episode_trigger=lambda e: True,
                      disable_logger=True)
    env.reset(seed=0)
    done = False
    while not done:  # the policy here: random actions (put yours in their place)
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        done = term or trunc
    env.close()
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
