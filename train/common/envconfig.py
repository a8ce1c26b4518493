"""The environment a training or evaluation command builds, from its command line.

Options (typed, in ``--help``), derived from the configs so that they stay in step with them:

* ``--vehicle``, ``--dynamics``, ``--ground``, ``--integrator``, ``--dt``, ``--max-speed``, ...:
  :class:`offroad_env.SimConfig` fields; ``--obs-terms``: the observation terms;
* ``--task-goal-distance``, ``--task-tip-rule``, ...: :class:`offroad_env.TaskConfig` fields;
* ``--reward-<term>``: reward weights (:class:`offroad_env.task.task.RewardWeights`);
* ``--terrain NAME|FILE`` with ``--terrain-option KEY=VALUE`` (repeatable): a generator and its
  options, or a map file (``.png``, ``.npy``, ``.txt``, with its sidecar);
* ``--suite NAME|FILE``: an OffroadBench suite's task distribution (:mod:`train.common.suite`): its
  vehicle, models, families and levels (on one grid, :meth:`~train.common.suite.SuiteSpec.on_one_grid`),
  goal distances, stuck time and time limit, on *other worlds* than the suite's test maps (the
  run's ``--terrain-seed``, default 0); the other options apply on top. ``--suite-start-slopes``
  draws starts and goals only on ground as flat as the suite's tasks'
  (:func:`~train.common.suite.start_slope_limits`; ``--task-max-start-slope-deg``: one limit for all).

Chosen over tyro or jsonargparse: the repository already derives argparse from its frozen
dataclasses (the terrain command), the configs validate themselves when built, and the install
stays free of another dependency. The options resolve to a JSON-able ``env`` spec that the run
records in ``config.json`` and its checkpoint, so that ``--resume`` and ``evaluate`` rebuild the
same environment (a map file is recorded by its path).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

import gymnasium as gym

import terrain as terrain_pkg
from offroad_env import ENV_IDS, OLD_ENV_IDS, SimConfig, TaskConfig, env_config
from offroad_env.cli import add_config_options
from offroad_env import DYNAMICS, GROUND_METHODS, OBS_TERMS
from offroad_env.physics.dynamics import INTEGRATORS
from offroad_env.physics.models import model_class
from offroad_env.task.task import TIP_RULES, RewardWeights
from offroad_env.task.terms import terms_from_plain

__all__ = ["add_env_arguments", "env_spec_from_args", "env_kwargs", "SIM_FIELDS", "check_env_id",
           "pack_inputs", "resolve_inputs", "INPUTS_DIR"]

#: the SimConfig fields offered as options
SIM_FIELDS = ("vehicle", "dynamics", "ground", "dt", "max_speed", "max_yaw_rate", "d_eps",
              "num_maps", "terrain_seed", "gravity", "action_repeat", "nan_action", "obs_terms")
#: the vehicle models' parameters offered as options (``--integrator``, ``--substeps``): they
#: go into ``dynamics_params`` of the run's model, which must have them
MODEL_FIELDS = {"integrator": str, "substeps": int, "max_substep": float}
TASK_FIELDS = ("goal_distance", "goal_radius", "spawn_margin", "start_heading_spread", "tip_rule",
               "tip_hold_time", "max_start_slope_deg")


def add_env_arguments(parser) -> None:
    """Add the environment options (module docstring) to an argparse parser."""
    g = parser.add_argument_group("environment (defaults: the env id's)")
    add_config_options(g, SimConfig, dest_prefix="env.sim.", only=SIM_FIELDS, choices={
        "dynamics": list(DYNAMICS), "ground": list(GROUND_METHODS),
        "nan_action": ["raise", "zero"], "obs_terms": list(OBS_TERMS)})
    g.add_argument("--integrator", dest="env.sim.integrator", choices=list(INTEGRATORS),
                   default=None, help="the kinematic models' integration (UnicycleParams, "
                                      "AckermannParams; default euler)")
    g.add_argument("--substeps", dest="env.sim.substeps", type=int, default=None,
                   metavar="SUBSTEPS", help="the skid-steer model's substeps a step "
                                            "(SkidSteerParams; default 5)")
    g.add_argument("--max-substep", dest="env.sim.max_substep", type=float, default=None,
                   metavar="S", help="the physical model's longest substep [s] "
                                     "(RigidBodyParams; default 12.5 ms, or half the stable "
                                     "limit of a vehicle that needs less)")
    add_config_options(g, TaskConfig, prefix="task-", dest_prefix="env.task.", only=TASK_FIELDS,
                       choices={"tip_rule": list(TIP_RULES)})
    add_config_options(g, RewardWeights, prefix="reward-", dest_prefix="env.reward.")
    g.add_argument("--terrain", dest="env.terrain", default=None, metavar="NAME|FILE",
                   help="a terrain generator (" + ", ".join(
                       n for n in terrain_pkg.GENERATORS if n != "sum")
                   + ") or a map file (" + "/".join(terrain_pkg.MAP_SUFFIXES) + ")")
    g.add_argument("--terrain-option", dest="env.terrain_options", action="append",
                   default=None, metavar="KEY=VALUE",
                   help="a generator option, e.g. amplitude=1.5 or size=60,60 (repeatable)")
    g.add_argument("--suite", dest="env.suite", default=None, metavar="NAME|FILE",
                   help="train on an OffroadBench suite's tasks (its vehicle, models, families "
                        "and levels, time limit), on other worlds than its test maps; the run "
                        "starts from --preset suite unless another preset is named")
    g.add_argument("--suite-start-slopes", dest="env.suite_start_slopes", default=None,
                   action=argparse.BooleanOptionalAction,
                   help="with --suite: draw starts and goals only on ground as flat as the "
                        "suite's tasks' (its max_start_slope_deg per family; on in --preset "
                        "suite; without --suite nothing)")


def env_spec_from_args(args: dict) -> dict:
    """Pop the environment options out of ``vars(args)``; returns the JSON-able spec
    ``{"sim": {...}, "task": {...}, "reward": {...}, "terrain": ..., "terrain_options":
    {...}}`` holding only what was given."""
    spec = {"sim": {}, "task": {}, "reward": {}}
    for key in [k for k in args if k.startswith("env.")]:
        val = args.pop(key)
        if val is None:
            continue
        parts = key.split(".")
        if parts[1] in spec:
            spec[parts[1]][parts[2]] = list(val) if isinstance(val, tuple) else val
        elif parts[1] == "terrain_options":
            opts = {}
            for item in val:
                k, sep, v = item.partition("=")
                if not sep or not k:
                    raise ValueError(f"--terrain-option {item!r}: expected KEY=VALUE")
                opts[k.strip().replace("-", "_")] = v.strip()
            spec["terrain_options"] = opts
        else:
            spec[parts[1]] = val
    if spec.get("terrain_options") and "terrain" not in spec:
        raise ValueError("--terrain-option needs --terrain NAME (a generator)")
    if "suite" in spec and "terrain" in spec:
        raise ValueError("--suite sets the terrain (the suite's levels); drop --terrain")
    return {k: v for k, v in spec.items() if v not in ({}, None)}


def _typed(cls, opts: dict) -> dict:
    """Generator options typed by the config's field defaults."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    out = {}
    for k, v in opts.items():
        if k not in fields or k in ("base", "parts"):
            raise ValueError(f"{cls.__name__} has no option {k!r}; options: "
                             f"{sorted(n for n in fields if n not in ('base', 'parts'))}")
        f = fields[k]
        default = f.default if f.default is not dataclasses.MISSING else None
        try:
            if isinstance(default, tuple) or (isinstance(v, str) and "," in v):
                out[k] = tuple(float(x) for x in str(v).split(","))
            elif isinstance(default, bool):
                if str(v).lower() not in ("true", "false", "1", "0"):
                    raise ValueError(v)
                out[k] = str(v).lower() in ("true", "1")
            elif isinstance(default, int):
                out[k] = int(v)
            else:
                out[k] = float(v)
        except ValueError:
            raise ValueError(f"{cls.__name__} option {k}={v!r} is not a "
                             f"{type(default).__name__ if default is not None else 'number'}"
                             ) from None
        if isinstance(out[k], float) and not math.isfinite(out[k]):
            raise ValueError(f"{cls.__name__} option {k}={v!r} must be finite")
    return out


