"""A TorchRL rollout: ``GymEnv`` by id (one env, then two in worker processes) and ``GymWrapper``
over the batched env (one process, the fast path).

    python examples/torchrl_rollout.py
"""

import argparse

import gymnasium as gym
import offroad_env  # noqa: F401  (registers the ids)
from gymnasium.vector import AutoresetMode
from torchrl.envs import GymEnv, GymWrapper


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=50)
    a = p.parse_args(argv)
    single = GymEnv("offroad_env/OffroadNav-v1")
    print(single.rollout(a.steps))
    # N single envs in spawned workers: the module-prefixed id registers the ids in each one
    workers = GymEnv("offroad_env:offroad_env/OffroadNav-v1", num_envs=2)
    print("worker rollout:", workers.rollout(a.steps, break_when_any_done=False).batch_size)
    workers.close()
    batched = GymWrapper(gym.make_vec("offroad_env/OffroadNav-v1", num_envs=8,
                                      vectorization_mode="vector_entry_point",
                                      autoreset_mode=AutoresetMode.SAME_STEP))
    td = batched.rollout(a.steps, break_when_any_done=False)
    print("batched rollout:", td.batch_size, "mean reward", float(td["next", "reward"].mean()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
