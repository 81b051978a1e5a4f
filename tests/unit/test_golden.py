"""Golden comparison and the accept step: exact, first difference named, atomic writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import Continue, Stop, predicate, replay
from bench.golden import (
    ExpectedCell,
    GoldenError,
    accept,
    compare,
    expand,
    load_golden,
    path_of,
    read_golden_file,
)
from bench.model import Decision, Turn
from bench.predicate import State
from tests.helpers import answer, seq, tools


@predicate(reasons=["done"])
def simple(turn: Turn, state: State) -> Decision:
    return Continue("calls") if turn.tool_calls else Stop("done", ok=True, rule="no-calls")


def test_paths_are_run_length_encoded_and_expand_back() -> None:
    cell = replay(seq(tools("a"), tools("b"), tools("c"), answer()), simple)
    assert path_of(cell) == ["continue calls x3", "stop no-calls"]
    assert expand(path_of(cell)) == ["continue calls"] * 3 + ["stop no-calls"]


def test_a_matching_expectation_gives_no_mismatch() -> None:
    cell = replay(seq(tools("a"), answer()), simple)
    exp = ExpectedCell(basis="rule", outcome="stopped", reason="done", ok=True, steps=2, tools_run=["a"],
                       path=["continue calls", "stop no-calls"])
    assert compare(cell, exp) is None


def test_a_mismatch_names_the_first_differing_step_with_both_sides() -> None:
    cell = replay(seq(tools("a"), answer()), simple)
    exp = ExpectedCell(basis="rule", outcome="stopped", reason="done", ok=True, steps=2, tools_run=["a"],
                       path=["continue calls", "resend dropped"])
    m = compare(cell, exp)
    assert m is not None
    assert m.what == "step 2 (turn 1) differs"
    assert m.expected == "resend dropped"
    assert m.actual == "stop no-calls -> done, ok=true"


def test_a_shorter_path_is_a_mismatch_at_the_first_missing_step() -> None:
    cell = replay(seq(tools("a"), answer()), simple)
    exp = ExpectedCell(basis="rule", outcome="stopped", reason="done", ok=True, steps=1, path=["continue calls"])
    m = compare(cell, exp)
    assert m is not None and m.what == "step 2 differs"


def test_fields_beyond_the_path_are_compared_exactly() -> None:
    cell = replay(seq(tools("a"), answer()), simple)
    exp = ExpectedCell(basis="rule", outcome="stopped", reason="done", ok=True, steps=2, tools_run=["a", "a"],
                       path=["continue calls", "stop no-calls"])
    m = compare(cell, exp)
    assert m is not None and m.what.startswith("tools_run differs")


def test_accept_needs_a_header_for_a_new_file(tmp_path: Path) -> None:
    cell = replay(seq(answer(), sid="one"), simple)
    with pytest.raises(GoldenError, match="--derived"):
        accept(tmp_path, "simple", [cell], derived=None)


def test_accept_adds_only_new_cells_unless_asked_to_replace(tmp_path: Path) -> None:
    first = replay(seq(answer(), sid="one"), simple)
    assert accept(tmp_path, "simple", [first], derived="by hand", basis="rule").added == ["one"]
    changed_cell = replay(seq(tools("a"), answer(), sid="one"), simple)
    assert accept(tmp_path, "simple", [changed_cell]).added == []
    assert read_golden_file(tmp_path / "simple.yaml").cells["one"].steps == 1
    assert accept(tmp_path, "simple", [changed_cell], mode="all").replaced == ["one"]
    gf = read_golden_file(tmp_path / "simple.yaml")
    assert gf.cells["one"].steps == 2
    assert gf.cells["one"].basis == "rule"
    assert gf.derived == "by hand"


def test_accept_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    accept(tmp_path, "simple", [replay(seq(answer(), sid="one"), simple)], derived="by hand", basis="rule")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["simple.yaml"]


def test_a_failed_write_keeps_the_old_golden_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    accept(tmp_path, "simple", [replay(seq(answer(), sid="one"), simple)], derived="by hand", basis="rule")
    before = (tmp_path / "simple.yaml").read_bytes()

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("bench.golden.os.replace", fail)
    with pytest.raises(OSError):
        accept(tmp_path, "simple", [replay(seq(tools("a"), answer(), sid="two"), simple)], basis="rule")
    assert (tmp_path / "simple.yaml").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["simple.yaml"]


def test_a_malformed_golden_file_is_reported_with_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("predicate: p\nderived: x\ncovers: {count: 1, sequences: [s]}\ncells:\n"
                                     "  s:\n    basis: rule\n    outcome: finished\n    steps: 1\n    path: []\n",
                                     encoding="utf-8")
    golden = load_golden(tmp_path)
    assert len(golden.problems) == 1
    assert "p.yaml: cells.s.outcome: expected one of 'stopped'" in golden.problems[0]