#: the run folder's copies of a run's file inputs (a URDF, a map and its sidecar)
INPUTS_DIR = "inputs"
#: a map file larger than this [bytes] is recorded by its resolved path, not copied
MAX_COPIED_MAP = 64 * 2 ** 20


def _file_inputs(spec: dict) -> dict:
    """``{"vehicle"|"terrain": path}``: the spec's inputs that are files (a ``.urdf`` vehicle,
    a map file)."""
    found = {}
    vehicle = spec.get("sim", {}).get("vehicle")
    if isinstance(vehicle, str) and vehicle.partition("?")[0].lower().endswith(".urdf"):
        found["vehicle"] = vehicle.partition("?")[0]  # its options (after ?) stay as they are
    name = spec.get("terrain")
    if name is not None and name not in terrain_pkg.GENERATORS:
        found["terrain"] = name
    return found


def resolve_inputs(spec: dict | None, base=None) -> dict:
    """``spec`` with its file inputs as paths that exist: a path under :data:`INPUTS_DIR`
    (a run's own copy) is taken relative to ``base`` (the run folder, where the checkpoint
    lies); where that copy is missing, the source path the run recorded. FileNotFoundError
    names both when neither exists."""
    spec = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (spec or {}).items()}
    sources = spec.get("sources", {})
    for key, path in _file_inputs(spec).items():
        p = Path(path)
        if not p.is_absolute() and p.parts[:1] == (INPUTS_DIR,) and base is not None:
            p = Path(base) / p
        if not p.is_file() and key in sources:
            if not Path(sources[key]).is_file():
                raise FileNotFoundError(
                    f"the run's {key} file is missing: neither its copy {p} nor its source "
                    f"{sources[key]} exists (keep the run folder whole, with its "
                    f"{INPUTS_DIR}/ folder)")
            p = Path(sources[key])
        if key == "vehicle":
            spec["sim"]["vehicle"] = _with_options(str(p), spec["sim"]["vehicle"])
        else:
            spec["terrain"] = str(p)
    return spec


