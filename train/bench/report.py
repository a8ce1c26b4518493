"""OffroadBench's report: the Markdown table of a run's results (success / tip-over / stuck per
family and policy) and the plot of every outcome against level."""

from __future__ import annotations

from pathlib import Path

from train.bench.run import OUTCOMES

__all__ = ["table_markdown", "plot_levels"]


def table_markdown(results: dict[str, dict]) -> str:
    """Per family (rows) and policy (columns): success / tip-over / stuck, and overall; a
    line below each table names the dominant failure of each family at its top level."""
    names = list(results)
    fams = list(next(iter(results.values()))["by_family"])
    lines = ["| family | " + " | ".join(f"{n}: success / tip-over / stuck" for n in names)
             + " |", "|---|" + "---|" * len(names)]
    for f in fams + ["overall"]:
        cells = []
        for n in names:
            c = results[n]["overall"] if f == "overall" else results[n]["by_family"][f]["all"]
            cells.append(" / ".join(f"{100 * c[k + '_rate']:.1f} %" for k in OUTCOMES[:3]))
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    if all(r.get("overall_start_ok") for r in results.values()) and any(
            not all(r.get("start_ok", [True])) for r in results.values()):
        # a suite of maps whose fixed tasks include starts that fail the braked check
        cells = [" / ".join(f"{100 * results[n]['overall_start_ok'][k + '_rate']:.1f} %"
                            for k in OUTCOMES[:3]) for n in names]
        k = results[names[0]]["overall_start_ok"]["episodes"]
        lines.append(f"| overall, the {k} starts that rest | " + " | ".join(cells) + " |")
    cut = {n: round(r["overall"].get("diverged_rate", 0) * r["overall"]["episodes"]) for n, r in
           results.items()}  # a failure the columns do not show
    if any(cut.values()):
        lines.append("\nEpisodes cut because the simulation stopped being finite (failures): "
                     + ", ".join(f"{n}: {k}" for n, k in cut.items()))
    return "\n".join(lines)


def plot_levels(results: dict[str, dict], path: Path) -> None:
    """Success and each failure that occurs (tip-over, stuck, hole, off-map, time-out) against
    level: a column per family, a row per outcome, a line per policy."""
    from offroad_env.drawing.plots import pyplot

    plt = pyplot()
    fams = list(next(iter(results.values()))["by_family"])
    rows = [k for k in OUTCOMES if k == "success" or any(
        res["by_family"][f]["all"].get(f"{k}_rate", 0) > 0 for res in results.values()
        for f in fams)]
    fig, axes = plt.subplots(len(rows), len(fams), figsize=(2.9 * len(fams), 2.3 * len(rows)),
                             sharey=True, squeeze=False)
    for j, f in enumerate(fams):
        for name, res in results.items():
            levels = sorted(int(k) for k in res["by_family"][f] if k != "all")
            cells = [res["by_family"][f][str(lv)] for lv in levels]
            for i, k in enumerate(rows):
                axes[i, j].plot(levels, [c[f"{k}_rate"] for c in cells], marker="o",
                                markersize=3, label=name)
        axes[0, j].set_title(f)
        axes[-1, j].set_xlabel("level")
    for i, k in enumerate(rows):
        axes[i, 0].set_ylabel(k.replace("_", "-") + " rate")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
