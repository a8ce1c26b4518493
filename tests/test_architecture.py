"""The house: the structure ARCHITECTURE.md draws, checked. Dependencies point one way; the
physics is pure; wrappers and training use public names only; train/ has no import circle; the
simulator stays small and no module grows past 450 lines; and the registries (vehicle models,
sensors, state fields, reward terms, observation terms, terrain families, baselines, suites)
agree with each other."""

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("terrain", "offroad_env", "wrappers", "train")


def _modules(pkg):
    return sorted(p for p in (ROOT / pkg).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports (absolute names; function-level imports included)."""
    tree = ast.parse(path.read_text())
    here = _module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.append(mod)
            out += [f"{mod}.{a.name}" for a in node.names]
    return out


def test_dependencies_point_one_way():
    allowed = {"terrain": set(), "offroad_env": {"terrain"},
               "wrappers": {"terrain", "offroad_env"},
               "train": {"terrain", "offroad_env", "wrappers"}}
    for pkg in PACKAGES:
        for path in _modules(pkg):
            for mod in _imports(path):
                top = mod.split(".")[0]
                if top in PACKAGES and top != pkg:
                    assert top in allowed[pkg], f"{path.relative_to(ROOT)} imports {mod}"


def test_the_physics_is_pure():
    for path in _modules("offroad_env/physics"):
        for mod in _imports(path):
            if mod.startswith("offroad_env."):
                assert mod.startswith("offroad_env.physics"), \
                    f"{path.relative_to(ROOT)} imports {mod}"


def _private_uses(path: Path) -> list[str]:
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            bad += [f"from {node.module} import {a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                    and (node.module.split(".")[0] in PACKAGES or node.level)]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                bad.append(f"line {node.lineno}: .{node.attr}")
    return bad


@pytest.mark.parametrize("pkg", ["wrappers", "train"])
def test_wrappers_and_training_use_public_names_only(pkg):
    for path in _modules(pkg):
        for mod in _imports(path):
            assert not mod.startswith("offroad_env.sim"), f"{path.name} imports {mod}"
        assert _private_uses(path) == [], path.relative_to(ROOT)


def test_train_has_no_import_circle():
    graph = {}
    for path in _modules("train"):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path)
                       if m.startswith("train.") and m in {_module_name(p)
                                                           for p in _modules("train")}}
    graph = {k: v - {k} for k, v in graph.items()}
    state = {}

    def visit(n, trail):
        if state.get(n) == "done":
            return
        assert state.get(n) != "open", f"import circle: {' -> '.join(trail + [n])}"
        state[n] = "open"
        for m in sorted(graph.get(n, ())):
            if m != "train":  # the package's own __init__ re-exports
                visit(m, trail + [n])
        state[n] = "done"
    for n in sorted(graph):
        if n != "train":
            visit(n, [])


def test_the_simulator_is_small_and_no_module_is_over_450_lines():
    tree = ast.parse((ROOT / "offroad_env" / "sim.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Simulator")
    assert cls.end_lineno - cls.lineno + 1 <= 300
    for pkg in PACKAGES:
        for path in _modules(pkg):
            n = len(path.read_text().splitlines())
            assert n <= 450, f"{path.relative_to(ROOT)} has {n} lines"


# ----------------------------------------------------------------------------- the registries
def test_state_fields_of_every_room_are_declared_once():
    from offroad_env.physics.models import MODELS
    from offroad_env.sensors import SENSORS
    from offroad_env.state import CORE_FIELDS, join_fields
    from offroad_env.tasks import TASK_FIELDS
    for name, model in MODELS.items():
        join_fields(("core", CORE_FIELDS), (name, model.fields),
                    *((k, s.fields) for k, s in SENSORS.items()), ("task", TASK_FIELDS))


def test_reward_terms_and_weights_and_observation_terms_agree():
    from offroad_env.config import OBS_TERMS
    from offroad_env.observations import TERMS
    from offroad_env.rewards import REWARD_TERMS, RewardWeights
    assert tuple(REWARD_TERMS) == tuple(f.name for f in dataclasses.fields(RewardWeights))
    assert tuple(TERMS) == OBS_TERMS


def test_models_families_baselines_and_suites_agree():
    import terrain
    from offroad_env.config import DYNAMICS
    from offroad_env.physics.models import MODELS
    from train import bench
    from train.policies import BASELINES
    assert DYNAMICS == tuple(MODELS) == ("unicycle", "ackermann", "skid_steer", "rigid_body")
    assert terrain.FAMILIES == tuple(terrain.families.FAMILY_TABLE)
    cfg = terrain.FamilyConfig()
    for name in terrain.FAMILIES:
        spec = terrain.level_spec(dataclasses.replace(cfg, family=name), 0)
        assert spec and all(isinstance(v, float) for v in spec.values()), name
    assert bench.POLICIES == tuple(BASELINES)
    for path in sorted(bench.SUITES_DIR.glob("*.json")):
        spec = bench.load_suite(str(path))
        assert set(spec.families) <= set(terrain.FAMILIES), path.name


def test_the_old_module_paths_are_the_new_modules_and_warn_with_the_new_path():
    import importlib
    import subprocess
    import sys

    old = ("batch", "constants", "dynamics", "ground", "imu", "rotations", "slip", "stability",
           "urdf", "vehicle")
    code = ("import warnings, importlib\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            f"    for m in {old!r}:\n"
            "        a = importlib.import_module('offroad_env.' + m)\n"
            "        assert a is importlib.import_module('offroad_env.physics.' + m), m\n"
            "print('\\n'.join(str(x.message) for x in w))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    for m in old:
        assert f"offroad_env.{m} moved to offroad_env.physics.{m}" in out
    # nothing in the package imports them: a plain import warns nothing
    res = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                          "import offroad_env, train.bench, train.ppo, wrappers"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert importlib.import_module("offroad_env.physics.vehicle")
