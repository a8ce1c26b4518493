"""Draw the soil figures: drawbar pull against slip and sinkage against load for each soil of
``offroad_env.physics.soil.SOILS``, for the Husky's rigid wheel (r 0.1651 m, b 0.1143 m).

    python docs/soil_plots.py            # writes docs/soil_drawbar_pull.png, docs/soil_sinkage.png

Drawbar pull is per wheel at the static load (a quarter of 50 kg), as a fraction of that load,
without (solid) and with (dashed) Lyasko's slip-sinkage (a deeper rut, a longer contact, the
compaction at the load's sinkage: ``offroad_env.physics.soil.drawbar_pull``); sinkage is rolling
(solid) and at rest
(dotted) against the load, with the classical closed form (thin).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from offroad_env.physics import soil as S

R, B = 0.1651, 0.1143
W0 = 50.0 * 9.81 / 4.0


def main(out_dir: Path = Path(__file__).resolve().parent) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    i = torch.linspace(0.0, 1.0, 201, dtype=torch.float64)
    W = torch.linspace(5.0, 3.0 * W0, 200, dtype=torch.float64)
    fig, ax = plt.subplots(figsize=(8, 5))
    for k, (name, s) in enumerate(S.SOILS.items()):
        colour = f"C{k}"
        pull, _ = S.drawbar_pull(s, B, R, W0, i)
        dug, _ = S.drawbar_pull(s, B, R, W0, i, slip_sinks=True)
        ax.plot(i, pull / W0, color=colour, label=name)
        ax.plot(i, dug / W0, color=colour, ls="--", lw=1)
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set(xlabel="slip i = 1 - v / (omega r)", ylabel="drawbar pull / wheel load",
           title="Husky wheel at its static load (dashed: with slip-sinkage)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    paths = [out_dir / "soil_drawbar_pull.png"]
    fig.savefig(paths[0], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 5))
    for k, (name, s) in enumerate(S.SOILS.items()):
        colour = f"C{k}"
        ax.plot(W, 1e3 * S.sinkage(s, B, R, W), color=colour, label=name)
        ax.plot(W, 1e3 * S.sinkage(s, B, R, W, static=True), color=colour, ls=":")
        ax.plot(W, 1e3 * S.sinkage_closed_form(s, B, R, W).clamp_max(R), color=colour, lw=0.6)
    ax.axvline(W0, color="k", lw=0.5)
    ax.set(xlabel="wheel load W [N] (vertical line: the Husky's static load)",
           ylabel="sinkage [mm]", yscale="log",
           title="Rolling (solid), at rest (dotted), closed form (thin); capped at r")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    paths.append(out_dir / "soil_sinkage.png")
    fig.savefig(paths[1], dpi=110)
    plt.close(fig)
    return paths


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent):
        print(f"wrote {p}")
