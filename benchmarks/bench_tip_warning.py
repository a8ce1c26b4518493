"""Does the stability signal warn before a tip-over? (issue 44, item 2)

The physical Husky drives the straight line to the goal (the suite's ``heuristic`` baseline) on
the boulders and rough families, levels 5-9, on worlds of a given terrain seed (not the
suite's), one episode per environment. Each step records two signals: the energy stability
margin (``energy_margin`` [m]) and the force-angle margin under acceleration (``stability``
[rad]). For a threshold theta, a step "warns" where the signal is below theta:

* a tip-over's **warning time** is the length of the final unbroken run of warning steps that
  ends at the tip (0 if the step before the tip does not warn); it is **caught** when that is
  at least ``--lead`` seconds (0.1 s);
* the **false-alarm rate** is the share of the steps of episodes that never tip that warn.

The thresholds are tuned on one seed (``--tune-seed``: the largest theta whose false-alarm rate
is at most 5 %) and the catch rate reported on another (``--seed``), with the whole curve.

    python benchmarks/bench_tip_warning.py [--n 1024] [--seed 7] [--tune-seed 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offroad_env import OffroadVectorEnv  # noqa: E402
from offroad_env.task.task import EndReason  # noqa: E402
from train.planners.baselines import baseline  # noqa: E402
from train.common.suite import load_suite, suite_config  # noqa: E402

SIGNALS = ("energy_margin", "stability")


def episodes(n: int, seed: int, steps: int = 600) -> dict:
    """One episode per env; returns the signals ``(T, n)``, the tip step per env (-1: none)
    and the step each episode ended (its length)."""
    spec = load_suite("offroad-bench-v2")
    g = [g for g in spec.groups() if "boulders" in g.families][0]
    cfg = suite_config(g, terrain_seed=seed,
                       obs_terms=tuple(spec.obs_terms) + ("energy_margin",))
    cfg = replace(cfg, task=replace(cfg.task, stuck_time=None))
    env = OffroadVectorEnv(num_envs=n, config=cfg, max_episode_steps=steps)
    base = env.unwrapped
    lv = g.levels
    fams = [g.families.index(f) for f in ("boulders", "rough")]
    rows = torch.arange(n)
    lo = torch.tensor([lv.map_index(fams[i % 2], 5 + (i // 2) % 5, (i // 10) % g.worlds)
                       for i in range(n)])
    base.set_map_range(lo, torch.ones_like(lo))
    obs, _ = env.reset(seed=seed)
    act = baseline("heuristic", env, seed)
    lay = {k: (a, b) for k, a, b in base.obs_layout}
    rec = {k: [] for k in SIGNALS}
    tip = np.full(n, -1)
    length = np.full(n, steps)
    live = np.ones(n, dtype=bool)
    with torch.inference_mode():
        for t in range(steps):
            for k in SIGNALS:
                rec[k].append(obs[:, lay[k][0]].double().numpy().copy())
            obs, _, term, trunc, info = env.step(act(obs))
            done = (term | trunc).numpy() & live
            why = info["end_reason"].numpy()
            tip[done & (why == int(EndReason.TIP_OVER))] = t
            length[done] = t + 1
            live &= ~done
            if not live.any():
                break
    env.close()
    del rows
    return {"signals": {k: np.stack(v) for k, v in rec.items()}, "tip": tip,
            "length": length, "dt": cfg.dt}


def judge(ep: dict, signal: str, theta: float, lead: float) -> tuple[float, float, list]:
    """``(catch rate, false-alarm rate, warning times [s] of the tip-overs)``."""
    x, tip, length, dt = ep["signals"][signal], ep["tip"], ep["length"], ep["dt"]
    warn = x < theta
    times = []
    for i in np.flatnonzero(tip >= 0):
        run, t = 0, tip[i]  # the signal observed before the tipping step: rows 0..t
        while t >= 0 and warn[t, i]:
            run, t = run + 1, t - 1
        times.append(run * dt)
    calm = np.flatnonzero(tip < 0)
    steps = sum(int(length[i]) for i in calm)
    false = sum(int(warn[:length[i], i].sum()) for i in calm) / max(steps, 1)
    caught = float(np.mean([w >= lead for w in times])) if times else float("nan")
    return caught, false, times


def tune(ep: dict, signal: str, lead: float, alarm: float = 0.05) -> float:
    """The largest threshold whose false-alarm rate is at most ``alarm``."""
    x = ep["signals"][signal]
    cands = np.unique(np.quantile(x[np.isfinite(x)], np.linspace(0.0, 0.2, 201)))
    best = float(cands[0])
    for th in cands:
        if judge(ep, signal, float(th), lead)[1] <= alarm:
            best = float(th)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tune-seed", type=int, default=5)
    ap.add_argument("--lead", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    tune_ep = episodes(args.n, args.tune_seed)
    test_ep = episodes(args.n, args.seed)
    out = {"tip_overs": {"tune": int((tune_ep["tip"] >= 0).sum()),
                         "report": int((test_ep["tip"] >= 0).sum())},
           "episodes": args.n, "signals": {}}
    print(f"tip-overs: {out['tip_overs']} of {args.n} episodes each (boulders and rough, "
          "levels 5-9, straight line)")
    print("| signal | threshold | catch rate (>= %.1f s ahead) | false alarms | median warning "
          "[s] |" % args.lead)
    print("|---|---|---|---|---|")
    for sig in SIGNALS:
        rows = {}
        for label, th in (("0", 0.0), ("tuned", tune(tune_ep, sig, args.lead))):
            c, f, times = judge(test_ep, sig, th, args.lead)
            rows[label] = {"theta": th, "catch": c, "false_alarm": f,
                           "median_warning_s": float(np.median(times)) if times else None}
            print(f"| {sig} | {label} = {th:.4g} | {c:.1%} | {f:.2%} | "
                  f"{rows[label]['median_warning_s']} |")
        curve = []
        for th in np.unique(np.quantile(test_ep["signals"][sig],
                                        np.linspace(0.0, 0.3, 31))):
            c, f, _ = judge(test_ep, sig, float(th), args.lead)
            curve.append((float(th), c, f))
        rows["curve"] = curve
        out["signals"][sig] = rows
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
