"""What a training run reports: the per-iteration log (CSV, optional TensorBoard), the window of
the last finished episodes its statistics come from, the progress bar and the learning-curve
plot."""

from __future__ import annotations

import collections
import csv
import math
import statistics
from pathlib import Path

import numpy as np

from offroad_env.core.devices import compile_cache_dir
from offroad_env.task.task import EndReason

__all__ = ["RunLog", "EpisodeWindow", "Progress", "iteration_line", "notice_missing_extras", "plot_learning_curve",
           "tb_tag", "TB_TAGS", "summary_json"]


#: TensorBoard tags of the log's columns, the names SB3 and CleanRL users look for: SB3's
#: ``rollout/`` and ``time/`` for the episodes and the clock, CleanRL's ``losses/`` and
#: ``charts/`` for the update. End-reason rates go under ``rollout/`` (``rollout/tip_over_rate``),
#: reward terms stay ``reward/<term>``; any other column keeps its name.
TB_TAGS = {"return_mean": "rollout/ep_rew_mean", "length_mean": "rollout/ep_len_mean",
           "success_rate": "rollout/success_rate", "episodes": "rollout/episodes",
           "window_episodes": "rollout/window_episodes", "steps_per_s": "time/fps",
           "rollout_steps_per_s": "time/rollout_fps",
           "time_s": "time/time_elapsed", "iteration": "time/iterations",
           "policy_loss": "losses/policy_loss", "value_loss": "losses/value_loss",
           "entropy": "losses/entropy", "approx_kl": "losses/approx_kl",
           "clip_frac": "losses/clipfrac", "lr": "charts/learning_rate",
           "mean_level": "curriculum/mean_level",
           "val_success_rate": "eval/success_rate", "val_return_mean": "eval/mean_reward"}

#: TensorBoard's custom-scalars layout: training's and validation's success on one chart
#: (the CUSTOM SCALARS tab), so the gap between them shows while the run goes
TB_LAYOUT = {"success": {"training (window, sampled actions) vs validation (held-out, mean "
                         "action)": ["Multiline", ["rollout/success_rate",
                                                   "eval/success_rate"]]}}


def tb_tag(column: str) -> str:
    """The TensorBoard tag of a log column (:data:`TB_TAGS`)."""
    if column in TB_TAGS:
        return TB_TAGS[column]
    if column.endswith("_rate"):
        return f"rollout/{column}"
    return column


class RunLog:
    """CSV (and optionally TensorBoard, under :func:`tb_tag`'s names) rows, one per
    iteration."""

    def __init__(self, out: Path, append: bool, tensorboard: bool):
        self.path = out / "progress.csv"
        self.append = append and self.path.exists()
        self.fields = None
        self.tb = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise ImportError("--tensorboard needs the tensorboard package "
                                  "(pip install tensorboard)") from None
            self.tb = SummaryWriter(str(out / "tb"))
            self.tb.add_custom_scalars(TB_LAYOUT)

    def write(self, row: dict) -> None:
        if self.fields is None:
            if self.append:
                with open(self.path, newline="") as f:
                    reader = csv.DictReader(f)
                    old = list(reader)
                    head = list(reader.fieldnames or [])
                self.fields = head + [k for k in row if k not in head]
                if len(self.fields) > len(head):  # a newer version logs more: widen, keep all
                    self._rewrite(old)
            else:
                self.fields = list(row)
                self._rewrite([])
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, self.fields, extrasaction="ignore").writerow(row)
        if self.tb is not None:
            for k, v in row.items():
                if k != "global_step" and isinstance(v, (int, float)) and math.isfinite(v):
                    self.tb.add_scalar(tb_tag(k), v, row["global_step"])

    def _rewrite(self, rows: list[dict]) -> None:
        """Write the header of :attr:`fields` and ``rows`` under it (blank where they lack a
        column)."""
        with open(self.path, "w", newline="") as f:
            w = csv.DictWriter(f, self.fields)
            w.writeheader()
            w.writerows(rows)

    def close(self):
        if self.tb is not None:
            self.tb.close()


def iteration_line(row: dict, n_iter: int) -> str:
    """One line of a training log row: ``iter 10/244  163,840 steps  12,345 steps/s  success
    0.42  return 3.10  (window: 100 episodes)``, then ``validation success 0.80`` where the row
    validated; "no finished episodes yet" while the window is empty."""
    head = (f"iter {row['iteration']}/{n_iter}  {row['global_step']:,} steps  "
            f"{row['steps_per_s']:,.0f} steps/s")
    val = row.get("val_success_rate")
    val = "" if val is None else f"  validation success {val:.2f}"
    if not row.get("window_episodes"):
        return head + "  (no finished episodes yet)" + val
    return (head + f"  success {row['success_rate']:.2f}  return {row['return_mean']:.2f}  "
            f"(window: {row['window_episodes']} episodes)" + val)


