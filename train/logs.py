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

from offroad_env.tasks import EndReason

__all__ = ["RunLog", "EpisodeWindow", "progress_bar", "plot_learning_curve", "tb_tag",
           "TB_TAGS"]


#: TensorBoard tags of the log's columns, the names SB3 and CleanRL users look for: SB3's
#: ``rollout/`` and ``time/`` for the episodes and the clock, CleanRL's ``losses/`` and
#: ``charts/`` for the update. End-reason rates go under ``rollout/`` (``rollout/tip_over_rate``),
#: reward terms stay ``reward/<term>``; any other column keeps its name.
TB_TAGS = {"return_mean": "rollout/ep_rew_mean", "length_mean": "rollout/ep_len_mean",
           "success_rate": "rollout/success_rate", "episodes": "rollout/episodes",
           "window_episodes": "rollout/window_episodes", "steps_per_s": "time/fps",
           "time_s": "time/time_elapsed", "iteration": "time/iterations",
           "policy_loss": "losses/policy_loss", "value_loss": "losses/value_loss",
           "entropy": "losses/entropy", "approx_kl": "losses/approx_kl",
           "clip_frac": "losses/clipfrac", "lr": "charts/learning_rate",
           "mean_level": "curriculum/mean_level"}


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

    def write(self, row: dict) -> None:
        if self.fields is None:
            if self.append:
                with open(self.path) as f:
                    self.fields = next(csv.reader(f))
            else:
                self.fields = list(row)
                with open(self.path, "w", newline="") as f:
                    csv.writer(f).writerow(self.fields)
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, self.fields, extrasaction="ignore").writerow(row)
        if self.tb is not None:
            for k, v in row.items():
                if k != "global_step" and isinstance(v, (int, float)) and math.isfinite(v):
                    self.tb.add_scalar(tb_tag(k), v, row["global_step"])

    def close(self):
        if self.tb is not None:
            self.tb.close()


def progress_bar(total: int, initial: int, enabled: bool):
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(total=total, initial=initial, unit="step", unit_scale=True,
                        dynamic_ncols=True)
        except ImportError:
            pass
    return None


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
    """Return, success and tip-over rates against environment steps (needs matplotlib)."""
    from offroad_env.plots import pyplot

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
    a2.set_xlabel("environment steps")
    a2.set_ylabel("rate (the last finished episodes)")
    a2.set_ylim(-0.02, 1.02)
    a2.grid(True, alpha=0.3)
    a2.legend()
    fig.suptitle(f"PPO learning curve ({csv_path.parent.name})")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
