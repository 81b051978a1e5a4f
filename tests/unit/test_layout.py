"""The package's layout: layers as sub-packages, no import circle, a thin top level, tools out of the wheel.

The import graph is read from the source (every ``import`` and ``from ... import``, at any depth of
a module, outside ``if TYPE_CHECKING:`` blocks), so an import moved into a function to dodge a
circle still counts as an edge.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "bench"


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:`` (type-only imports are no runtime edge)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (an imported name that is a submodule counts as it)."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                found = resolve(target)
                if found and found != mod:
                    graph[mod].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_of_the_package_imports_itself_back_through_others() -> None:
    assert circles(import_graph(_modules())) == []


def test_the_circle_finder_sees_a_circle_made_through_a_function_level_import(tmp_path: Path) -> None:
    pkg = tmp_path / "bench"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from bench.sub.b import thing\n")
    (pkg / "sub" / "b.py").write_text("def thing():\n    from bench.sub import a\n    return a\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    from bench.sub import a\n")
    assert circles(import_graph(_modules(pkg))) == [["bench.sub.a", "bench.sub.b"]]


def test_the_package_top_level_holds_at_most_ten_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 10, top


def test_the_engine_and_the_wires_import_nothing_from_the_layers_above_them() -> None:
    graph = import_graph(_modules())
    below = ("bench.engine", "bench.wires", "bench.errors")
    reach = {m: sorted(t for t in graph[m] if t != "bench" and not t.startswith(below))
             for m in graph if m.startswith(("bench.engine", "bench.wires"))}
    assert {m: t for m, t in reach.items() if t} == {}


def test_the_development_tools_are_left_out_of_the_wheel() -> None:
    """setup.py lists the wheel's packages (pyproject.toml cannot add the shipped folders to found ones):
    found under bench only (ci/wheel_smoke.py checks the built wheel holds nothing else)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "packages" not in config.get("tool", {}).get("setuptools", {})
    calls = [c for c in ast.walk(ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")))
             if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "find_packages"]
    assert [ast.literal_eval(k.value) for c in calls for k in c.keywords if k.arg == "include"] == [
        ["bench", "bench.*"]]
    assert (ROOT / "devtools" / "mutate.py").is_file()
    assert not list(PACKAGE.rglob("mutate.py")) and not list(PACKAGE.glob("perf*.py"))


def _package(module: str) -> str:
    """The sub-package a module belongs to (``bench.check`` for ``bench.check.report``); a top-level module
    is its own."""
    return ".".join(module.split(".")[:2])


def private_imports(modules: dict[str, Path]) -> list[str]:
    """Each import of another package's private module (``bench.importers._read``) or private name (``_cell``
    from ``bench.check.report``), as ``module: what``; a package's own privates are its business."""
    found = []
    for mod, path in sorted(modules.items()):
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                wanted = [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            else:
                continue
            for name in wanted:
                parts = name.split(".")
                if (parts[0] == "bench" and len(parts) > 1 and _package(name) != _package(mod)
                        and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])):
                    found.append(f"{mod}: {name}")
    return sorted(found)


def test_no_package_imports_another_package_s_private_modules_or_names() -> None:
    """What another package needs is on its public surface (named in its ``__init__``)."""
    assert private_imports(_modules()) == []


def test_the_private_import_finder_sees_a_private_module_and_a_private_name(tmp_path: Path) -> None:
    pkg = tmp_path / "bench"
    for sub in ("a", "b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "_x.py").write_text("def _y():\n    pass\n")
    (pkg / "a" / "own.py").write_text("from bench.a._x import _y\nfrom . import _x\n")  # its own: fine
    (pkg / "b" / "user.py").write_text("from bench.a import _x\n\ndef f():\n    from bench.a._x import y\n")
    (pkg / "b" / "name.py").write_text("from ..a.own import _y\n")
    assert private_imports(_modules(pkg)) == ["bench.b.name: bench.a.own._y", "bench.b.user: bench.a._x",
                                              "bench.b.user: bench.a._x.y"]


LONGEST = 80
"""No function of the package is longer (lines from its ``def`` to its last line, decorators aside)."""
LONG, MOST_LONG = 50, 8
"""At most MOST_LONG functions are longer than LONG lines: one job each, a name that says it."""


def long_functions(root: Path, over: int) -> list[tuple[int, str]]:
    """(lines, "file:line name") of every function under `root` longer than `over` lines, longest first."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > over:
                    found.append((length, f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def test_no_function_of_the_package_is_over_80_lines_and_at_most_8_are_over_50() -> None:
    assert long_functions(ROOT / "bench", LONGEST) == []
    long = long_functions(ROOT / "bench", LONG)
    assert len(long) <= MOST_LONG, "\n".join(f"{n} {where}" for n, where in long)


def test_the_length_finder_counts_a_function_from_its_def_to_its_last_line(tmp_path: Path) -> None:
    pkg = tmp_path / "bench"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    (pkg / "m.py").write_text(f"def short():\n    pass\n\n\nasync def long():\n{body}\n", encoding="utf-8")
    assert long_functions(pkg, LONG) == [(61, "bench/m.py:5 long")]
