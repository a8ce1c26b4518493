"""The house: the structure ARCHITECTURE.md draws, checked. Dependencies point one way, between
the four packages and between the layers inside ``offroad_env`` and ``train``; the physics is
pure; wrappers and training use public names only; no import circle anywhere (an import inside a
function counts); no alias module (a module that only re-exports another); the simulator stays
small and no module grows past 450 lines; and the registries (vehicle models, sensors, state
fields, reward terms, observation terms, terrain families, baselines, suites) agree with each
other. The checkers take a root folder, so the tests below also run them on planted trees."""

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("terrain", "offroad_env", "wrappers", "train")

#: the layers of offroad_env: a subpackage (or the group of the package's own modules, the
#: Gymnasium faces) and the layers it may import
OFFROAD_LAYERS = {
    "data": set(),
    "physics": set(),
    "drawing": {"physics"},
    "core": {"physics", "data"},
    "task": {"core", "physics", "data"},
    "sim": {"task", "core", "physics", "data"},
    "faces": {"sim", "task", "core", "physics", "data", "drawing"},
    "cli": {"faces", "sim", "task", "core", "physics", "data", "drawing"},
}
#: the package's own modules: the faces, the import-time check and the two entry modules
OFFROAD_TOP = {"env": "faces", "vector_env": "faces", "seams": "faces", "lookahead": "faces",
               "state_view": "faces", "surrogate": "faces",
               "snapshot": "faces", "_siblings": "data", "__main__": "cli", "": "cli"}
#: the layers of train: the planners at the bottom, what the programs share above them, the
#: programs on top (PPO and the benchmark never import each other)
TRAIN_LAYERS = {
    "planners": set(),
    "common": {"planners"},
    "ppo": {"common", "planners"},
    "bench": {"common", "planners"},
    "programs": {"common", "planners", "bench"},
    "cli": {"common", "planners", "bench", "ppo", "programs"},
}
TRAIN_TOP = {"evaluate": "programs", "reference": "programs", "suite_starts": "programs",
             "verti_bench": "programs",
             "cli": "cli", "": "cli"}


def _modules(pkg, root=ROOT):
    return sorted(p for p in (root / pkg).rglob("*.py"))


def _module_name(path: Path, root=ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root=ROOT) -> list[str]:
    """Every module ``path`` imports (absolute names; function-level imports included); for
    ``from P import n`` both ``P`` and ``P.n`` (which may be a module)."""
    tree = ast.parse(path.read_text())
    here = _module_name(path, root).split(".")
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