def _with_options(path: str, vehicle: str) -> str:
    """``path`` with the URDF options (``?...``) of the ``vehicle`` string it stands for."""
    _, sep, query = vehicle.partition("?")
    return path + sep + query


def pack_inputs(spec: dict | None, out, base=None) -> dict:
    """Copy a run's file inputs into ``out/inputs/`` (a URDF; a map with its JSON sidecar, up
    to :data:`MAX_COPIED_MAP` bytes) and return the spec that records them: the copies by
    paths relative to the run folder, the resolved source paths under ``"sources"`` (a larger
    map is recorded by its resolved path only). A run folder is then self-contained: its
    checkpoint evaluates and resumes from any working directory, as an SB3 ``model.zip``.
    ``base``: where a spec's relative ``inputs/`` paths lie (a resumed run's folder)."""
    import shutil

    spec = resolve_inputs(spec, base)
    files = _file_inputs(spec)
    if not files:
        return spec
    folder = Path(out) / INPUTS_DIR
    sources = dict(spec.get("sources", {}))
    for key, path in files.items():
        src = Path(path).resolve()
        sources[key] = str(src)
        rel = str(src)
        if key == "vehicle" or src.stat().st_size <= MAX_COPIED_MAP:
            folder.mkdir(parents=True, exist_ok=True)
            dst = folder / src.name
            for a in [src] + ([terrain_pkg.sidecar_path(src)] if key == "terrain" else []):
                b = folder / a.name
                if a.is_file() and not (b.exists() and b.samefile(a)):
                    shutil.copyfile(a, b)
            rel = f"{INPUTS_DIR}/{dst.name}"
        if key == "vehicle":
            spec["sim"]["vehicle"] = _with_options(rel, spec["sim"]["vehicle"])
        else:
            spec["terrain"] = rel
    spec["sources"] = sources
    return spec


