"""The package's layers import only downwards, and no module imports in a cycle.

Layers, lowest first (a module may import its own layer and any lower one):

0. types: ``nnc.operand_types`` (the operand-type table), ``nnc.enums``,
   ``nnc.errors``, ``nnc.version`` -- plain facts every layer needs;
1. runtime: ``nnc.runtime.*`` -- the ABI, loading and running native code,
   artifacts, the compilation cache;
2. dialects: ``nnc.dialects.*`` -- the nnapi dialect, the operation table and
   rules;
3. passes: ``nnc.passes.*`` -- the pass pipeline and the lowerings;
4. driver: ``nnc.driver`` and ``nnc.importer`` -- a model through the
   pipeline to native code, compiler failures as NNAPI errors;
5. api: every other module of ``nnc`` (the package root, ``Model``,
   ``Compilation``, ``Execution``, ..., the command line).

Imports are read with :mod:`ast`, top-level and function-local alike.  Two
kinds are not edges: imports under ``if TYPE_CHECKING:`` (never executed), and
the implicit import of a module's parent packages (package initialisation;
the isolation test below stubs the parents, so each module is shown to load
with only what it imports itself).
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nnc
import nnc.dialects
import nnc.passes
import nnc.runtime

#: package -> source directory (pyproject's package-dir)
PACKAGES = {
    "nnc": Path(nnc.__path__[0]),
    "nnc.dialects": Path(nnc.dialects.__path__[0]),
    "nnc.passes": Path(nnc.passes.__path__[0]),
    "nnc.runtime": Path(nnc.runtime.__path__[0]),
}
LAYERS = ("types", "runtime", "dialects", "passes", "driver", "api")
_EXPLICIT = {
    "nnc.operand_types": "types",
    "nnc.enums": "types",
    "nnc.errors": "types",
    "nnc.version": "types",
    "nnc.driver": "driver",
    "nnc.importer": "driver",
}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = [p for p in path.relative_to(root).with_suffix("").parts if p != "__init__"]
            if pkg == "nnc" and parts and parts[0] in ("dialects", "passes", "runtime"):
                continue  # not in this layout, but never count a module twice
            mods[".".join([pkg, *parts])] = path
    return mods


MODULES = _modules()


def layer(name: str) -> str:
    if name in _EXPLICIT:
        return _EXPLICIT[name]
    for pkg in ("nnc.runtime", "nnc.dialects", "nnc.passes"):
        if name == pkg or name.startswith(pkg + "."):
            return pkg.split(".")[1]
    return "api"


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every import statement that can run (skipping ``if TYPE_CHECKING:`` bodies)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (n for child in node.orelse for n in _import_nodes_in(child))
            continue
        yield from _import_nodes_in(node)


def _import_nodes_in(node: ast.AST):
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    yield from _import_nodes(node)


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The nnc modules one import statement loads (by itself, not its parents)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    out = []
    for name in names:
        if name.split(".")[0] != "nnc":
            continue
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name != module:
            out.append(name)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}
        for node in _import_nodes(ast.parse(path.read_text(), str(path))):
            for target in _targets(module, path, node):
                edges.setdefault(target, node.lineno)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@functools.cache
def graph() -> dict[str, dict[str, int]]:
    """:func:`import_graph`, built once, by the first test that needs it (not
    at collection, which every xdist worker pays)."""
    return import_graph()


def test_every_module_has_a_layer() -> None:
    assert len(MODULES) > 50
    assert {layer(m) for m in MODULES} == set(LAYERS)


def test_imports_only_go_downwards() -> None:
    rank = {name: k for k, name in enumerate(LAYERS)}
    upward = [
        f"{MODULES[m].name}:{line}: {m} ({layer(m)}) imports {t} ({layer(t)})"
        for m, edges in graph().items()
        for t, line in edges.items()
        if rank[layer(t)] > rank[layer(m)]
    ]
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_runtime_and_passes_never_import_the_api() -> None:
    """The issue's wording of the rule, checked by name as well."""
    forbidden = {"nnc", "nnc.compilation", "nnc.model", "nnc.importer", "nnc.driver"}
    bad = [
        f"{m} imports {t}"
        for m, edges in graph().items()
        if layer(m) in ("runtime", "passes", "dialects", "types")
        for t in edges
        if t in forbidden
    ]
    assert not bad, bad


def test_no_import_cycles() -> None:
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_cycle_finder_finds_cycles() -> None:
    """The check above is not vacuous."""
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]


# -- every layer loads on its own ----------------------------------------------------------------

_ISOLATED = r"""
import importlib, importlib.util, json, os, sys
packages, name = json.loads(sys.argv[1]), sys.argv[2]
for pkg, path in packages.items():  # the parents, without running nnc/__init__.py
    spec = importlib.util.spec_from_file_location(
        pkg, os.path.join(path, "__init__.py"), submodule_search_locations=[path]
    )
    stub = importlib.util.module_from_spec(spec)  # not executed
    sys.modules[pkg] = stub
    if "." in pkg:
        setattr(sys.modules[pkg.rsplit(".", 1)[0]], pkg.rsplit(".", 1)[1], stub)
importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m == "nnc" or m.startswith("nnc."))))
"""


def _load_isolated(names: list[str]) -> list[str]:
    packages = {pkg: str(path) for pkg, path in PACKAGES.items()}
    loaded: set[str] = set()
    for name in names:
        proc = subprocess.run(
            [sys.executable, "-c", _ISOLATED, json.dumps(packages), name], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, f"{name} does not load on its own:\n{proc.stderr}"
        loaded.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return sorted(loaded - set(PACKAGES))


@pytest.mark.parametrize("which", LAYERS[:-1])
def test_layer_loads_in_isolation(which: str) -> None:
    """Import the layer's leaf modules (those no other module of the layer
    imports, so every module of the layer is loaded) in a fresh interpreter
    whose nnc packages are empty stubs: they load, and nothing above the
    layer is loaded with them."""
    rank = {name: k for k, name in enumerate(LAYERS)}
    members = [m for m in MODULES if layer(m) == which and m not in PACKAGES]
    imported = {t for m in members for t in graph()[m]}
    leaves = [m for m in members if m not in imported]
    loaded = _load_isolated(leaves)
    assert set(members) <= set(loaded)
    above = [m for m in loaded if rank[layer(m)] > rank[which]]
    assert not above, f"loading the {which} layer loaded {above}"


# -- `import nnc` stays light (issue 14) ----------------------------------------------------------------

_HEAVY = ("xdsl", "llvmlite.binding", "nnc.driver", "nnc.passes", "nnc.compilation")


def test_import_nnc_loads_no_compiler() -> None:
    """``import nnc`` alone loads neither xDSL nor llvmlite's LLVM (nor the
    modules that need them): a process that only reads the enums or loads a
    cached model must not pay for the compiler."""
    code = f"import nnc, sys; print(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"`import nnc` loaded {proc.stdout.strip()}"


def test_every_public_name_resolves() -> None:
    """The package's lazy export table names every public name, each from the
    module that defines it, and submodules are reachable as attributes."""
    for name in nnc.__all__:
        value = getattr(nnc, name)
        module = nnc._LAZY.get(name)
        if module is not None:
            assert value is getattr(sys.modules[module], name)
    assert set(nnc._LAZY) <= set(nnc.__all__)
    assert set(nnc.__all__) <= set(dir(nnc))
    assert nnc.driver is sys.modules["nnc.driver"]
    with pytest.raises(AttributeError):
        nnc.no_such_name  # noqa: B018
