"""The ``offroad-env`` command line.

::

    offroad-env demo [--out DIR] [--terrain peaks|FILE] [--vehicle husky] [--dynamics ackermann]
                     [--ground four_wheel]         the main job (see README and demo.py)
    offroad-env terrain generate NAME [options]   write a generated map as PNG + JSON sidecar
    offroad-env terrain info MAP [--json]         size, extent, height range, slope statistics
    offroad-env terrain preview MAP [-o PNG]      a hillshade picture a person can look at

Generator options are derived from the generator's config dataclass (``--size X Y``,
``--resolution X Y``, ``--octaves 4``...), so every field of :mod:`terrain.generators` is reachable.
Existing files are not overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import torch

import terrain
from terrain.generators import GENERATORS, TerrainConfig, config_fields

from offroad_env.sim.config import DYNAMICS, GROUND_METHODS
from offroad_env.physics.vehicle import PRESETS


class CliError(Exception):
    """A user error: printed without a traceback, exit status 2."""


def _count(minimum: int):
    """An argparse type: an int >= ``minimum`` (else exit status 2 with the value named)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{v} is not an integer >= {minimum}")
        return v
    return parse


def _check_writable(paths, force: bool):
    for p in paths:
        if Path(p).exists() and not force:
            raise CliError(f"{p} exists; pass --force to overwrite it")


def add_config_options(parser, cls: type, prefix: str = "", dest_prefix: str = "",
                       only=None, skip=("base", "parts"), choices: dict | None = None):
    """Add an option per scalar or tuple field of the dataclass ``cls`` (``--<prefix><name>``,
    stored under ``<dest_prefix><name>``, default None: unset), typed by the field's default;
    ``only``: just these fields; ``choices``: ``{field: allowed values}``. Shared by the
    terrain generators' options here and the training command's env options."""
    for f in dataclasses.fields(cls):
        if not f.init or f.name in skip or (only is not None and f.name not in only):
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        else:
            continue
        flag = "--" + prefix + f.name.replace("_", "-")
        dest = dest_prefix + f.name
        allowed = (choices or {}).get(f.name)
        if isinstance(default, tuple) and all(isinstance(v, str) for v in default):
            parser.add_argument(flag, dest=dest, nargs="+", choices=allowed, default=None,
                                help=f"default {' '.join(default)}")
        elif isinstance(default, tuple):
            parser.add_argument(flag, dest=dest, type=float, nargs=len(default), default=None,
                                metavar=("X", "Y") if len(default) == 2 else None,
                                help=f"default {default}")
        elif isinstance(default, bool):
            parser.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction,
                                default=None, help=f"default {default}")
        elif isinstance(default, (int, float, str)) or default is None:
            typ = float if default is None else type(default)
            parser.add_argument(flag, dest=dest, type=typ, choices=allowed, default=None,
                                metavar=None if allowed else f.name.upper(),
                                help=f"default {default}")


_add_config_options = add_config_options


def _config_from_args(name: str, args) -> TerrainConfig:
    cls, _ = GENERATORS[name]
    kw = {}
    for f in config_fields(cls):
        val = getattr(args, f.name, None)
        if val is not None:
            kw[f.name] = tuple(val) if isinstance(val, list) else val
    if name == "holes" and args.base:
        grid = {k: kw[k] for k in ("size", "resolution") if k in kw}
        try:
            kw["base"] = GENERATORS[args.base][0](**grid)
        except (TypeError, ValueError) as exc:
            raise CliError(f"{args.base}: {exc}") from None
    try:
        return cls(**kw)
    except (TypeError, ValueError) as exc:
        raise CliError(f"{name}: {exc}") from None


def _print_stats(stats: dict, as_json: bool, path) -> None:
    if as_json:
        print(json.dumps(stats, indent=2))
        return
    print(f"{path}")
    print(f"  samples:      {stats['samples'][0]} x {stats['samples'][1]} (x by y)")
    print(f"  resolution:   {stats['resolution_m'][0]:g} x {stats['resolution_m'][1]:g} m")
    print(f"  extent:       {stats['extent_m'][0]:g} x {stats['extent_m'][1]:g} m")
    b = stats["bounds_m"]
    print(f"  bounds:       x [{b[0]:g}, {b[1]:g}]  y [{b[2]:g}, {b[3]:g}] m")
    print(f"  heights:      [{stats['height_min_m']:.4g}, {stats['height_max_m']:.4g}] m, "
          f"mean {stats['height_mean_m']:.4g} m (z offset {stats['z_offset_m']:g} m)")
    print(f"  holes:        {stats['holes']} samples")
    if "slope_mean_deg" in stats:
        print(f"  slope:        mean {stats['slope_mean_deg']:.2f} deg, median "
              f"{stats['slope_median_deg']:.2f}, p95 {stats['slope_p95_deg']:.2f}, "
              f"max {stats['slope_max_deg']:.2f}")


