"""Drive one Husky over a real DEM with MPPI, in real time, and plot what it sampled on the
map planner's cost-to-go.

The planner (``train.planners.mppi``, at its defaults) is privileged: every 4th control step it
snapshots the env, rolls 16 candidate action sequences of 2 s forward, scores each by the map
planner's cost-to-go gained at its end (a terminal cost that sees past the horizon), and follows
their weighted mean; the map planner's own line is one of the candidates. ``--model twin``
(the default here) rolls the candidates on the kinematic twin of the physical model
(:class:`offroad_env.surrogate.Surrogate`): ground following over the same map, several times
cheaper; ``--model env`` rolls them on the physical model itself. ``--compile`` compiles the
world's step and the look-ahead (a cold compile takes minutes; later runs reuse it): compiled,
one robot plans and drives faster than real time on 2 cores (BENCHMARKS.md, "MPPI in real
time"). The task is OffroadBench v2's: the physical Husky on a 24 m window of the bundled SRTM
DEM (the ``real`` family), from one of the suite's starts to its goal. The plot shows the
cost-to-go to the goal, the path driven, and every few steps the sampled trajectories (darker:
more weight); the script prints the real-time factor (simulated seconds per wall second, the
planning included).

    python examples/mppi.py [--level 4] [--samples 16] [--seconds 2.0] [--model twin]
        [--compile] [--steps 300] [--out outputs/mppi.png]
"""

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from offroad_env import OffroadVectorEnv
from offroad_env.drawing.plots import pyplot
from offroad_env import EndReason
from train.planners.baselines import baseline
from train.planners.path import UNREACHABLE
from train.common.suite import load_suite, suite_config, suite_episode_steps, suite_tasks


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--level", type=int, default=4)
    p.add_argument("--task", type=int, default=0, help="which of the level's tasks")
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--seconds", type=float, default=2.0, help="the horizon [s]")
    p.add_argument("--model", choices=["twin", "env"], default="twin",
                   help="what the samples are rolled on")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--every", type=int, default=25, help="plot the samples every N steps")
    p.add_argument("--out", default="outputs/mppi.png")
    a = p.parse_args(argv)
    spec = load_suite("offroad-bench-v2")
    g = [g for g in spec.groups() if "real" in g.families][0]
    cfg = suite_config(g)
    env = OffroadVectorEnv(num_envs=1, config=cfg, compile=a.compile,
                           max_episode_steps=suite_episode_steps(g, cfg))
    tasks = suite_tasks(g, env.unwrapped.terrain)
    k = np.flatnonzero(tasks["level"] == a.level)[a.task]
    lo = torch.tensor([int(tasks["map_index"][k])])
    env.unwrapped.set_map_range(lo, torch.ones_like(lo))
    obs, _ = env.reset(seed=0, options={"start_pose": torch.tensor(tasks["start"][k:k + 1]),
                                        "goal": torch.tensor(tasks["goal"][k:k + 1])})
    plan = baseline(f"mppi:K={a.samples},seconds={a.seconds},model={a.model}", env, 0)
    path, samples, reason, walls = [], [], 0, []
    with torch.inference_mode():
        for t in range(a.steps):
            t0 = time.perf_counter()
            v = env.unwrapped.state_view()
            path.append((float(v.x[0]), float(v.y[0])))
            action = plan(obs)
            if t % a.every == 0:
                samples.append((plan.last_rollout.position[:, :, :].numpy(),
                                plan.last_weights[0].numpy()))
            obs, _, term, trunc, info = env.step(action)
            walls.append(time.perf_counter() - t0)
            if bool(term[0] | trunc[0]):
                reason = int(info["end_reason"][0])
                break
    end = EndReason(reason).name.lower() if reason else "running"
    dt = cfg.dt * cfg.action_repeat
    later = walls[len(walls) // 5:] or walls  # after the first fifth: the builds and compiles
    print(f"{len(path)} steps, ended: {end}; goal {tasks['goal'][k]}; real-time factor "
          f"{len(later) * dt / sum(later):.2f} (simulated s per wall s, planning included, "
          f"after the first {len(walls) - len(later)} steps)")
    plt = pyplot()
    hm = env.unwrapped.terrain[int(lo[0])]
    x0, x1, y0, y1 = hm.bounds
    fig, ax = plt.subplots(figsize=(7, 6))
    fi, _ = plan.field.field_slots(env.unwrapped.state_view())
    ctg = plan.field.fields.data[int(fi[0])].numpy()
    ctg = np.ma.masked_greater_equal(ctg, UNREACHABLE)
    im = ax.imshow(ctg, origin="lower", extent=(x0, x1, y0, y1), cmap="viridis",
                   vmax=float(np.percentile(ctg.compressed(), 90)))  # the edge's costs clipped
    ax.contour(hm.world_heights().reshape(hm.shape[0], hm.shape[1]).numpy(), origin="lower",
               extent=(x0, x1, y0, y1), colors="white", linewidths=0.4, alpha=0.5)
    fig.colorbar(im, ax=ax, label="cost-to-go to the goal [m equivalent]")
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
    ax.set_title(f"MPPI on the {a.model}, K = {a.samples}, {a.seconds:g} s: real level "
                 f"{a.level}\n"
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
