"""CleanRL-style PPO on a native torch vector env (``gym.make_vec``), then a held-out evaluation.

    python examples/ppo_cleanrl.py --total-steps 2000000 --out runs/example_ppo
"""

import argparse

from train import evaluate, ppo


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="offroad_env/OffroadNav-v1")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--total-steps", type=int, default=2_000_000)
    p.add_argument("--out", default="runs/example_ppo")
    a = p.parse_args(argv)
    cfg = ppo.PPOConfig(env_id=a.env_id, num_envs=a.num_envs, num_steps=16,
                        total_steps=a.total_steps, num_minibatches=2, out=a.out, progress=False)
    summary = ppo.train(cfg, force=True)
    print("trained:", {k: summary[k] for k in ("global_step", "success_rate", "checkpoint")})
    return evaluate.main([summary["checkpoint"], "--episodes", "16", "--out", a.out + "/eval",
                          "--force"])


if __name__ == "__main__":
    raise SystemExit(main())
