"""Drive one Husky over a real DEM with MPPI on the simulator itself, and plot what it sampled.

The planner (``train.planners.mppi``) is privileged: each control step it snapshots the env
(``env.get_state()``), steps K candidate action sequences of H steps on a second simulator that
shares the maps (``env.lookahead``), and takes the first action of their reward-weighted mean.
The task is OffroadBench v2's: the physical Husky on a 24 m window of the bundled SRTM DEM (the
``real`` family), from one of the suite's starts to its goal. The plot shows the height map, the
path driven, and every few steps the K sampled trajectories (darker: more weight).

    python examples/mppi.py [--level 4] [--samples 32] [--horizon 15] [--steps 300]
        [--out outputs/mppi.png]
"""

import argparse
from pathlib import Path

import numpy as np
import torch

from offroad_env import OffroadVectorEnv
from offroad_env.drawing.plots import pyplot
from offroad_env import EndReason
from train.planners import mppi_policy
from train.common.suite import load_suite, suite_config, suite_episode_steps, suite_tasks


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--level", type=int, default=4)
    p.add_argument("--task", type=int, default=0, help="which of the level's tasks")
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--horizon", type=int, default=15)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--every", type=int, default=25, help="plot the samples every N steps")
    p.add_argument("--out", default="outputs/mppi.png")
    a = p.parse_args(argv)
    spec = load_suite("offroad-bench-v2")
    g = [g for g in spec.groups() if "real" in g.families][0]
    cfg = suite_config(g)
    env = OffroadVectorEnv(num_envs=1, config=cfg,
                           max_episode_steps=suite_episode_steps(g, cfg))
    tasks = suite_tasks(g, env.unwrapped.terrain)
    k = np.flatnonzero(tasks["level"] == a.level)[a.task]
    lo = torch.tensor([int(tasks["map_index"][k])])
    env.unwrapped.set_map_range(lo, torch.ones_like(lo))
    obs, _ = env.reset(seed=0, options={"start_pose": torch.tensor(tasks["start"][k:k + 1]),
                                        "goal": torch.tensor(tasks["goal"][k:k + 1])})
    plan = mppi_policy(env, samples=a.samples, horizon=a.horizon)
    path, samples, reason = [], [], 0
    with torch.inference_mode():
        for t in range(a.steps):
            v = env.unwrapped.state_view()
            path.append((float(v.x[0]), float(v.y[0])))
            action = plan(obs)
            if t % a.every == 0:
                samples.append((plan.last_rollout.position[:, :, :].numpy(),
                                plan.last_weights[0].numpy()))
            obs, _, term, trunc, info = env.step(action)
            if bool(term[0] | trunc[0]):
                reason = int(info["end_reason"][0])
                break
    end = EndReason(reason).name.lower() if reason else "running"
    print(f"{len(path)} steps, ended: {end}; goal {tasks['goal'][k]}")
    plt = pyplot()
    hm = env.unwrapped.terrain[int(lo[0])]
    x0, x1, y0, y1 = hm.bounds
    fig, ax = plt.subplots(figsize=(7, 6))
    im = ax.imshow(hm.world_heights().reshape(hm.shape[0], hm.shape[1]).numpy(), origin="lower",
                   extent=(x0, x1, y0, y1),
                   cmap="terrain")
    fig.colorbar(im, ax=ax, label="height [m]")
    xy = np.asarray(path)
    ax.plot(xy[:, 0], xy[:, 1], "r-", lw=1.5, label=f"driven ({end})", zorder=2)
    for pos, w in samples:  # each a fan of K sampled futures, H steps long
        w = w / max(w.max(), 1e-12)
        for j in np.argsort(w):
            ax.plot(pos[:, j, 0], pos[:, j, 1], color=plt.cm.magma(0.85 * (1 - w[j])),
                    lw=1.2, alpha=0.35 + 0.65 * w[j], zorder=3)
    ax.plot(*tasks["goal"][k], "b*", ms=14, label="goal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"MPPI, K = {a.samples}, H = {a.horizon}: real level {a.level}\n"
                 f"sampled futures every {a.every} steps (dark: heavy weight)")
    ax.legend(loc="upper right")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=100)
    plt.close(fig)
    print(f"wrote {a.out}")
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