def env_kwargs(env_id: str, spec: dict | None, base=None, allow_modules: tuple = ()) -> dict:
    """``gymnasium.make_vec`` keyword arguments of an ``env`` spec (:func:`env_spec_from_args`)
    on ``env_id``: SimConfig fields, the id's own ``config`` with its task replaced (where task
    or reward options are given), and
    ``terrain`` (a generator config) or ``heightmap`` (a loaded map file). ``base``: the run
    folder a recorded spec's ``inputs/`` paths are relative to (:func:`resolve_inputs`). A
    spec's own terms (``"terms"``, :func:`offroad_env.task.terms.terms_to_plain`) are imported
    only from the modules ``allow_modules`` names (importing runs their code)."""
    spec = resolve_inputs(spec, base)
    spec.pop("sources", None)
    kw = dict(spec.get("sim", {}))
    model = {k: kw.pop(k) for k in MODEL_FIELDS if k in kw}
    if model:
        kw["dynamics_params"] = _model_params(env_id, kw.get("dynamics"), model,
                                              spec.get("suite"))
    kw.update(terms_from_plain(spec.pop("terms", None), tuple(allow_modules)))
    if "obs_terms" in kw:
        kw["obs_terms"] = tuple(kw["obs_terms"])
    task_over = dict(spec.get("task", {}))
    reward = spec.get("reward", {})
    if spec.get("suite") is not None:
        return _suite_kwargs(env_id, spec["suite"], kw, task_over, reward,
                             bool(spec.get("suite_start_slopes")))
    if task_over or reward:
        # the id's whole config with the task field replaced: a TaskConfig given as ``task=``
        # would pick the defaults of its kind ("nav") and drop the id's terrain and observations
        base = env_config(env_id, **{k: v for k, v in kw.items() if k == "vehicle"})
        kw["config"] = _with_task(base, task_over, reward)
    name = spec.get("terrain")
    if name is not None:
        if name in terrain_pkg.GENERATORS:
            cls = terrain_pkg.GENERATORS[name][0]
            kw["terrain"] = cls(**_typed(cls, spec.get("terrain_options", {})))
        elif Path(name).is_file():
            kw["heightmap"] = terrain_pkg.load(name)
        else:
            raise ValueError(f"--terrain {name!r} is neither a generator "
                             f"({', '.join(terrain_pkg.GENERATORS)}) nor a map file")
    return kw


def _model_params(env_id: str, dynamics: str | None, values: dict, suite):
    """The ``dynamics_params`` of the run's model (``dynamics``, else the suite's or the id's)
    with the model options ``values`` set; ValueError naming the model that has none such."""
    if dynamics is None:
        if suite is not None:
            from train.common.suite import load_suite

            dynamics = load_suite(suite).dynamics
        else:
            dynamics = env_config(env_id).dynamics
    params = model_class(dynamics).Params
    have = set() if params is None else {f.name for f in dataclasses.fields(params)}
    bad = sorted(set(values) - have)
    if bad:
        raise ValueError(f"--{' --'.join(bad)}: the {dynamics} model has no such parameter "
                         f"(its parameters: {sorted(have) or 'none'})")
    return params(**values)


def _with_task(cfg: SimConfig, task_over: dict, reward: dict) -> SimConfig:
    """``cfg`` with task fields and reward weights replaced."""
    if not (task_over or reward):
        return cfg
    if "goal_distance" in task_over:
        task_over = {**task_over, "goal_distance": tuple(task_over["goal_distance"])}
    return dataclasses.replace(cfg, task=dataclasses.replace(
        cfg.task, **task_over, weights=dataclasses.replace(cfg.task.weights, **reward)))


def _suite_kwargs(env_id: str, name: str, sim: dict, task_over: dict, reward: dict,
                  start_slopes: bool = False) -> dict:
    """``make_vec`` keywords of a suite's training tasks (``--suite``): ``config`` (the
    suite's traverse config on one grid, ``sim`` fields, task and reward overrides on top;
    with ``start_slopes``, the suite's start and goal slope limits per family under them)
    and ``max_episode_steps`` (the suite's time limit)."""
    from train.common.suite import load_suite, start_slope_limits, suite_config, suite_episode_steps

    if {**ENV_IDS, **OLD_ENV_IDS}.get(env_id) != "traverse":
        raise ValueError(f"--suite trains on traverse tasks: the env id must be "
                         f"offroad_env/OffroadTraverse-v1, got {env_id!r}")
    if env_id in OLD_ENV_IDS:  # a -v0 run: the 0.1 reward, where falling cost nothing
        reward = {"fall": 0.0, **reward}
    full = load_suite(name)
    suite = full.on_one_grid()
    if start_slopes:
        task_over = {"max_start_slope_deg": start_slope_limits(full), **task_over}
    cfg = _with_task(suite_config(suite, **{"terrain_seed": SimConfig().terrain_seed, **sim}),
                     task_over, reward)
    return {"config": cfg, "max_episode_steps": suite_episode_steps(suite, cfg)}


def check_env_id(env_id) -> None:
    """Raise ValueError naming the registered offroad ids unless ``env_id`` is one of them.
    Checked before any ``gym.make``: an id such as ``"module:Env-v0"`` makes Gymnasium import
    ``module``, so an id read from a file must never reach it unchecked."""
    known = sorted(k for k in gym.registry if k.startswith("offroad_env/"))
    if not isinstance(env_id, str) or env_id not in known:
        raise ValueError(f"unknown env id {env_id!r}; registered offroad ids: {known}")
