"""OffroadBench: a fixed evaluation suite on terrain that tips careless driving.

    python -m train.bench --policy heuristic                 # offroad-bench-v0, a baseline
    python -m train.bench --policy runs/trav/checkpoint.pt    # a trained PPO policy
    python -m train.evaluate --suite offroad-bench-v0 --policy careful   # the same

A suite is a versioned spec kept in the repo (``train/suites/<name>.json``): families x levels x
worlds x start/goal pairs of the traverse task (``OffroadTraverse-v0``'s terrain families,
scaled for the spec's vehicle), every world generated from its seed and every pair drawn from
``pair_seed``, so the tasks are the same on every machine. ``offroad-bench-v0`` has 5 families x
10 levels x 2 worlds x 10 pairs = 1000 tasks with a 30 s limit. All tasks run batched in one
vector env (task ``k`` is sub-env ``k``, on its own map, from its start facing its goal); each
counts its first episode.

Metrics per family and level (and per family, and overall): success rate, time to goal
(successes), tip-over, hole, off-map, time-limit and stuck rates, mean and max ``|roll|`` and
``|pitch|``, the minimum force-angle stability margin, and energy: the tractive work
``sum max(0, m (a_x - g sin(pitch)) v) dt`` [J] (kinematic models have no drive train: this is
the work that moving the body's mass along its path takes, without rolling losses). Each rate
comes with its episode count and a 95 % Wilson interval: a cell of 20 episodes says +-20 %.

Policies: ``random``, ``heuristic`` (straight at the goal), ``careful`` (slope-aware: steers
along the contour and slows where the ground ahead is steep or the margin is low), or a
``train.ppo`` checkpoint. The same inputs give the same JSON, bit for bit, on one machine.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

import terrain as terrain_pkg
from offroad_env import OffroadVectorEnv, make_config
from offroad_env.config import family_config
from offroad_env.devices import configure_threads
from offroad_env.tasks import EndReason

from .logs import Progress, notice_missing_extras
from .outcomes import Outcomes
from .policies import BASELINES, baseline, careful_policy  # noqa: F401  (re-exported)

__all__ = ["SuiteSpec", "load_suite", "suite_tasks", "run_suite", "careful_policy", "main",
           "SUITES_DIR", "POLICIES", "wilson"]

SUITES_DIR = Path(__file__).parent / "suites"
POLICIES = tuple(BASELINES)


@dataclass(frozen=True)
class SuiteSpec:
    """An evaluation suite (the fields of ``train/suites/<name>.json``).

    Attributes:
        name, version: the suite's name and version (a changed task set is a new version).
        vehicle, dynamics, ground: the vehicle preset and models.
        families, num_levels, worlds, pairs: the task grid (tasks = product).
        size, resolution: map grid [m].
        terrain_seed: seed of the maps (map ``i`` from ``default_rng((terrain_seed, i))``).
        pair_seed: seed of the start/goal pairs (map ``i``'s from ``default_rng((pair_seed,
            i))``).
        goal_distance: range of the start-to-goal distance [m].
        margin: starts and goals keep this far from the map border [m].
        max_start_slope_deg: starts and goals lie where the plane fitted to the ground within
            1 m (a 5 x 5 grid) is at most this steep.
        time_limit_s: episode limit [s]. seed: the env seed (the random policy's too).
        stuck_time_s: an episode without progress toward its goal for this long ends as
            ``stuck`` (``TaskConfig.stuck_time``; None: never, as in v0).
    """

    name: str = "offroad-bench-v0"
    version: int = 0
    vehicle: str = "husky"
    dynamics: str = "unicycle"
    ground: str = "rigid_contact"
    families: tuple[str, ...] = terrain_pkg.HARD_FAMILIES
    num_levels: int = 10
    worlds: int = 2
    pairs: int = 10
    size: tuple[float, float] = (24.0, 24.0)
    resolution: tuple[float, float] = (0.1, 0.1)
    terrain_seed: int = 20261130
    pair_seed: int = 1
    goal_distance: tuple[float, float] = (8.0, 12.0)
    margin: float = 2.0
    max_start_slope_deg: float = 12.0
    time_limit_s: float = 30.0
    stuck_time_s: float | None = None
    seed: int = 0
    description: str = field(default="", compare=False)

    def __post_init__(self):
        for name in ("num_levels", "worlds", "pairs"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"suite {self.name}: {name} must be an int >= 1, got {v!r}")
        for name in ("time_limit_s", "margin", "max_start_slope_deg"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"suite {self.name}: {name} must be a number > 0, got {v!r}")
        st = self.stuck_time_s
        if st is not None and not (isinstance(st, (int, float)) and math.isfinite(st) and st > 0):
            raise ValueError(f"suite {self.name}: stuck_time_s must be a number > 0 or null, "
                             f"got {st!r}")
        lo, hi = (tuple(self.goal_distance) + (None, None))[:2]
        if len(tuple(self.goal_distance)) != 2 or not (0 < lo <= hi):
            raise ValueError(f"suite {self.name}: goal_distance must be (min, max) with "
                             f"0 < min <= max, got {self.goal_distance!r}")

    @property
    def levels(self) -> terrain_pkg.LevelsConfig:
        fam = family_config(self.vehicle, size=tuple(self.size),
                            resolution=tuple(self.resolution), num_levels=self.num_levels)
        return terrain_pkg.LevelsConfig(family=fam, families=tuple(self.families),
                                        worlds=self.worlds)

    @property
    def num_tasks(self) -> int:
        return len(self.families) * self.num_levels * self.worlds * self.pairs


def load_suite(name_or_path: str) -> SuiteSpec:
    """A suite by name (``train/suites/<name>.json``) or from a JSON file."""
    p = Path(name_or_path)
    if not p.suffix:
        p = SUITES_DIR / f"{name_or_path}.json"
    if not p.is_file():
        known = sorted(f.stem for f in SUITES_DIR.glob("*.json"))
        raise ValueError(f"unknown suite {name_or_path!r}; known: {known} (or a .json file)")
    try:
        raw = json.loads(p.read_text())
        raw = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        return SuiteSpec(**raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"suite file {p} is not a suite spec: {exc}") from None


def _env(spec: SuiteSpec, num_envs: int, device="cpu") -> OffroadVectorEnv:
    cfg = make_config("traverse", vehicle=spec.vehicle, dynamics=spec.dynamics,
                      ground=spec.ground, terrain=spec.levels, terrain_seed=spec.terrain_seed)
    cfg = replace(cfg, task=replace(cfg.task, goal_distance=tuple(spec.goal_distance),
                                    spawn_margin=spec.margin, stuck_time=spec.stuck_time_s))
    steps = int(round(spec.time_limit_s / cfg.dt))
    return OffroadVectorEnv(num_envs=num_envs, config=cfg, max_episode_steps=steps,
                            device=device)


def suite_tasks(spec: SuiteSpec, maps: terrain_pkg.HeightMap) -> dict[str, np.ndarray]:
    """The suite's tasks on its level stack ``maps``: ``map_index`` ``(T,)``, ``start``
    ``(T, 3)`` (x, y, yaw facing the goal) and ``goal`` ``(T, 2)`` [m], ``family``, ``level``,
    ``world`` ``(T,)``; tasks in the order family, level, world, pair."""
    lv = spec.levels
    x0, x1, y0, y1 = maps.bounds
    m = spec.margin
    tan_max = math.tan(math.radians(spec.max_start_slope_deg))
    ring = np.stack(np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5)), -1).reshape(-1, 2)
    out = {k: [] for k in ("map_index", "start", "goal", "family", "level", "world")}
    for fi in range(len(spec.families)):
        for level in range(spec.num_levels):
            for w in range(spec.worlds):
                i = lv.map_index(fi, level, w)
                rng = np.random.default_rng((spec.pair_seed, i))
                k = 4096
                sx, sy = rng.uniform(x0 + m, x1 - m, k), rng.uniform(y0 + m, y1 - m, k)
                d = rng.uniform(*spec.goal_distance, k)
                b = rng.uniform(-math.pi, math.pi, k)
                gx, gy = sx + d * np.cos(b), sy + d * np.sin(b)
                ok = (gx >= x0 + m) & (gx <= x1 - m) & (gy >= y0 + m) & (gy <= y1 - m)
                for px, py in ((sx, sy), (gx, gy)):  # the plane fitted under a 2 x 2 m patch
                    qx = torch.as_tensor(px[:, None] + ring[None, :, 0], dtype=maps.dtype)
                    qy = torch.as_tensor(py[:, None] + ring[None, :, 1], dtype=maps.dtype)
                    h = maps.height(qx, qy, torch.full(qx.shape, i, dtype=torch.int64)).double()
                    h = h.numpy() - h.numpy().mean(1, keepdims=True)
                    tilt = np.hypot(h @ ring[:, 0], h @ ring[:, 1]) / (ring[:, 0] ** 2).sum()
                    ok &= tilt <= tan_max
                picked = np.flatnonzero(ok)[:spec.pairs]
                if picked.size < spec.pairs:
                    raise ValueError(f"suite {spec.name}: map {i} (family "
                                     f"{spec.families[fi]}, level {level}) has only "
                                     f"{picked.size} start/goal pairs with ground under "
                                     f"{spec.max_start_slope_deg} deg; raise "
                                     "max_start_slope_deg")
                for j in picked:
                    out["map_index"].append(i)
                    out["start"].append((sx[j], sy[j], math.atan2(gy[j] - sy[j], gx[j] - sx[j])))
                    out["goal"].append((gx[j], gy[j]))
                    out["family"].append(fi)
                    out["level"].append(level)
                    out["world"].append(w)
    return {k: np.asarray(v) for k, v in out.items()}


def wilson(k: int, n: int) -> list[float]:
    """95 % Wilson score interval of ``k`` successes in ``n``."""
    if n == 0:
        return [0.0, 1.0]
    z = 1.959963984540054
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return [round(c - h, 6), round(c + h, 6)]


def _cell(sel: np.ndarray, per: dict, dt: float) -> dict:
    n = int(sel.sum())
    reason = per["reason"][sel]
    ok = reason == int(EndReason.GOAL_REACHED)
    out = {"episodes": n}
    for label, code in (("success", EndReason.GOAL_REACHED), ("tip_over", EndReason.TIP_OVER),
                        ("hole", EndReason.HOLE), ("off_map", EndReason.OFF_MAP),
                        ("time_limit", EndReason.TIME_LIMIT), ("stuck", EndReason.STUCK)):
        k = int((reason == int(code)).sum())
        out[f"{label}_rate"] = k / n
        out[f"{label}_ci95"] = wilson(k, n)
    out["time_to_goal_s"] = float(per["length"][sel][ok].mean() * dt) if ok.any() else None
    for key in ("roll", "pitch"):
        out[f"mean_abs_{key}_deg"] = float(per[f"mean_{key}"][sel].mean())
        out[f"max_abs_{key}_deg"] = float(per[f"max_{key}"][sel].max())
    out["min_margin_deg"] = float(per["min_margin"][sel].min())
    out["mean_min_margin_deg"] = float(per["min_margin"][sel].mean())
    out["energy_j"] = float(per["energy"][sel].mean())
    return out


def run_suite(spec: SuiteSpec, policy, device="cpu", progress: bool = False,
              label: str = "") -> dict:
    """Run ``policy`` on every task of ``spec``; returns the results (module docstring).

    ``policy``: ``"random"``, ``"heuristic"``, ``"careful"``, or a function ``(env) ->
    act(obs (T, D) tensor) -> (T, 2) actions``. ``progress``: a bar with its ETA on stderr
    over the episode's steps (``label`` names it; the run stops early once every task ends)."""
    env = _env(spec, spec.num_tasks, device)
    base = env.unwrapped
    tasks = suite_tasks(spec, base.terrain)
    T = spec.num_tasks
    f64 = torch.float64
    lo = torch.as_tensor(tasks["map_index"], device=base.device)
    base.set_map_range(lo, torch.ones_like(lo))
    obs, _ = env.reset(seed=spec.seed, options={
        "start_pose": torch.as_tensor(tasks["start"], dtype=f64),
        "goal": torch.as_tensor(tasks["goal"], dtype=f64)})
    if isinstance(policy, str) and policy in BASELINES:
        act = baseline(policy, env, spec.seed)
    elif callable(policy):
        act = policy(env)
    else:
        raise ValueError(f"policy must be one of {POLICIES} or a function, got {policy!r}")
    cfg = base.config
    g, dt, mass = cfg.gravity, cfg.dt, base.vehicle.mass
    out = Outcomes(T)
    energy = torch.zeros(T, dtype=f64)
    min_margin = torch.full((T,), math.inf, dtype=f64)
    m0 = {n: a for n, a, _ in base.obs_layout}["stability"]
    min_margin = torch.minimum(min_margin, obs[:, m0].double().cpu())
    v_prev = base.state_view().body_velocity[:, 0].double().cpu()
    bar = Progress(base.max_episode_steps, enabled=progress, desc=label or str(policy),
                   unit="step")
    with torch.inference_mode():
        for _ in range(base.max_episode_steps):
            bar.update(1)
            obs, r, term, trunc, info = env.step(act(obs))
            view = base.state_view()
            live = out.add(r, view.roll, view.pitch, term | trunc, info["end_reason"])
            # the observed margin is this step's (the reset of a finished task comes later)
            min_margin = torch.where(live, torch.minimum(min_margin, obs[:, m0].double().cpu()),
                                     min_margin)
            v = view.body_velocity[:, 0].double().cpu()
            a_x = (v - v_prev) / dt
            power = (mass * (a_x - g * torch.sin(view.pitch.double().cpu())) * v).clamp_min(0)
            energy += torch.where(live, power * dt, 0.0)
            v_prev = v
            if not bool(out.active.any()):
                break
            bar.set_postfix(running=int(out.active.sum()))
    bar.close()
    env.close()
    out.finish()  # tasks that ran out of steps
    length = out.length
    per = {"reason": out.reason.numpy(), "length": length.numpy(),
           "mean_roll": np.degrees((out.roll_sum / length.clamp_min(1)).numpy()),
           "mean_pitch": np.degrees((out.pitch_sum / length.clamp_min(1)).numpy()),
           "max_roll": np.degrees(out.roll_max.numpy()),
           "max_pitch": np.degrees(out.pitch_max.numpy()),
           "min_margin": np.degrees(min_margin.numpy()), "energy": energy.numpy()}
    fam, lev = tasks["family"], tasks["level"]
    table = {}
    for fi, name in enumerate(spec.families):
        table[name] = {"all": _cell(fam == fi, per, dt)}
        for level in range(spec.num_levels):
            table[name][str(level)] = _cell((fam == fi) & (lev == level), per, dt)
    level_specs = {name: [terrain_pkg.level_spec(replace(spec.levels.family, family=name), lv)
                          for lv in range(spec.num_levels)] for name in spec.families}
    return {
        "suite": asdict(spec), "policy": policy if isinstance(policy, str) else "function",
        "tasks": T, "overall": _cell(np.ones(T, dtype=bool), per, dt), "by_family": table,
        "level_specs": level_specs,
        "per_task": {"end_reason": [EndReason(int(c)).label for c in per["reason"]],
                     "steps": per["length"].tolist(),
                     "max_abs_roll_deg": per["max_roll"].round(4).tolist(),
                     "max_abs_pitch_deg": per["max_pitch"].round(4).tolist(),
                     "min_margin_deg": per["min_margin"].round(4).tolist(),
                     "energy_j": per["energy"].round(4).tolist()},
    }


def table_markdown(results: dict[str, dict]) -> str:
    """Success / tip-over per family (rows) and policy (columns), and overall."""
    names = list(results)
    fams = list(next(iter(results.values()))["by_family"])
    head = "| family | " + " | ".join(f"{n}: success / tip-over" for n in names) + " |"
    lines = [head, "|---|" + "---|" * len(names)]
    for f in fams + ["overall"]:
        cells = []
        for n in names:
            c = results[n]["overall"] if f == "overall" else results[n]["by_family"][f]["all"]
            cells.append(f"{100 * c['success_rate']:.1f} % / {100 * c['tip_over_rate']:.1f} %")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_levels(results: dict[str, dict], path: Path) -> None:
    """Success and tip-over rate against level, one panel per family, one line per policy."""
    from offroad_env.plots import pyplot

    plt = pyplot()
    fams = list(next(iter(results.values()))["by_family"])
    fig, axes = plt.subplots(2, len(fams), figsize=(3.2 * len(fams), 5.5), sharey=True,
                             squeeze=False)
    for j, f in enumerate(fams):
        for name, res in results.items():
            levels = sorted(int(k) for k in res["by_family"][f] if k != "all")
            cells = [res["by_family"][f][str(lv)] for lv in levels]
            axes[0, j].plot(levels, [c["success_rate"] for c in cells], marker="o", label=name)
            axes[1, j].plot(levels, [c["tip_over_rate"] for c in cells], marker="o", label=name)
        axes[0, j].set_title(f)
        axes[1, j].set_xlabel("level")
    axes[0, 0].set_ylabel("success rate")
    axes[1, 0].set_ylabel("tip-over rate")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train.bench", description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="offroad-bench-v0", help="a suite name or JSON spec")
    p.add_argument("--policy", nargs="+", required=True, metavar="POLICY",
                   help=f"one or more of {POLICIES} or checkpoint paths; LABEL=PATH names a "
                        "checkpoint in the table and plot (default: its folder's name)")
    p.add_argument("--out", default=None, help="output folder (default runs/bench/<suite>)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (default 0: the physical cores, capped at the free ones)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (by default one per policy on stderr, with its ETA)")
    return p


def _policy(name: str, device):
    if name in POLICIES:
        return name
    from .checkpoint import load_checkpoint

    def make(env):
        agent, _ = load_checkpoint(name, env, device)  # the layout must be the suite env's
        agent.eval()
        return lambda obs: agent.act(obs, deterministic=True)
    if not Path(name).is_file():
        raise ValueError(f"policy {name!r} is neither one of {POLICIES} nor a checkpoint file")
    return make


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = load_suite(args.suite)
        out = Path(args.out) if args.out else Path("runs") / "bench" / spec.name
        files = ["bench.json", "bench.md", "bench_levels.png"]
        if not args.force:
            for f in files:
                if (out / f).exists():
                    raise FileExistsError(f"{out / f} exists; pass --force to overwrite it")
        pols = {}
        for p in args.policy:
            label, sep, path = p.rpartition("=")
            if not sep or p in POLICIES or Path(p).is_file():
                label, path = (p if p in POLICIES else Path(p).parent.name), p
            if label in pols:
                raise ValueError(f"two policies are labelled {label!r}; name them LABEL=PATH")
            pols[label] = _policy(path, args.device)
        notice_missing_extras()
        configure_threads(args.threads)
        results = {name: run_suite(spec, pol, args.device, progress=not args.no_progress,
                                   label=name) for name, pol in pols.items()}
        out.mkdir(parents=True, exist_ok=True)
    except (ValueError, FileExistsError, OSError) as exc:
        print(f"train.bench: error: {exc}", file=sys.stderr)
        return 2
    (out / "bench.json").write_text(json.dumps(results, indent=1) + "\n")
    md = table_markdown(results)
    (out / "bench.md").write_text(md + "\n")
    try:
        plot_levels(results, out / "bench_levels.png")
    except ImportError as exc:
        print(f"(no plot: {exc})", file=sys.stderr)
    print(md)
    print(f"wrote {out}/: " + ", ".join(files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
