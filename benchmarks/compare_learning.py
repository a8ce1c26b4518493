"""Learning, old trainer settings against new, on the same seeds (issue 28): a faster trainer
that learns worse is slower.

    python benchmarks/compare_learning.py [--configs old fast] [--seeds 1 2] [--seconds 240]
        [--env-id offroad_env/OffroadNav-v1] [--episodes 512] [--out runs/compare]
        [--threads 0] [--target 0.85]

Each configuration of ``benchmarks/bench_train.py``'s ``CONFIGS`` trains for ``--seconds`` of
wall time per seed: ``total_steps`` is the budget times its throughput measured in a short
warm-up run (so the learning rate anneals over the whole budget), and ``time_limit_s`` stops it
at the budget. Then its final checkpoint is evaluated on held-out terrain (``--episodes``
episodes, ``train.evaluate``'s terrain seed 1000). Prints, per configuration and seed, the
training success rate (the last 100 episodes) at fractions of the budget, against env-steps and
wall time, and the held-out success with its 95 % Wilson interval; writes ``curves.csv`` and,
with matplotlib, ``learning_old_vs_new.png`` under ``--out``; and the first env-step count and
wall time at which the training success reaches ``--target``. Two configurations can run side by
side as two processes (``--configs old --threads 1`` and ``--configs defaults --threads 1``, each
with its own ``--out``), so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_train import CONFIGS, run as throughput  # noqa: E402

from train.bench import wilson  # noqa: E402
from train.common.checkpoint import load_checkpoint  # noqa: E402
from train.evaluate import evaluate  # noqa: E402
from train.ppo import PPOConfig, train  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", nargs="+", default=["old", "fast"], choices=list(CONFIGS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--seconds", type=float, default=240.0)
    ap.add_argument("--env-id", default="offroad_env/OffroadNav-v1")
    ap.add_argument("--episodes", type=int, default=512)
    ap.add_argument("--out", default="runs/compare")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: the default)")
    ap.add_argument("--target", type=float, default=0.85,
                    help="report when the training success first reaches this")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rates = {c: throughput(c, 4, a.env_id, a.threads) for c in a.configs}
    rows, summary = [], {}
    for seed in a.seeds:
        for c in a.configs:
            cfg = dataclasses.replace(PPOConfig(env_id=a.env_id, progress=False, print_every=0,
                                                tensorboard=False, seed=seed,
                                                threads=a.threads), **CONFIGS[c])
            steps = int(rates[c] * a.seconds) // cfg.batch_size * cfg.batch_size
            run_dir = out / f"{c}_seed{seed}"
            cfg = dataclasses.replace(cfg, total_steps=max(steps, cfg.batch_size),
                                      time_limit_s=a.seconds, out=str(run_dir))
            train(cfg, force=True)
            with open(run_dir / "progress.csv") as f:
                prog = list(csv.DictReader(f))
            for r in prog:
                rows.append({"config": c, "seed": seed, "global_step": int(r["global_step"]),
                             "time_s": float(r["time_s"]),
                             "success_rate": float(r["success_rate"] or "nan")})
            agent, _ = load_checkpoint(run_dir / "checkpoint.pt")
            agent.eval()
            res = evaluate(lambda o: agent.act(o, deterministic=True), a.env_id,
                           episodes=a.episodes)
            k = round(res["success_rate"] * a.episodes)
            # a full window (100 episodes), so a lucky handful early on does not count
            first = next((r for r in prog if int(r["window_episodes"]) >= cfg.stats_window
                          and float(r["success_rate"] or 0) >= a.target), None)
            summary[f"{c}_seed{seed}"] = {
                f"first_train_success_{a.target}": None if first is None else {
                    "env_steps": int(first["global_step"]), "time_s": float(first["time_s"])},
                "env_steps": int(prog[-1]["global_step"]), "time_s": float(prog[-1]["time_s"]),
                "train_success": float(prog[-1]["success_rate"] or "nan"),
                "heldout_success": res["success_rate"], "heldout_ci95": wilson(k, a.episodes),
                "heldout_tip_over": res["tip_over_rate"]}
            print(json.dumps({f"{c}_seed{seed}": summary[f"{c}_seed{seed}"]}), flush=True)
    with open(out / "curves.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "summary.json").write_text(json.dumps({"throughput": rates, "runs": summary},
                                                 indent=2) + "\n")
    print(f"throughput (warm-up, env-steps/s): {json.dumps({c: round(r) for c, r in rates.items()})}")
    for seed in a.seeds:
        for frac in (0.25, 0.5, 0.75, 1.0):
            cells = []
            for c in a.configs:
                mine = [r for r in rows if r["config"] == c and r["seed"] == seed]
                t = frac * a.seconds
                at = [r for r in mine if r["time_s"] <= t] or mine[:1]
                cells.append(f"{c}: {at[-1]['success_rate']:.2f} at {at[-1]['global_step'] / 1e6:.1f} M")
            print(f"seed {seed}, {frac * a.seconds:.0f} s: " + "; ".join(cells))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for c in a.configs:
        for seed in a.seeds:
            mine = [r for r in rows if r["config"] == c and r["seed"] == seed]
            kw = dict(label=f"{c}, seed {seed}", color="C0" if c == a.configs[0] else "C1",
                      ls="-" if seed == a.seeds[0] else "--")
            ax[0].plot([r["global_step"] / 1e6 for r in mine], [r["success_rate"] for r in mine], **kw)
            ax[1].plot([r["time_s"] for r in mine], [r["success_rate"] for r in mine], **kw)
    ax[0].set_xlabel("env steps [M]")
    ax[1].set_xlabel("wall time [s]")
    for x in ax:
        x.set_ylabel("training success (last 100 episodes)")
        x.grid(alpha=0.3)
    ax[1].legend(fontsize=8)
    fig.suptitle(f"{a.env_id}: {' vs '.join(a.configs)}")
    fig.tight_layout()
    fig.savefig(out / "learning_old_vs_new.png", dpi=110)


if __name__ == "__main__":
    main()