_NOTICED = set()


def notice_missing_extras(file=None) -> list[str]:
    """Say once per process (to stderr) which of the train extra's packages are missing and
    what is left out without them; returns the missing names. A base install
    (``pip install offroad-env``) trains and evaluates without tqdm and matplotlib: progress
    comes as a line every few seconds, and no plots are drawn."""
    import importlib.util
    import sys

    left_out = {"tqdm": "progress bars (a line every 10 s instead)",
                "matplotlib": "plots (learning curve, evaluation and suite figures)"}
    missing = [m for m in left_out if importlib.util.find_spec(m) is None]
    new = [m for m in missing if m not in _NOTICED]
    if new:
        _NOTICED.update(new)
        print("offroad-env: " + "; ".join(f"{m} is not installed: no {left_out[m]}"
                                          for m in new)
              + ". pip install 'offroad-env[train]' adds them.", file=file or sys.stderr)
    return missing


def compile_notice(env: bool, policy: bool) -> str | None:
    """The line said before a compiled run's first iteration (None when nothing is compiled):
    what is compiled, that the first iteration waits for it, and where the compile cache that a
    second run reuses lies (``TORCHINDUCTOR_CACHE_DIR``, else inductor's default)."""
    parts = [w for w, on in (("the env's step", env), ("the agent's passes", policy)) if on]
    if not parts:
        return None
    where = compile_cache_dir()
    return (f"train.ppo: compiling {' and '.join(parts)}: the first iteration waits for it "
            f"(minutes on a cold cache, seconds on a warm one; the cache is {where})")


class Progress:
    """Progress of a long command on stderr: tqdm's bar (with its ETA) where tqdm is installed;
    else a line at most every ``every_s`` seconds with the share done, the rate and the ETA.
    Disabled (``enabled=False``), every method does nothing but :meth:`write`, which prints.

    ``total``/``initial``: in ``unit``s; :meth:`update` adds done units, :meth:`set_postfix`
    shows ``key=value`` figures after the bar, :meth:`write` prints a line without breaking it.
    """

    def __init__(self, total: int, initial: int = 0, enabled: bool = True, desc: str = "",
                 unit: str = "step", every_s: float = 10.0, file=None):
        import sys
        import time

        self.file = file or sys.stderr
        self.total, self.done, self.unit, self.desc = total, initial, unit, desc
        self.every_s, self._clock = every_s, time.perf_counter
        self._t0 = self._last = self._clock()
        self._start_done = self._shown = initial
        self._postfix = ""
        self.bar = None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, initial=initial, unit=unit, unit_scale=True,
                                dynamic_ncols=True, desc=desc or None, file=self.file)
            except ImportError:
                notice_missing_extras(self.file)

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            now = self._clock()
            if now - self._last >= self.every_s or self.done >= self.total:
                self._last, self._shown = now, self.done
                print(self.line(now), file=self.file, flush=True)

    def line(self, now: float | None = None) -> str:
        """The plain progress line: ``desc 40% 1,234/3,000 step, 95 step/s, ETA 0:00:18``."""
        now = self._clock() if now is None else now
        rate = (self.done - self._start_done) / max(now - self._t0, 1e-9)
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        eta_s = "?" if not math.isfinite(eta) else _hms(eta)
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f"{self.desc + ' ' if self.desc else ''}{pct:3.0f}% {self.done:,}/{self.total:,} "
                f"{self.unit}, {rate:,.0f} {self.unit}/s, ETA {eta_s}"
                + (f", {self._postfix}" if self._postfix else ""))

    def set_postfix(self, **figures) -> None:
        if self.bar is not None:
            self.bar.set_postfix(**figures)
        self._postfix = ", ".join(f"{k} {v}" for k, v in figures.items())

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.file)
        else:
            print(text, file=self.file, flush=True)

    def close(self) -> None:
        """Close the bar; a plain report prints its last line (also when the work ended early,
        as a suite whose tasks all finished)."""
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and self._shown != self.done:
            print(self.line(), file=self.file, flush=True)
            self._shown = self.done


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class EpisodeWindow:
    """The last ``size`` finished episodes (return, length, end reason), SB3's way of reporting
    training statistics: per-iteration rates over the few episodes that happened to end were
    biased towards the short ones (early successes) and jumped with lockstep bursts."""

    def __init__(self, size: int):
        self.size = size
        self.returns: collections.deque = collections.deque(maxlen=size)
        self.lengths: collections.deque = collections.deque(maxlen=size)
        self.reasons: collections.deque = collections.deque(maxlen=size)

    def add(self, returns, lengths, reasons) -> None:
        self.returns.extend(returns)
        self.lengths.extend(lengths)
        self.reasons.extend(reasons)

    def stats(self) -> dict:
        """``window_episodes`` (how many it holds, < size early on), and over them
        ``return_mean``, ``length_mean``, ``success_rate``, ``tip_over_rate`` and
        ``<reason>_rate`` of the other end reasons (NaN while empty)."""
        n = len(self.reasons)
        out = {"window_episodes": n,
               "return_mean": statistics.fmean(self.returns) if n else math.nan,
               "length_mean": statistics.fmean(self.lengths) if n else math.nan}
        counts = collections.Counter(self.reasons)
        for r in EndReason:
            if r == EndReason.NONE:
                continue
            key = "success_rate" if r == EndReason.GOAL_REACHED else f"{r.label}_rate"
            out[key] = counts[int(r)] / n if n else math.nan
        return out


