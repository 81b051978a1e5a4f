"""A predicate needs nothing but ``from bench import ...``: the shipped predicates import only that,
and every name the package exports exists."""

from __future__ import annotations

import ast

import bench
from tests.helpers import ROOT

PREDICATES = sorted((ROOT / "predicates").glob("*.py"))


def _bench_imports(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bench":
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "bench"]
    return found


def test_every_shipped_predicate_imports_the_bench_only_through_the_package() -> None:
    assert PREDICATES
    for path in PREDICATES:
        modules = _bench_imports(ast.parse(path.read_text(encoding="utf-8")))
        assert modules and set(modules) == {"bench"}, f"{path.name} imports {modules}"


def test_every_name_a_predicate_imports_from_bench_is_exported() -> None:
    for path in PREDICATES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "bench":
                missing = [a.name for a in node.names if a.name not in bench.__all__]
                assert not missing, f"{path.name} imports {missing}, which bench does not export"


def test_everything_in_all_is_defined() -> None:
    assert all(hasattr(bench, name) for name in bench.__all__)


def test_wire_names_one_thing_the_wire_class_of_bench_wires_base() -> None:
    """A wire's name is a ``WireName`` (bench.serve.render); ``Wire`` is defined once, as the class."""
    defined = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name == "Wire":
                defined.append(str(path.relative_to(ROOT)))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            defined += [str(path.relative_to(ROOT)) for t in targets if isinstance(t, ast.Name) and t.id == "Wire"]
    assert defined == ["bench/wires/base.py"]