def _load(path):
    try:
        return terrain.load(path)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def cmd_generate(args) -> int:
    cfg = _config_from_args(args.generator, args)
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".npy", ".txt"):
        raise CliError(f"--out must end in .png, .npy or .txt, got {out}")
    _check_writable([out, terrain.sidecar_path(out)], args.force)
    hm = terrain.make_heightmap(cfg, np.random.default_rng(args.seed), dtype=torch.float64)
    if out.suffix.lower() == ".png" and hm.has_holes:
        raise CliError(f"{args.generator} made holes (NaN), which PNG cannot store: "
                       "write .npy or .txt")
    out.parent.mkdir(parents=True, exist_ok=True)
    terrain.save(hm, out)
    print(f"wrote {out} and {terrain.sidecar_path(out)} ({hm.nx} x {hm.ny} samples, "
          f"{hm.size[0]:g} x {hm.size[1]:g} m)")
    return 0


def cmd_info(args) -> int:
    hm = _load(args.map)
    _print_stats(terrain.statistics(hm), args.json, args.map)
    return 0


def cmd_preview(args) -> int:
    hm = _load(args.map)
    out = Path(args.out) if args.out else Path(args.map).with_name(Path(args.map).stem +
                                                                   "_preview.png")
    _check_writable([out], args.force)
    terrain.save_preview(hm, out)
    print(f"wrote {out}")
    return 0


def urdf_vehicle_spec(args) -> str:
    """``--vehicle`` with the URDF options (``--wheels``, ``--wheel-radius``, ``--package-dir``,
    ``--base``) joined on as :func:`offroad_env.physics.vehicle.preset` reads them (the
    ``file.urdf?base=...`` form a config keeps)."""
    opts = [(k, v) for k, v in (("wheels", args.wheels), ("wheel_radius", args.wheel_radius),
                                ("package_dir", args.package_dir), ("base", args.base))
            if v is not None]
    if not opts:
        return args.vehicle
    if not args.vehicle.lower().endswith(".urdf"):
        raise CliError(f"--{opts[0][0].replace('_', '-')} applies to a .urdf --vehicle, not "
                       f"{args.vehicle!r}")
    return args.vehicle + "?" + "&".join(f"{k}={v}" for k, v in opts)


def add_urdf_options(parser) -> None:
    """The URDF vehicle's options (what a file lacks or gets wrong)."""
    parser.add_argument("--wheels", default=None, metavar="J1,J2,...",
                        help="a .urdf vehicle's wheel joints, comma-separated (default: the "
                             "continuous joints with a collision cylinder about their axis)")
    parser.add_argument("--wheel-radius", type=float, default=None, metavar="R",
                        help="a .urdf vehicle's tyre radius [m], for mesh wheels or to replace "
                             "the file's")
    parser.add_argument("--package-dir", default=None, metavar="DIR",
                        help="the folder a .urdf's package:// mesh paths resolve in")
    parser.add_argument("--base", default=None, metavar="LINK",
                        help="the .urdf link that is the vehicle's base (default base_link; "
                             "in Python: 'robot.urdf?base=LINK')")
    parser.add_argument("--max-substep", type=float, default=None, metavar="S",
                        help="the physical model's longest substep [s] (RigidBodyParams."
                             "max_substep; default: 12.5 ms, or half the stable limit of a "
                             "vehicle that needs less)")


