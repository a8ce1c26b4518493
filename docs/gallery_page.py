"""The gallery page (``docs/gallery.md``), written at every docs build from the GIFs' manifest
(``docs/gifs.py``): each terrain family at levels 0, 5 and 9 on the physical model, and the
physical model on the shipped SRTM DEM. A stale GIF is marked as such on the page."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = Path(__file__).resolve().parent


def write(path: Path) -> None:
    import gifs

    manifest = json.loads(gifs.MANIFEST.read_text()) if gifs.MANIFEST.exists() else {}
    digest = gifs.fingerprints()
    lines = ["# Gallery", "",
             "Real episodes, rendered by the env (`render_mode=\"rgb_array\"`, the `follow` "
             "view) under the straight-to-goal baseline, on the physical model "
             "(`dynamics=\"rigid_body\"`): every terrain family of `OffroadTraverse-v1` at "
             "levels 0, 5 and 9 (`terrain.level_spec` states each level in physical terms), "
             "and on the shipped SRTM DEM (views of 10-12 m that follow the vehicle). "
             "`python docs/gifs.py` makes them; a GIF whose episode or frame would differ "
             "today is marked stale.", ""]
    stale = []
    for fam in gifs.FAMILIES:
        lines += [f"## {fam}", "", "| level 0 | level 5 | level 9 |", "|---|---|---|"]
        cells = []
        for level in gifs.LEVELS:
            cells.append(_cell(f"{fam}-{level}", manifest, digest, stale))
        lines += ["| " + " | ".join(cells) + " |", ""]
    lines += ["## The physical model on a DEM", "",
              _cell("dem-rigid-body", manifest, digest, stale), ""]
    if stale:
        lines += [f"Stale (made from older source): {', '.join(stale)}.", ""]
    text = "\n".join(lines)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _cell(name: str, manifest: dict, digest: str, stale: list) -> str:
    import gifs

    if not (gifs.OUT / f"{name}.gif").exists():
        return f"({name}: not made yet)"
    entry = manifest.get(name, {})
    if entry.get("key") != gifs.key(gifs.items()[name], digest[name]):
        stale.append(name)
    return (f'<img src="_static/gallery/{name}.gif" alt="{name}" width="256" '
            f'loading="lazy">')
