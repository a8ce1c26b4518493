"""Running a policy over episodes of a vector env, the evaluation every program shares:
:func:`evaluate` (M episodes as M sub-environments of one vector env on held-out maps, each
sub-env's first episode counting; rates, times and attitude statistics), :func:`run_episodes`
(the loop, its :class:`~train.common.outcomes.Outcomes`) and the held-out seeds. PPO's validation
and ``python -m train.evaluate`` both use it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

import offroad_env  # noqa: F401  (registers the ids)
from offroad_env.task.task import EndReason

from train.common.envconfig import check_env_id
from train.common.logs import Progress
from train.common.outcomes import Outcomes
from train.planners.baselines import baseline

__all__ = ["evaluate", "run_episodes", "frame_strip", "EVAL_SEED", "HELD_OUT_TERRAIN_SEED"]

#: the maps' seed of the held-out worlds (training uses the registered ``terrain_seed``, 0)
HELD_OUT_TERRAIN_SEED = 1000
#: the spawn and goal seed of the evaluation episodes
EVAL_SEED = 10_000


def evaluate(policy, env_id: str, episodes: int = 256, seed: int = EVAL_SEED,
             terrain_seed: int = HELD_OUT_TERRAIN_SEED, max_episode_steps: int | None = None,
             frames: bool = False, progress: bool = False, **env_kwargs) -> dict:
    """Run ``episodes`` episodes of ``policy`` (a function, or the string ``"random"`` or
    ``"heuristic"``) and return the statistics (see the module docstring).

    ``policy(obs (M, D) tensor) -> actions (M, 2)``, or an object whose ``bind(env)`` returns
    one for the env made here (a trained agent with inputs of its own computed from the env:
    :class:`train.common.inputs.AgentPolicy`). ``frames``: also return the rgb_array
    frames of episode 0 under ``"frames"``. ``progress``: a bar with its ETA on stderr over
    the episodes' steps (the run stops early once every episode ends).
    """
    check_env_id(env_id)
    if int(episodes) != episodes or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    kw = dict(env_kwargs, terrain_seed=terrain_seed)
    if max_episode_steps is not None:
        kw["max_episode_steps"] = max_episode_steps
    env = gym.make_vec(env_id, num_envs=episodes, vectorization_mode="vector_entry_point",
                       render_mode="rgb_array" if frames else None, **kw)
    if isinstance(policy, str):
        policy = baseline(policy, env, seed)
    elif hasattr(policy, "bind"):
        policy = policy.bind(env)
    base = env.unwrapped
    M = episodes
    out, shots = run_episodes(env, policy, seed, frames, progress)
    dt, labels = base.config.dt, base.end_labels  # the config's own terminations too
    env.close()
    reason, length, ret = out.reason, out.length, out.ret
    success = reason == EndReason.GOAL_REACHED
    n = float(M)
    res = {
        "env_id": env_id, "episodes": M, "seed": seed, "terrain_seed": terrain_seed,
        "success_rate": float(success.sum()) / n,
        "tip_over_rate": float((reason == EndReason.TIP_OVER).sum()) / n,
        "end_reasons": {label: int((reason == code).sum()) for code, label in labels.items()
                        if code != EndReason.NONE},
        "time_to_goal_s": float(length[success].double().mean() * dt) if success.any() else None,
        "return_mean": float(ret.mean()),
        "mean_abs_roll_deg": float(out.mean_abs_deg("roll").mean()),
        "max_abs_roll_deg": float(out.max_abs_deg("roll").max()),
        "mean_abs_pitch_deg": float(out.mean_abs_deg("pitch").mean()),
        "max_abs_pitch_deg": float(out.max_abs_deg("pitch").max()),
        "per_episode": {"end_reason": [labels[c] for c in reason.tolist()],
                        "length": length.tolist(), "return": ret.tolist(),
                        "max_abs_roll_deg": out.max_abs_deg("roll").tolist(),
                        "max_abs_pitch_deg": out.max_abs_deg("pitch").tolist()},
    }
    if frames:
        res["frames"] = shots
    return res


def run_episodes(env, policy, seed: int, frames: bool = False,
                 progress: bool = False) -> tuple[Outcomes, list]:
    """Reset the vector env ``env`` (M sub-envs) with ``seed`` and run ``policy`` until each
    sub-env's first episode ends (or the env's time limit, else 10 000 steps, passes); returns
    its :class:`Outcomes` (finished) and, with ``frames``, episode 0's rgb_array frames."""
    base = env.unwrapped
    limit = base.max_episode_steps or 10_000
    obs, _ = env.reset(seed=seed)
    out = Outcomes(env.num_envs)
    shots = [env.render()[0]] if frames else []
    bar = Progress(limit, enabled=progress, desc="evaluate", unit="step")
    with torch.inference_mode():
        for _ in range(limit):
            bar.update(1)
            obs, r, term, trunc, info = env.step(policy(obs))
            view = base.state_view()
            live = out.add(r, view.roll, view.pitch, term | trunc, info["end_reason"])
            if hasattr(policy, "active"):  # a planner plans only the episodes still counted
                policy.active = out.active
            if frames and bool(live[0]):
                shots.append(env.render()[0])
            if not bool(out.active.any()):
                break
            bar.set_postfix(running=int(out.active.sum()))
    bar.close()
    out.finish()  # episodes that ran out of steps
    return out, shots


def frame_strip(frames: list, count: int = 8) -> np.ndarray:
    """``count`` evenly spaced frames side by side, ``(H, count * W, 3)`` uint8."""
    idx = np.linspace(0, len(frames) - 1, min(count, len(frames))).round().astype(int)
    return np.concatenate([frames[i] for i in idx], axis=1)
