"""Predicate discovery: the folder, the entry-point group, and files that cannot be used."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest

from bench import Stop, predicate
from bench.conform.report import explained_by
from bench.engine import discovery
from bench.engine.contain import decision_time_limit
from bench.engine.discovery import Broken, discover
from bench.engine.predicate import DeclarationError, MutationNote, Predicate, PredicateFactory

GOOD = ('"""Stops at once."""\nfrom bench import Stop, predicate\n\n'
        "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='r')\n")


class FakeEntryPoint:
    def __init__(self, name: str, value: str, obj: Any) -> None:
        self.name, self.value, self._obj = name, value, obj

    def load(self) -> Any:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def test_a_file_becomes_a_predicate_named_after_its_stem_with_its_docstring(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "_helper.py").write_text("x = 1\n", encoding="utf-8")
    [pred] = discover(tmp_path, entry_points_too=False)
    assert isinstance(pred, Predicate)
    assert (pred.name, pred.description) == ("mine", "Stops at once.")


def test_a_file_without_a_predicate_or_with_two_is_broken_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "none.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "two.py").write_text(GOOD + "\nother = decide\n", encoding="utf-8")
    found = {p.name: p for p in discover(tmp_path, entry_points_too=False)}
    assert isinstance(found["none"], Broken) and "defines no predicate" in found["none"].error
    assert isinstance(found["two"], Broken) and "defines 2 predicates" in found["two"].error


def test_a_syntax_error_is_reported_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def decide(:\n", encoding="utf-8")
    [broken] = discover(tmp_path, entry_points_too=False)
    assert isinstance(broken, Broken)
    assert broken.error.startswith("SyntaxError")


def test_installed_packages_add_predicates_through_the_entry_point_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine.py").write_text(GOOD, encoding="utf-8")
    installed = discovery.load_file(tmp_path / "mine.py")
    assert isinstance(installed, Predicate)
    points = [FakeEntryPoint("from_pkg", "pkg.loops:decide", installed),
              FakeEntryPoint("not_a_predicate", "pkg.loops:helper", object()),
              FakeEntryPoint("fails", "pkg.broken:decide", ImportError("no module named pkg.broken")),
              FakeEntryPoint("mine", "pkg.dupe:decide", installed)]

    def fake_entry_points(group: str) -> list[FakeEntryPoint]:
        assert group == "stopbench.predicates"
        return points

    monkeypatch.setattr(discovery, "entry_points", fake_entry_points)
    found = {p.name: p for p in discover(tmp_path)}
    assert isinstance(found["from_pkg"], Predicate) and found["from_pkg"].origin == "entry point pkg.loops:decide"
    assert isinstance(found["not_a_predicate"], Broken)
    assert isinstance(found["fails"], Broken) and "ImportError" in found["fails"].error
    assert isinstance(found["mine"], Predicate) and found["mine"].origin.endswith("mine.py")
    assert any(isinstance(p, Broken) and "already taken" in p.error for p in found.values())


def test_sys_exit_at_import_is_a_broken_predicate_not_the_end_of_the_bench(tmp_path: Path) -> None:
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    [broken] = discover(tmp_path, entry_points_too=False)
    assert isinstance(broken, Broken)
    assert broken.error == "called sys.exit(0) at import"


def test_an_import_that_hangs_is_broken_after_the_time_limit(tmp_path: Path) -> None:
    (tmp_path / "hangs.py").write_text("while True:\n    pass\n", encoding="utf-8")
    (tmp_path / "mine.py").write_text(GOOD, encoding="utf-8")
    with decision_time_limit(0.3):
        found = {p.name: p for p in discover(tmp_path, entry_points_too=False)}
    assert isinstance(found["hangs"], Broken)
    assert found["hangs"].error == "did not finish importing after 0.3 s"
    assert isinstance(found["mine"], Predicate)


@pytest.mark.parametrize(("declaration", "message"), [
    ("max_steps=0", "max_steps must be a positive whole number or None, not 0"),
    ("max_steps=True", "max_steps must be a positive whole number or None, not True"),
    ("reasons='done'", "reasons must be a list of strings, not str 'done'"),
    ("reasons=['done', 'done']", "reasons: ['done'] declared twice"),
    ("reasons=[3]", "reasons: 3 is not a stop reason (a non-empty string)"),
    ("rules=['a']", "rules must map rule ids to text, not list"),
    ("rules={'': 'x'}", "rules: '': 'x' is not a rule id (a non-empty string) with its citation (a string)"),
    ("max_steps=3, cap=Cap(reason='')", "cap needs a non-empty reason and rule and ok=True/False"),
    ("cap=Cap()", "cap is declared but max_steps is not: the cap would never apply"),
    ("rules={'a': ''}, unreachable={'b': 'why'}", "unreachable: 'b' is not a declared rule (declared: a)"),
])
def test_a_bad_declaration_is_a_broken_predicate_naming_the_file_line(
        tmp_path: Path, declaration: str, message: str) -> None:
    (tmp_path / "bad.py").write_text(
        f"from bench import Cap, Stop, predicate\n\n@predicate({declaration})\n"
        "def decide(turn, state):\n    return Stop('done', ok=True, rule='a')\n", encoding="utf-8")
    [broken] = discover(tmp_path, entry_points_too=False)
    assert isinstance(broken, Broken)
    assert broken.error.startswith(f"DeclarationError: @predicate: {message}")
    assert broken.error.endswith("(bad.py:3)")


def test_a_decide_function_that_cannot_take_turn_and_state_is_refused_at_decoration() -> None:
    def decide(turn: object) -> None:
        return None

    with pytest.raises(DeclarationError, match=r"decide\(turn\) cannot be called as decide\(turn, state\)"):
        predicate()(decide)  # type: ignore[arg-type]


def test_the_cap_rule_may_be_declared_unreachable() -> None:
    pred = predicate(max_steps=3, rules={"a": ""}, unreachable={"cap": "never three steps"})(
        lambda turn, state: Stop("d", ok=True, rule="a"))
    assert dict(pred.unreachable) == {"cap": "never three steps"}


THIN = ('"""A thin column over _rules."""\nfrom bench import shared_factory\n\n'
        'stopping = shared_factory(__file__, "_rules")\n\n'
        "decide = stopping(limit={limit})\n")
RULES = ('from bench import Stop, predicate, predicate_factory\n\n'
         "@predicate_factory\ndef stopping(*, limit):\n"
         "    @predicate()\n    def decide(turn, state):\n"
         "        return Stop('limit-' + str(limit) + '-' + str(VERSION), ok=True, rule='r')\n"
         "    return decide\n\nVERSION = {version}\n")


def test_a_shared_rules_module_is_no_column_and_records_every_column_that_loads_it(tmp_path: Path) -> None:
    (tmp_path / "_rules.py").write_text(RULES.format(version=1), encoding="utf-8")
    (tmp_path / "one.py").write_text(THIN.format(limit=1), encoding="utf-8")
    (tmp_path / "two.py").write_text(THIN.format(limit=2), encoding="utf-8")
    found = discover(tmp_path, entry_points_too=False)
    assert [p.name for p in found] == ["one", "two"]
    assert discovery.shared_users(tmp_path) == {(tmp_path / "_rules.py").resolve(): ["one", "two"]}


def test_a_shared_rules_module_of_another_folder_is_imported_anew_not_taken_from_the_cache(tmp_path: Path) -> None:
    # the mutation check loads a mutant's copy from another folder under the same module name
    for name, version in (("a", 1), ("b", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "_rules.py").write_text(RULES.format(version=version), encoding="utf-8")
        (tmp_path / name / "col.py").write_text(THIN.format(limit=1), encoding="utf-8")
    reasons = []
    for name in ("a", "b"):
        loaded = discovery.load_file(tmp_path / name / "col.py")
        assert isinstance(loaded, Predicate)
        reasons.append(loaded.decide(None, None).reason)  # type: ignore[arg-type]
    assert reasons == ["limit-1-1", "limit-1-2"]


def test_a_shared_rules_module_is_named_with_the_leading_underscore() -> None:
    with pytest.raises(ValueError, match="starts with '_'"):
        discovery.shared_factory(__file__, "rules")


def test_a_column_built_by_a_shared_factory_is_typed_and_checked_where_it_is_declared(tmp_path: Path) -> None:
    (tmp_path / "_rules.py").write_text(RULES.format(version=3), encoding="utf-8")
    factory = discovery.shared_factory(str(tmp_path / "col.py"), "_rules")
    assert isinstance(factory, PredicateFactory)
    assert factory(limit=2).decide(None, None).reason == "limit-2-3"  # type: ignore[arg-type]
    (tmp_path / "typo.py").write_text(THIN.format(limit=1).replace("limit=", "limt="), encoding="utf-8")
    broken = discovery.load_file(tmp_path / "typo.py")
    assert isinstance(broken, Broken) and "stopping(): missing a required argument: 'limit' (typo.py:" in broken.error


def test_a_shared_rules_file_without_a_factory_is_named_in_its_columns_error(tmp_path: Path) -> None:
    (tmp_path / "_rules.py").write_text("from bench import Stop\n", encoding="utf-8")
    (tmp_path / "col.py").write_text(THIN.format(limit=1), encoding="utf-8")
    broken = discovery.load_file(tmp_path / "col.py")
    assert isinstance(broken, Broken)
    assert "_rules.py: a shared rules file declares exactly one @predicate_factory, this one declares 0" in broken.error


EXPLAINING = ('"""Explains itself."""\nfrom bench import MutationNote, Stop, predicate\n\n'
              "@predicate(explained={'seq-a': 'the server cannot serve it'}, not_driven={'seq-b': 'no steer'},\n"
              "           mutation_notes=[MutationNote('return Stop(', 'equivalent here')])\n"
              "def decide(turn, state):\n    return Stop('done', ok=True, rule='r')\n")


def test_an_entry_point_predicate_carries_its_conformance_explanations_to_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a package's predicate is never imported as predicates/<name>.py: what it declares about itself
    # is read from the Predicate, not from a module found by name
    (tmp_path / "pkg_loop.py").write_text(EXPLAINING, encoding="utf-8")
    installed = discovery.load_file(tmp_path / "pkg_loop.py")
    assert isinstance(installed, Predicate)
    monkeypatch.setattr(discovery, "entry_points", lambda group: [FakeEntryPoint("pkg", "pkg:decide", installed)])
    [pred] = discover(None)
    assert isinstance(pred, Predicate)
    assert explained_by([pred]) == {"pkg": {"seq-a": "the server cannot serve it"}}
    assert dict(pred.not_driven) == {"seq-b": "no steer"}
    assert pred.mutation_notes == (MutationNote("return Stop(", "equivalent here"),)


def test_explanations_and_mutation_notes_are_checked_when_the_predicate_is_declared() -> None:
    with pytest.raises(DeclarationError, match="explained: 'seq': '' is not a sequence id with why"):
        predicate(explained={"seq": ""})(lambda turn, state: Stop("d", ok=True, rule="r"))
    with pytest.raises(DeclarationError, match="mutation_notes: 'line' is not a MutationNote"):
        predicate(mutation_notes=["line"])(lambda turn, state: Stop("d", ok=True, rule="r"))  # type: ignore[list-item]


def test_each_keyword_of_predicate_fills_the_field_of_its_name_and_naming_keeps_every_field() -> None:
    """A port's declaration is one list (predicate()'s keywords, each a Predicate field): a field the
    decorator or naming a column dropped would be a fact of the port the report never sees."""
    given: dict[str, Any] = {"source": "src", "max_steps": 3, "reasons": ["done"], "rules": {"r": "why"},
                             "description": "d", "cap_note": "n", "unreachable": {"r": "u"},
                             "explained": {"s": "e"}, "not_driven": {"t": "x"},
                             "mutation_notes": [MutationNote("line", "why")]}
    assert set(given) | {"cap"} == set(inspect.signature(predicate).parameters)
    built = predicate(**given)(lambda turn, state: Stop("done", ok=True, rule="r"))
    fields = {f.name for f in dataclasses.fields(Predicate)}
    for key, value in given.items():
        assert key in fields
        held = getattr(built, key)
        assert (dict(held) if isinstance(value, dict) else list(held) if isinstance(value, list) else held) == value
    named = built.named("col", "test")
    assert (named.name, named.origin) == ("col", "test")
    assert all(getattr(named, f) == getattr(built, f) for f in fields - {"name", "origin"})
