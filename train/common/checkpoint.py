"""PPO checkpoints and run configs: :func:`save_checkpoint` writes tensors and plain values only
(atomically: never a half-written file under the real name), :func:`load_checkpoint` reads them
with ``weights_only=True`` and checks the format, the fields and the observation layout."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

from train.common.agent import Agent, goal_column

__all__ = ["CHECKPOINT_FORMAT", "CheckpointError", "obs_layout", "save_checkpoint",
           "load_checkpoint", "config_to_plain", "sim_config_plain"]

CHECKPOINT_FORMAT = "offroad-env-ppo-1"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, corrupt, or made for another layout."""


def obs_layout(env) -> list[list]:
    """``[[term, start, stop], ...]`` of an offroad env (vector or single, wrapped or not)."""
    return [list(t) for t in env.unwrapped.obs_layout]


def save_checkpoint(path: Path, agent: Agent, optimizer, cfg, layout, iteration: int,
                    global_step: int, best: dict | None = None) -> None:
    """Write a checkpoint (atomically). ``best``: the run's best validated checkpoint so far
    (``best_checkpoint``, ``best_iteration``, ``best_val_*``), kept so that a run resumed in its
    own folder goes on from it."""
    state = {
        "format": CHECKPOINT_FORMAT,
        "model": agent.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "config": {**config_to_plain(cfg), "action_map": agent.action_map},  # the agent's own
        "obs_layout": layout,
        "obs_dim": int(agent.obs_dim),
        "critic_dim": int(agent.critic_dim),
        "act_dim": int(agent.actor_log_std.numel()),
        "iteration": int(iteration),
        "global_step": int(global_step),
    }
    if best:
        state["best"] = dict(best)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)  # never a half-written checkpoint under the real name


def load_checkpoint(path, env=None, device="cpu") -> tuple[Agent, dict]:
    """Load a checkpoint safely (``weights_only=True``); returns ``(agent, state)``.

    With ``env``, its observation layout must equal the checkpoint's. Raises
    :class:`CheckpointError` with the reason otherwise.
    """
    path = Path(path)
    if path.is_dir():
        inside = path / "checkpoint.pt"
        hint = f"; the run's checkpoint is {inside}" if inside.is_file() else ""
        raise CheckpointError(f"checkpoint {path} is a directory, not a checkpoint file{hint}")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # corrupt, truncated, not a torch file, unsafe pickle
        if path.stat().st_size == 0:
            why = "empty file"
        elif "Weights only load failed" in str(exc):
            # never pass on torch's advice to load it unsafely: it is simply not ours
            why = "it holds objects an offroad-env checkpoint never has"
        else:
            why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        raise CheckpointError(f"{path} is not an offroad-env checkpoint ({why})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not an offroad-env PPO checkpoint (format "
                              f"{state.get('format') if isinstance(state, dict) else None!r}, "
                              f"expected {CHECKPOINT_FORMAT!r})")
    missing = [k for k in ("model", "config", "obs_layout", "obs_dim", "act_dim", "iteration",
                           "global_step") if k not in state]
    if missing or not isinstance(state["config"], dict):
        raise CheckpointError(f"{path} is an incomplete checkpoint (missing {missing or 'config'})")
    if env is not None:
        layout = obs_layout(env)
        if layout != state["obs_layout"]:
            raise CheckpointError(
                f"{path} was trained on observation layout {state['obs_layout']} "
                f"({state['config']['env_id']}); this env has {layout}")
    cfg = state["config"]
    action_map = cfg.get("action_map", "direct")
    try:
        goal_col = goal_column(state["obs_layout"]) if action_map == "residual" else None
        agent = Agent(state["obs_dim"], state["act_dim"], tuple(cfg["hidden"]),
                      cfg["init_log_std"], action_map, goal_col,
                      int(state.get("critic_dim", 0)),
                      cfg.get("actor_inputs", "none")).to(device)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    try:
        agent.load_state_dict(state["model"])
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: weights do not fit the network ({exc})") from None
    return agent, state


def sim_config_plain(sim_cfg) -> dict:
    """The environment's full resolved SimConfig as JSON-able values (a given height map by
    its description; the generator fields it replaces say so)."""
    out = {}
    given = sim_cfg.heightmap is not None
    for f in dataclasses.fields(sim_cfg):
        v = getattr(sim_cfg, f.name)
        if f.name == "heightmap":
            out[f.name] = None if v is None else repr(v)
        elif given and f.name in ("terrain", "num_maps", "terrain_seed"):
            # a given map replaces the generator: its defaults did not make this run's terrain
            out[f.name] = "not used: the run's map is 'heightmap'"
        elif dataclasses.is_dataclass(v):
            out[f.name] = {"type": type(v).__name__,
                           **json.loads(json.dumps(dataclasses.asdict(v), default=str))}
        else:
            out[f.name] = json.loads(json.dumps(v, default=str))
    return out


def config_to_plain(cfg) -> dict:
    d = dataclasses.asdict(cfg)
    d["hidden"] = list(d["hidden"])
    return d


# ---------------------------------------------------------------------- training
