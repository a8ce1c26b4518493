"""Compile a training run's environment step in a process of its own (``PPOConfig.compile_after``):
the run starts with the eager step, this process builds the same environment with
``compile=True`` and drives it through a step and a partial reset, which fills torch's
compile cache on disk; at iteration ``compile_after`` the run switches to the compiled step,
whose compile then reads that cache (seconds instead of minutes on a cold machine).

    python -m train.ppo.warmup RUN/warmup.json     # the trainer starts it; nothing to run
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

__all__ = ["warm"]


def warm(spec: dict) -> None:
    """Build the run's env compiled (``spec``: the trainer's ``warmup.json``) and call every
    compiled function once: a step, then a step on which some rows run out of time and are
    placed again."""
    import offroad_env  # noqa: F401  (registers the ids)
    from wrappers import TerrainCurriculum

    from train.common.envconfig import env_kwargs as spec_kwargs
    from train.ppo.trainer import make_vec_env

    # the run's thread count: inductor writes it into the kernels it makes (and into the cache
    # key), so a compile on other threads would not be the run's
    torch.set_num_threads(int(spec.get("threads") or torch.get_num_threads()))
    kw = spec_kwargs(spec["env_id"], spec["env"], Path(spec["base"]),
                     tuple(spec["allow_modules"]))
    kw.pop("max_episode_steps", None)  # a suite's: the run's own limit is spec["limit"]
    kw["compile"] = True
    env = make_vec_env(spec["env_id"], spec["num_envs"], spec["device"], spec["limit"], **kw)
    if spec["curriculum_init_level"] is not None:
        env = TerrainCurriculum(env, spec["curriculum_init_level"])
    env.reset(seed=spec["seed"])
    n, limit = spec["num_envs"], env.unwrapped.max_episode_steps
    act = torch.zeros(n, env.single_action_space.shape[0], device=spec["device"])
    env.step(act)
    if limit:  # half of the rows at their last step: the next step resets them (a partial reset)
        steps = torch.where(torch.arange(n) % 2 == 0, limit - 1, 0).to(spec["device"])
        env.unwrapped.set_episode_steps(steps)
        env.step(act)
    env.step(act)
    env.close()


if __name__ == "__main__":
    warm(json.loads(Path(sys.argv[1]).read_text()))