def cmd_demo(args) -> int:
    """The main job: the seed's example terrain and drive, then the vector env (demo.py)."""
    from offroad_env.cli import demo

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not args.force)):
        raise CliError(f"{out} is a file" if not out.is_dir() else
                       f"{out} is not empty; pass --force to overwrite its outputs")
    try:
        report = demo.run(out, seed=args.seed, envs=args.envs, steps=args.steps,
                          terrain_spec=args.terrain, vehicle=urdf_vehicle_spec(args),
                          dynamics=args.dynamics, ground=args.ground, plots=not args.no_plots,
                          duration=args.duration, animation_s=args.animation_s,
                          start=args.start, max_substep=args.max_substep)
    except (ValueError, ImportError, OSError) as exc:
        raise CliError(str(exc)) from None
    demo.print_report(report, out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from offroad_env import __version__

    p = argparse.ArgumentParser(
        prog="offroad-env", description=__doc__.split("\n")[0],
        epilog="training commands (the train package, installed with offroad-env): "
               "'offroad-env train' (PPO), 'offroad-env evaluate' (held-out evaluation), "
               "'offroad-env bench' (the OffroadBench suite); each has --help")
    p.add_argument("--version", action="version", version=f"offroad-env {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run the main job: the seed's terrain and drive, then "
                                       "the vector env")
    demo.add_argument("--out", default="outputs/demo", help="output folder (default %(default)s)")
    demo.add_argument("--seed", type=_count(0), default=0)
    demo.add_argument("--envs", type=_count(1), default=256, help="vehicles in the env demo")
    demo.add_argument("--steps", type=_count(1), default=200, help="steps of the env demo")
    demo.add_argument("--force", action="store_true",
                      help="overwrite the outputs of an earlier demo in --out")
    demo.add_argument("--terrain", default="peaks",
                      help="a generator name (" + ", ".join(n for n in GENERATORS if n != "sum")
                      + ") or a map file (" + "/".join(terrain.MAP_SUFFIXES)
                      + "); default %(default)s, the seed's map")
    demo.add_argument("--vehicle", default="husky",
                      help=f"a preset ({', '.join(PRESETS)}) or a .urdf file (default husky)")
    add_urdf_options(demo)
    demo.add_argument("--dynamics", default="ackermann", choices=list(DYNAMICS),
                      help="the vehicle model of the drive and the env (%(choices)s; default "
                           "%(default)s)")
    demo.add_argument("--ground", default="four_wheel", choices=list(GROUND_METHODS),
                      help="ground following of the kinematic models (%(choices)s; default "
                           "%(default)s)")
    demo.add_argument("--duration", type=float, default=30.0,
                      help="seconds of the drive (default %(default)s, the seed's)")
    demo.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    demo.add_argument("--start", type=float, nargs="+", metavar="X Y [YAW]", default=None,
                      help="world start of the drive [m, m, rad] (default: the map's centre, "
                           "heading +x)")
    demo.add_argument("--animation-s", type=float, default=10.0,
                      help="seconds of the drive animation at 10 fps (default %(default)s; 0: "
                           "none)")
    demo.set_defaults(func=cmd_demo)

    ter = sub.add_parser("terrain", help="terrain tools")
    tsub = ter.add_subparsers(dest="terrain_command", required=True)

    gen = tsub.add_parser("generate", help="generate a height map (PNG/npy/txt + JSON sidecar)")
    gsub = gen.add_subparsers(dest="generator", required=True)
    for name, (cls, _) in GENERATORS.items():
        if name == "sum":
            continue
        g = gsub.add_parser(name, help=(cls.__doc__ or "").strip().split("\n")[0])
        _add_config_options(g, cls)
        if name == "holes":
            g.add_argument("--base", choices=[n for n in GENERATORS if n not in ("holes", "sum")],
                           default=None, help="terrain to punch holes in (default flat)")
        g.add_argument("--seed", type=_count(0), default=0)
        g.add_argument("-o", "--out", required=True, help="output .png, .npy or .txt")
        g.add_argument("--force", action="store_true", help="overwrite existing files")
        g.set_defaults(func=cmd_generate)

    info = tsub.add_parser("info", help="print size, extent, height range and slopes of a map")
    info.add_argument("map")
    info.add_argument("--json", action="store_true")
    info.set_defaults(func=cmd_info)

    prev = tsub.add_parser("preview", help="write a hillshade PNG of a map")
    prev.add_argument("map")
    prev.add_argument("-o", "--out", default=None, help="default: MAP_preview.png")
    prev.add_argument("--force", action="store_true")
    prev.set_defaults(func=cmd_preview)
    return p


def command_names() -> list[str]:
    """The subcommands of :func:`build_parser` (``demo``, ``terrain``)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"offroad-env: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output folder that cannot be created or written
        where = f": {exc.filename}" if exc.filename else ""
        print(f"offroad-env: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
