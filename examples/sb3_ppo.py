"""Stable-Baselines3 PPO on the native vector env through ``SB3VecEnv`` (``ep_rew_mean`` logs
without ``VecMonitor``).

    python examples/sb3_ppo.py --total-steps 200000
"""

import argparse

from stable_baselines3 import PPO

from wrappers import SB3VecEnv


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--total-steps", type=int, default=200_000)
    a = p.parse_args(argv)
    venv = SB3VecEnv.make("offroad_env/OffroadNav-v1", num_envs=a.num_envs, max_episode_steps=200)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=min(256, 32 * a.num_envs), seed=0,
                verbose=1)
    model.learn(a.total_steps)
    eps = list(model.ep_info_buffer)
    print(f"episodes seen: {len(eps)}, mean return "
          f"{sum(e['r'] for e in eps) / max(len(eps), 1):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
