"""Predicate discovery: the folder, the entry-point group, and files that cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import discovery
from bench.discovery import Broken, discover
from bench.predicate import Predicate

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
