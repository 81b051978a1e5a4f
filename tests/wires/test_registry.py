"""One home per wire: every wire is one sub-package of bench/wires behind one interface, found by name,
and nothing outside bench/wires branches on a wire's name.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

import bench
from bench.engine.model import Dialect
from bench.wires import dialects, registry
from bench.wires.base import Wire

ROOT = Path(__file__).resolve().parents[2]
WIRES_DIR = ROOT / "bench" / "wires"

AGNOSTIC = ("bench/serve", "bench/importers", "bench/loops/clients.py", "bench/cli/serve.py", "bench/cli/import_.py")
"""The server, the importers, the reference loop's clients and their commands: they ask a Wire, never test a
wire's name."""

_NAMES = "|".join(re.escape(n) for n in get_args(Dialect))
BRANCH = re.compile(rf"""\b(?:wire|dialect|api|fmt|kind)\s*(?:==|!=|\bin\b)\s*\(?\s*["'](?:{_NAMES})["']""")
"""A test of a wire's name: ``wire == "gemini"``, ``dialect in ("anthropic", ...)``."""


def _sources(names: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = ROOT / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def branches(paths: list[Path]) -> list[str]:
    """Every line of `paths` that tests a wire's name, as ``path:line: text``."""
    return [f"{p}:{n}: {line.strip()}" for p in paths
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if BRANCH.search(line)]


def test_no_code_outside_the_wires_branches_on_a_wire_s_name() -> None:
    assert branches(_sources(AGNOSTIC)) == []


def test_the_branch_finder_sees_the_branches_it_is_meant_to_forbid(tmp_path: Path) -> None:
    src = tmp_path / "app.py"
    src.write_text('if wire == "gemini":\n    pass\nif dialect in ("anthropic", "openai-responses"):\n    pass\n'
                   'x = "gemini"  # a name as a value is no branch\n', encoding="utf-8")
    assert [line.split(": ", 1)[1] for line in branches([src])] == [
        'if wire == "gemini":', 'if dialect in ("anthropic", "openai-responses"):']


def test_every_dialect_is_one_sub_package_holding_its_wire_and_every_wire_package_is_found() -> None:
    packages = sorted(p.name for p in WIRES_DIR.iterdir() if (p / "__init__.py").is_file())
    assert packages == sorted(n.replace("-", "_") for n in get_args(Dialect))
    assert registry.names() == get_args(Dialect)
    assert all(isinstance(w, Wire) and type(w) is not Wire for w in registry.wires())


@pytest.mark.parametrize("wire", registry.wires(), ids=lambda w: w.name)
def test_each_wire_fills_the_interface(wire: Wire) -> None:
    """What the server and the importers call on every wire is the wire's own, not the base's stub:
    its modules for rendering, reading and importing (or a method of its own), its error body."""
    own = {name for klass in type(wire).__mro__[:-2] for name in vars(klass)}
    assert "error_body" in own
    assert {"reader", "importer"} <= own
    assert "renderer" in own or "render" in own
    assert wire.table and wire.paths and wire.id_prefix
    if any(wire.route(p) == "count" for p in wire.paths):
        assert "count_tokens" in own
    package = f"bench.wires.{wire.name.replace('-', '_')}"
    modules = [getattr(wire, m) for m in ("renderer", "reader", "threads", "importer") if m in own]
    assert modules and all(m.__name__.startswith(package + ".") for m in modules)


def test_the_finish_tables_are_the_wires_own_in_the_dialect_order() -> None:
    assert bench.TABLES is dialects.TABLES
    assert list(dialects.TABLES) == list(get_args(Dialect))
    assert all(dialects.TABLES[w.name] is w.table for w in registry.wires())
    assert dict(dialects.unspecified()) == {"gemini": "OTHER"}


def test_an_unknown_wire_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        registry.wire("no-such-wire")


def test_importing_the_package_loads_no_wire_until_one_is_asked_for() -> None:
    probe = ("import sys, bench\n"
             "from bench.wires.registry import names, wire\n"
             "packages = {n.replace('-', '_') for n in names()}\n"
             "loaded = lambda: sorted({m.split('.')[2] for m in sys.modules"
             " if m.startswith('bench.wires.') and m.split('.')[2] in packages})\n"
             "print(loaded()); wire('gemini'); print(loaded())\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "['gemini']"]