def import_graph(root=ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over the packages' modules (a package's ``__init__``
    under the package's name), function-level imports included. ``import X`` is an edge to
    ``X``; ``from P import n`` to the module ``P.n`` where that is a module, else to ``P``
    (import-linter's reading: the parent package's ``__init__`` that Python runs first is not
    an edge, or every package that re-exports its modules would be a circle)."""
    paths = {_module_name(p, root): p for pkg in packages for p in _modules(pkg, root)}
    graph = {}
    for name, path in paths.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in paths}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module
                for a in node.names:
                    if f"{mod}.{a.name}" in paths:
                        deps.add(f"{mod}.{a.name}")
                    elif mod in paths:
                        deps.add(mod)
        graph[name] = deps - {name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def connect(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def alias_modules(root=ROOT, packages=PACKAGES) -> list[str]:
    """Modules that only re-export another: a module (not a package's ``__init__``) whose body
    is nothing but imports, a docstring and ``__all__``; or any module that puts a module into
    ``sys.modules`` under another name. A package's ``__main__`` that runs it is an entry
    point, not an alias."""
    out = []
    for pkg in packages:
        for path in _modules(pkg, root):
            tree = ast.parse(path.read_text())
            if any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
                   and isinstance(n.value, ast.Attribute) and n.value.attr == "modules"
                   for n in ast.walk(tree)):
                out.append(_module_name(path, root))
                continue
            if path.name == "__init__.py":
                continue
            body = [n for n in tree.body
                    if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
                    and not (isinstance(n, ast.Assign)
                             and all(isinstance(t, ast.Name) and t.id == "__all__"
                                     for t in n.targets))]
            if body and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body):
                out.append(_module_name(path, root))
    return out


def _layer(name: str, pkg: str, top: dict) -> str | None:
    """The layer of module ``name`` of package ``pkg`` (its subpackage, or ``top``'s entry for
    the package's own modules); None outside ``pkg``."""
    parts = name.split(".")
    if parts[0] != pkg:
        return None
    if len(parts) == 1:
        return top[""]
    sub = parts[1]
    return top.get(sub, sub) if len(parts) == 2 and sub in top else sub


def layer_violations(graph, pkg: str, layers: dict, top: dict) -> list[str]:
    """``A imports B`` where B's layer is not one A's layer may import (nor A's own)."""
    bad = []
    for a, deps in graph.items():
        la = _layer(a, pkg, top)
        if la is None:
            continue
        for b in deps:
            lb = _layer(b, pkg, top)
            if lb is not None and lb != la and lb not in layers[la]:
                bad.append(f"{a} ({la}) imports {b} ({lb})")
    return sorted(bad)


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


def test_the_layers_inside_offroad_env_and_train_point_one_way():
    graph = import_graph()
    known = set(OFFROAD_LAYERS) | set(OFFROAD_TOP.values())
    for name in graph:
        if name.startswith("offroad_env"):
            assert _layer(name, "offroad_env", OFFROAD_TOP) in known, \
                f"{name}: a module outside the layers ARCHITECTURE.md draws"
        if name.startswith("train"):
            assert _layer(name, "train", TRAIN_TOP) in TRAIN_LAYERS, \
                f"{name}: a module outside the layers ARCHITECTURE.md draws"
    assert layer_violations(graph, "offroad_env", OFFROAD_LAYERS, OFFROAD_TOP) == []
    assert layer_violations(graph, "train", TRAIN_LAYERS, TRAIN_TOP) == []


def test_no_import_circle_anywhere():
    assert import_circles(import_graph()) == []


def test_no_alias_module():
    assert alias_modules() == []


def _plant(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_checkers_find_a_planted_circle_and_alias_and_pass_a_packages_main(tmp_path):
    """The checkers above, on planted trees: a circle closed by an import inside a function, a
    circle through a package's ``__init__``, an alias module, and a package's ``__main__``."""
    root = _plant(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import g\n\ndef f():\n    return g()\n",
        "pkg/b.py": "def g():\n    from pkg import a  # closes the circle\n    return a\n",
        "pkg/sub/__init__.py": "from pkg.sub.c import h\n",
        "pkg/sub/c.py": "def h():\n    from pkg.sub import h as again\n    return again\n",
        "pkg/old.py": '"""Moved."""\nfrom pkg.a import f  # noqa: F401\n__all__ = ["f"]\n',
        "pkg/tool/__init__.py": "",
        "pkg/tool/__main__.py": "from pkg.a import f\n\nraise SystemExit(f())\n",
        "pkg/hack.py": "import sys\nimport pkg.a\nsys.modules['pkg.gone'] = pkg.a\n",
    })
    circles = import_circles(import_graph(root, ("pkg",)))
    assert ["pkg.a", "pkg.b"] in circles and ["pkg.sub", "pkg.sub.c"] in circles
    assert sorted(alias_modules(root, ("pkg",))) == ["pkg.hack", "pkg.old"]
    # and a clean tree passes
    clean = _plant(tmp_path / "clean", {"pkg/__init__.py": "",
                                        "pkg/a.py": "def f():\n    return 0\n",
                                        "pkg/tool/__init__.py": "",
                                        "pkg/tool/__main__.py": "from pkg.a import f\n\n"
                                                                "raise SystemExit(f())\n"})
    assert import_circles(import_graph(clean, ("pkg",))) == []
    assert alias_modules(clean, ("pkg",)) == []


def test_a_planted_layer_violation_is_found():
    graph = {"offroad_env.core.spawn": {"offroad_env.sim.simulator"},
             "offroad_env.sim.simulator": set(),
             "train.planners.mppi": {"train.ppo.trainer"}, "train.ppo.trainer": set()}
    assert layer_violations(graph, "offroad_env", OFFROAD_LAYERS, OFFROAD_TOP) == [
        "offroad_env.core.spawn (core) imports offroad_env.sim.simulator (sim)"]
    assert layer_violations(graph, "train", TRAIN_LAYERS, TRAIN_TOP) == [
        "train.planners.mppi (planners) imports train.ppo.trainer (ppo)"]


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


def test_the_simulator_is_small_and_no_module_is_over_450_lines():
    tree = ast.parse((ROOT / "offroad_env" / "sim" / "simulator.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Simulator")
    assert cls.end_lineno - cls.lineno + 1 <= 300
    for pkg in PACKAGES:
        for path in _modules(pkg):
            n = len(path.read_text().splitlines())
            assert n <= 450, f"{path.relative_to(ROOT)} has {n} lines"


def test_the_old_paths_are_gone_and_the_entry_points_stay():
    """0.2.0 removed the 0.1 aliases (``offroad_env.vehicle`` ...); the gym entry points, the
    console script and the ``python -m`` programs stay where they were."""
    import importlib
    import importlib.util

    for old in ("vehicle", "ground", "dynamics", "slip", "urdf", "batch", "_moved", "sim.py"):
        assert not (ROOT / "offroad_env" / f"{old.removesuffix('.py')}.py").exists(), old
    assert importlib.util.find_spec("offroad_env.vehicle") is None
    for spec in ("offroad_env.env:OffroadEnv", "offroad_env.vector_env:OffroadVectorEnv",
                 "train.cli:main", "offroad_env.cli:main"):
        mod, _, attr = spec.partition(":")
        assert callable(getattr(importlib.import_module(mod), attr)), spec
    for prog in ("train.ppo", "train.bench", "offroad_env"):
        assert (ROOT / prog.replace(".", "/") / "__main__.py").is_file(), prog
    for prog in ("train.evaluate", "train.reference", "train.suite_starts"):
        assert callable(importlib.import_module(prog).main), prog


# ----------------------------------------------------------------------------- the registries
def test_state_fields_of_every_room_are_declared_once():
    from offroad_env.physics.models import MODELS
    from offroad_env.core.sensors import SENSORS
    from offroad_env.core.state import CORE_FIELDS, join_fields
    from offroad_env.task.task import TASK_FIELDS
    for name, model in MODELS.items():
        join_fields(("core", CORE_FIELDS), (name, model.fields),
                    *((k, s.fields) for k, s in SENSORS.items()), ("task", TASK_FIELDS))


def test_reward_terms_and_weights_and_observation_terms_agree():
    from offroad_env.sim.config import OBS_TERMS
    from offroad_env.task.observations import TERMS
    from offroad_env.task.rewards import REWARD_TERMS, RewardWeights
    assert tuple(REWARD_TERMS) == tuple(f.name for f in dataclasses.fields(RewardWeights))
    assert tuple(TERMS) == OBS_TERMS


def test_models_families_baselines_and_suites_agree():
    import terrain
    from offroad_env.sim.config import DYNAMICS
    from offroad_env.physics.models import MODELS
    from train import bench
    from train.planners.baselines import BASELINES
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


