"""Your own task without forking: a reward, a termination, an observation and a reset event,
declared here as terms (offroad_env.task.terms), trained with PPO for a short run and evaluated.

    python examples/custom_task.py --total-steps 200000 --out runs/custom

- reward ``slip_on_soil``: the mean |slip ratio| of the wheels that stand in soil (their rut
  depth > 0), weight -0.1;
- termination ``left_corridor``: the vehicle left the corridor ``|y| <= 10.5 m`` along the
  map's x axis (spawns and goals keep 3 m from the 24 m map's border, so every episode starts
  inside it);
- observation ``slope_ahead``: the terrain's mean rise over 0.5-2 m ahead of base_link, per m;
- event ``friction_per_env``: each episode draws its ground friction in [0.6, 1.0] from the
  environment's own random stream.

The physical model (``rigid_body``) drives the Husky on the soft-soil family's maps. The terms
are module-level functions, so the run records them by import path; evaluating its checkpoint
from the command line needs ``--allow-module custom_task`` (importing runs code).
"""

import argparse
import json
from pathlib import Path

import torch

import terrain
from offroad_env import EventTerm, ObservationTerm, RewardTerm, TerminationTerm
from offroad_env import wheel_ruts

HALF_WIDTH = 10.5  # the corridor's half-width [m]


def slip_on_soil(ctx):
    """``(N,)`` mean |slip ratio| over the wheels in soil (0 where none is)."""
    on_soil = (wheel_ruts(ctx.state) > 0).to(ctx.distance.dtype)
    return (ctx.motion.drive.kappa.abs() * on_soil).sum(1) / on_soil.sum(1).clamp_min(1.0)


def left_corridor(ctx, half_width=HALF_WIDTH):
    return ctx.state.y.abs() > half_width


def slope_ahead(state, maps, cfg, near=0.5, far=2.0, samples=4):
    """``(N, 1)`` mean rise per m of the terrain from under base_link to ``near``..``far`` m
    ahead (along the heading)."""
    bp = state.contact.base_position
    h0 = maps.height(bp[:, 0], bp[:, 1], state.map_index)
    c, s = torch.cos(state.yaw), torch.sin(state.yaw)
    total = torch.zeros_like(h0)
    for d in torch.linspace(near, far, samples).tolist():
        h = maps.height(bp[:, 0] + d * c, bp[:, 1] + d * s, state.map_index)
        total = total + (h - h0) / d
    return torch.nan_to_num(total / samples).unsqueeze(1)


def friction_per_env(ev, mask, lo=0.6, hi=1.0):
    ev.set_params(mask, friction=lo + (hi - lo) * ev.uniform(1, mask)[:, 0])


TERMS = {
    "rewards": {"slip_on_soil": RewardTerm(slip_on_soil, weight=-0.1)},
    "terminations": {"left_corridor": TerminationTerm(left_corridor)},
    "observations": {"slope_ahead": ObservationTerm(slope_ahead, dim=1, low=-2.0, high=2.0)},
    "events": {"friction_per_env": EventTerm(friction_per_env, mode="reset",
                                             sets=("friction",))},
}


def env_kwargs(level: int = 3) -> dict:
    """The environment: OffroadNav-v1 on the soft-soil family (one world per level, 24 m maps),
    the physical model, and the terms above."""
    fam = terrain.FamilyConfig(size=(24.0, 24.0), resolution=(0.1, 0.1))
    levels = terrain.LevelsConfig(size=(24.0, 24.0), resolution=(0.1, 0.1), family=fam,
                                  families=("soft_soil",), worlds=1)
    from offroad_env import TaskConfig
    return dict(dynamics="rigid_body", ground="rigid_contact", terrain=levels,
                task=TaskConfig(kind="nav", goal_distance=(6.0, 10.0), spawn_margin=3.0),
                **TERMS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--total-steps", type=int, default=200_000)
    p.add_argument("--episodes", type=int, default=64, help="evaluation episodes")
    p.add_argument("--out", default="runs/custom_task")
    a = p.parse_args(argv)
    from train import evaluate, ppo

    steps = 16
    cfg = ppo.PPOConfig(num_envs=a.num_envs, num_steps=steps, out=a.out, progress=False,
                        total_steps=max(a.total_steps, a.num_envs * steps),
                        env_id="offroad_env/OffroadNav-v1", max_episode_steps=400)
    summary = ppo.train(cfg, force=True, env_kwargs=env_kwargs())
    agent, _ = ppo.load_checkpoint(summary["checkpoint"])
    agent.eval()
    res = {}
    for name, pol in (("ppo", lambda obs: agent.act(obs, deterministic=True)),
                      ("heuristic", "heuristic")):
        r = evaluate.evaluate(pol, "offroad_env/OffroadNav-v1", episodes=a.episodes,
                              max_episode_steps=400, **env_kwargs())
        res[name] = {"success_rate": r["success_rate"], "end_reasons": r["end_reasons"]}
    print(json.dumps(res, indent=1))
    (Path(a.out) / "custom_eval.json").write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
