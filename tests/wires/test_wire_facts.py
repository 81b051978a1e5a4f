"""Every per-wire fact is asked of the wire: no code outside bench/wires names the wires one by one (the
importers of one provider's logs, the conformance drivers and the ``Dialect`` literal aside), and the
registry refuses a registered wire that would clash with another."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from types import MappingProxyType
from typing import get_args

import pytest

from bench.check.program import program_env
from bench.corpus.tags import turn_tags
from bench.engine.model import Dialect, Turn
from bench.wires import registry
from bench.wires.base import Wire
from tests.helpers import call, seq

ROOT = Path(__file__).resolve().parents[2]
ASIDE = ("bench/wires/", "bench/importers/", "bench/conform/")
"""Where wire names belong: the wires, the importers of one provider's logs, the conformance drivers."""
MOST = 5
"""Lines outside those that may still name a wire (issue 33's bound)."""


def _name_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """A wire's name as a quoted string, or a hyphenated one bare or as its package (``bedrock_converse``)."""
    quoted = "|".join(re.escape(n) for n in names)
    bare = "|".join(re.escape(v) for n in names if "-" in n for v in (n, n.replace("-", "_")))
    return re.compile(rf"""["'](?:{quoted})["']|\b(?:{bare})\b""")


def _dialect_literal_lines(path: Path) -> set[int]:
    """The lines of the ``Dialect`` literal's statement in `path`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "Dialect" for t in targets):
                return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return set()


def naming_lines(root: Path, names: tuple[str, ...]) -> list[str]:
    """Every line of bench/ outside :data:`ASIDE` (and the ``Dialect`` literal) that names a wire."""
    pattern = _name_pattern(names)
    out = []
    for path in sorted((root / "bench").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(ASIDE):
            continue
        literal = _dialect_literal_lines(path) if rel == "bench/engine/model.py" else set()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if n not in literal and pattern.search(line):
                out.append(f"{rel}:{n}: {line.strip()}")
    return out


def test_wire_names_appear_outside_the_wires_in_at_most_five_lines() -> None:
    found = naming_lines(ROOT, get_args(Dialect))
    assert len(found) <= MOST, "\n".join(found)


def test_the_name_finder_sees_names_and_packages_but_not_the_dialect_literal(tmp_path: Path) -> None:
    (tmp_path / "bench" / "engine").mkdir(parents=True)
    (tmp_path / "bench" / "wires").mkdir()
    (tmp_path / "bench" / "engine" / "model.py").write_text(
        'Dialect = Literal["openai-chat",\n    "gemini"]\nx = "gemini"\n', encoding="utf-8")
    (tmp_path / "bench" / "wires" / "a.py").write_text('x = "gemini"\n', encoding="utf-8")
    (tmp_path / "bench" / "b.py").write_text(
        'import bench.wires.bedrock_converse\nif w == "openai-chat": pass\nx = "gemini-2.5"\n', encoding="utf-8")
    assert [f.split(": ")[0] for f in naming_lines(tmp_path, ("openai-chat", "gemini", "bedrock-converse"))] == [
        "bench/b.py:1", "bench/b.py:2", "bench/engine/model.py:3"]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """Entry points the registry finds in place of the installed ones, for one test."""
    points: list[EntryPoint] = []
    monkeypatch.setattr(registry, "entry_points", lambda group, name=None: [
        p for p in points if p.group == group and name in (None, p.name)])
    registry.forget()
    yield points
    registry.forget()


def test_a_registered_wire_that_takes_the_name_of_a_bench_wire_is_refused(registered: list[EntryPoint]) -> None:
    registered.append(EntryPoint("gemini", "bench.wires.gemini:WIRE", registry.GROUP))
    with pytest.raises(TypeError, match="takes the name of a wire of the bench"):
        registry.wires()


def test_a_registered_object_that_is_not_the_wire_of_its_name_is_refused(registered: list[EntryPoint]) -> None:
    registered.append(EntryPoint("mine", "bench.wires.gemini:WIRE", registry.GROUP))
    with pytest.raises(TypeError, match=r"entry point stopbench.wires:mine .* is not the Wire of 'mine'"):
        registry.wires()


def test_two_wires_that_give_one_client_variable_two_values_are_refused() -> None:
    class One(Wire):
        name = "one"  # type: ignore[assignment]
        client_env = MappingProxyType({"SHARED_URL": "{url}/one"})

    class Two(Wire):
        name = "two"  # type: ignore[assignment]
        client_env = MappingProxyType({"SHARED_URL": "{url}/two"})

    with pytest.raises(TypeError, match=re.escape("two sets SHARED_URL='{url}/two' but one sets '{url}/one'")):
        registry._check_env([One(), Two()])


def test_a_checked_program_gets_every_wire_s_client_variables_and_none_of_those_a_wire_removes(
        tmp_path: Path) -> None:
    removed = {n for w in registry.wires() for n in w.client_env_removed}
    base = {**dict.fromkeys(removed, "inherited"), "PATH": "/bin"}
    env = program_env(seq(Turn("stop", None, "ok")), "http://127.0.0.1:9", tmp_path / "r", base=base)
    for w in registry.wires():
        assert w.env("http://127.0.0.1:9", "sk-stopbench-not-a-real-key").items() <= env.items()
    assert removed and not removed & set(env)


@pytest.mark.parametrize(("dialect", "tags"), [
    ("openai-chat", ["stop-with-calls"]), ("anthropic", ["stop-with-calls"]), ("bedrock-converse", ["stop-with-calls"]),
    ("openai-responses", []), ("gemini", [])])
def test_a_stop_with_calls_is_tagged_on_each_wire_whose_table_has_a_tool_finish(dialect: str, tags: list[str]) -> None:
    stop = registry.wire(dialect).default_raw("stop")
    assert turn_tags(Turn("stop", stop, "ok", (call("grep"),)), dialect) == tags