def plot_learning_curve(csv_path: Path, png_path: Path) -> None:
    """Return, success and tip-over rates against environment steps, and the validation's
    success where the run validated (needs matplotlib)."""
    from offroad_env.drawing.plots import pyplot

    plt = pyplot()
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    x = np.array([float(r["global_step"]) for r in rows])
    col = lambda k: np.array([float(r[k]) for r in rows])  # noqa: E731
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.plot(x, col("return_mean"))  # window statistics: no gaps once episodes have ended
    if not np.isfinite(col("return_mean")).any():
        for ax in (a1, a2):
            ax.text(0.5, 0.5, "no finished episodes yet", transform=ax.transAxes,
                    ha="center", va="center")
    a1.set_xlabel("environment steps")
    a1.set_ylabel("mean episode return")
    a1.grid(True, alpha=0.3)
    for key, label in (("success_rate", "success"), ("tip_over_rate", "tip-over"),
                       ("hole_rate", "hole"), ("off_map_rate", "off map")):
        if key in rows[0] and (key in ("success_rate", "tip_over_rate")
                               or np.nanmax(col(key), initial=0.0) > 0):
            a2.plot(x, col(key), label=label)
    if "val_success_rate" in rows[0]:  # held-out episodes, the mean action, where it validated
        at = [i for i, r in enumerate(rows) if r["val_success_rate"] not in ("", "None")]
        if at:
            a2.plot(x[at], [float(rows[i]["val_success_rate"]) for i in at], "o-",
                    label="validation success (held-out worlds)")
    a2.set_xlabel("environment steps")
    a2.set_ylabel("rate (the last finished episodes)")
    a2.set_ylim(-0.02, 1.02)
    a2.grid(True, alpha=0.3)
    a2.legend()
    fig.suptitle(f"PPO learning curve ({csv_path.parent.name})")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)


def summary_json(summary: dict) -> dict:
    """The run's summary as valid JSON values: a statistic with no finished episode behind it
    is ``null`` (not NaN), and ``note`` says why."""
    keys = ("global_step", "time_s", "window_episodes", "return_mean", "success_rate",
            "tip_over_rate", "checkpoint")
    out = {k: (None if isinstance(summary[k], float) and math.isnan(summary[k]) else summary[k])
           for k in keys}
    if not summary["window_episodes"]:
        out["note"] = ("no finished episodes yet (with spread_starts, each environment's first, "
                       "shortened episode is left out): train longer for a return and success "
                       "rate")
    elif "mean_level" in summary:
        out["mean_level"] = summary["mean_level"]
        out["note"] = ("trained with the terrain curriculum: the window's rates are over the "
                       "curriculum's levels (mean_level), not the task's own mix; "
                       "train.evaluate or train.bench measures the policy on that")
    if "curriculum_top_levels" in summary:  # the levels the curriculum played, per family
        out["curriculum_top_levels"] = summary["curriculum_top_levels"]
    if summary.get("val_success_rate") is not None:  # the last validation, and the best
        out["val_success_rate"] = summary["val_success_rate"]
    for key in ("best_checkpoint", "best_iteration", "best_val_success_rate"):
        if key in summary:
            out[key] = summary[key]
    return out
