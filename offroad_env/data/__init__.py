"""Data files shipped with the package (``offroad_env/data``): the SRTM GeoTIFF window
(``srtm1_n37w123_crop401.tif``) and the Husky and Jackal URDFs the README, the examples and the
tests use, with their provenance and licences (``README_dem.md``, ``README_urdf.md``,
``LICENSE.husky``, ``LICENSE.jackal``). They come with a pip install, so the README's snippets
run from any folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["data_file", "DATA_FILES"]

#: the files :func:`data_file` gives
DATA_FILES = ("srtm1_n37w123_crop401.tif", "husky.urdf", "jackal.urdf")


def data_file(name: str) -> Path:
    """The path of a shipped data file (:data:`DATA_FILES`, or one of its READMEs and
    licences); FileNotFoundError naming the files there otherwise."""
    folder = resources.files("offroad_env") / "data"
    path = Path(str(folder / name))
    if not path.is_file():
        have = sorted(p.name for p in Path(str(folder)).iterdir() if p.is_file())
        raise FileNotFoundError(f"offroad-env ships no data file {name!r}; it ships {have}")
    return path
