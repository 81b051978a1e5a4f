"""Golden comparison and the accept step: exact, first difference named, atomic writes."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from bench import Continue, Stop, predicate, replay
from bench.catalogue.files import UnwritableOutput
from bench.engine.model import Decision, Turn
from bench.engine.predicate import State
from bench.engine.replay import crashed_cell
from bench.golden.expected import (
    ExpectedCell,
    GoldenError,
    accept,
    compare,
    dump_golden,
    expand,
    load_golden,
    path_of,
    read_golden_file,
)
from tests.helpers import ROOT, answer, seq, tools


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

    monkeypatch.setattr("bench.catalogue.files.os.fsync", fail)
    with pytest.raises(UnwritableOutput, match="disk full"):
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



# ---------------------------------------------------------------- the file format

SHIPPED = sorted((ROOT / "expected").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_golden_file_reads_and_writes_back_to_the_same_bytes(path: Path) -> None:
    assert dump_golden(read_golden_file(path)) == path.read_text(encoding="utf-8")


def test_every_shipped_cell_says_what_it_rests_on() -> None:
    rule_columns = {"seed000_content", "seed000_finish", "seed000_fixed", "seed000_tool_calls", "finish_only",
                    "reference"}
    for path in SHIPPED:
        bases = {c.basis for c in read_golden_file(path).cells.values()}
        assert bases == {"rule"} if path.stem in rule_columns else "rule" not in bases, path.stem


def _copy(tmp_path: Path, name: str = "seed000_fixed") -> Path:
    target = tmp_path / f"{name}.yaml"
    shutil.copy(ROOT / "expected" / f"{name}.yaml", target)
    return target


def test_a_file_cut_short_at_a_cell_boundary_names_the_first_missing_cells(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    text = path.read_text(encoding="utf-8")
    cut = text.index("\n  rec-anthropic-")  # everything from the first recorded sequence's cell on is lost
    path.write_text(text[:cut + 1], encoding="utf-8")
    with pytest.raises(GoldenError) as err:
        read_golden_file(path)
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith(f"{path}: cells: ")
    n = len(read_golden_file(ROOT / "expected" / "seed000_fixed.yaml").cells)
    assert f"of the {n} covered cells are missing" in line
    assert "rec-anthropic-" in line and "more)" in line


def test_covers_must_agree_with_the_cells(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    text = path.read_text(encoding="utf-8")
    n = len(read_golden_file(path).cells)
    path.write_text(text.replace(f"  count: {n}\n", f"  count: {n - 1}\n"), encoding="utf-8")
    with pytest.raises(GoldenError, match=rf"covers.count: says {n - 1}, but covers.sequences lists {n}"):
        read_golden_file(path)
    path.write_text(text.replace("    - seed000-talk-only\n", "").replace(f"  count: {n}\n", f"  count: {n - 1}\n"),
                    encoding="utf-8")
    with pytest.raises(GoldenError, match=r"covers.sequences: does not list seed000-talk-only"):
        read_golden_file(path)


@pytest.mark.parametrize(("content", "expected"), [
    (b"predicate: p\nderived: \xff\xfe\n", r"p.yaml: not UTF-8 text: line 2, column 10: byte 0xff"),
    (b"predicate: p\nderived: x\ncovers: {count: 0, sequences: []}\ncells:\n  [a, b]: 1\n",
     r"p.yaml: not valid YAML: line 5, column 3: a mapping key must be a plain value, not a list"),
    (b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
     r"p.yaml: not valid YAML: line 2, column 8: alias \*a: aliases are not allowed here"),
    (b"predicate: p\nderived: x\ncells: {}\n", r"p.yaml: covers: required, but missing"),
])
def test_unusable_golden_files_are_one_line_naming_the_file(tmp_path: Path, content: bytes, expected: str) -> None:
    (tmp_path / "p.yaml").write_bytes(content)
    with pytest.raises(GoldenError, match=expected) as err:
        read_golden_file(tmp_path / "p.yaml")
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- accepting into a shipped file


@predicate(reasons=["done"])
def other(turn: Turn, state: State) -> Decision:
    return Stop("done", ok=False, rule="other-rule")


def test_accepting_one_cell_changes_only_that_cells_lines(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_text(encoding="utf-8").splitlines()
    cell = replay(seq(answer(), sid="seed000-talk-only"), other)
    done = accept(tmp_path, "seed000_fixed", [cell], mode="all")
    assert done.replaced == ["seed000-talk-only"] and done.added == []
    after = path.read_text(encoding="utf-8").splitlines()
    first = before.index("  seed000-talk-only:")
    last = next(i for i in range(first + 1, len(before)) if not before[i].startswith("    "))
    ops = [op for op in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert ops and all(first < i1 and i2 <= last for _, i1, i2, _, _ in ops), ops
    assert len(after) == len(before)
    assert [(a, b) for a, b in zip(before[first:last], after[first:last], strict=True) if a != b] == [
        ("    reason: no_tool_calls", "    reason: done"), ("    ok: true", "    ok: false"),
        ("    path: [stop no-calls]", "    path: [stop other-rule]")]
    gf = read_golden_file(path)
    assert gf.cells["seed000-talk-only"].basis == "rule"
    assert gf.cells["seed000-talk-only"].note == read_golden_file(ROOT / "expected" / "seed000_fixed.yaml").cells[
        "seed000-talk-only"].note


def test_a_new_cell_adds_its_lines_and_one_covers_line(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_text(encoding="utf-8").splitlines()
    n = len(read_golden_file(path).cells)
    done = accept(tmp_path, "seed000_fixed", [replay(seq(answer(), sid="zz-new"), other)], basis="source")
    assert done.added == ["zz-new"]
    after = path.read_text(encoding="utf-8").splitlines()
    removed = [line for line in difflib.unified_diff(before, after, lineterm="", n=0)
               if line.startswith("-") and not line.startswith("---")]
    assert removed == [f"-  count: {n}"]
    assert len(after) - len(before) == 1 + 8  # the covers line, then basis..path under the id
    assert "    - zz-new" in after and "  zz-new:" in after


def test_a_no_op_replace_leaves_the_file_untouched(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    cell = replay(seq(answer(), sid="seed000-talk-only"), other)
    assert accept(tmp_path, "seed000_fixed", [cell], mode="new").text is None
    assert path.read_bytes() == before


def test_a_crashed_cell_is_never_stored(tmp_path: Path) -> None:
    crashed = crashed_cell("boom", "simple", "predicate did not load: SyntaxError")
    done = accept(tmp_path, "simple", [crashed, replay(seq(answer(), sid="fine"), simple)], derived="by hand",
                  basis="rule")
    assert done.refused == ["boom x simple: crashed, not accepted: predicate did not load: SyntaxError"]
    assert sorted(read_golden_file(tmp_path / "simple.yaml").cells) == ["fine"]


def test_a_new_cell_needs_a_basis_and_nothing_is_written_without_one(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"basis: 1 new cell\(s\) need one \(one\): pass --basis source"):
        accept(tmp_path, "simple", [replay(seq(answer(), sid="one"), simple)], derived="by hand")
    assert list(tmp_path.iterdir()) == []


def test_a_different_header_is_refused_unless_replace_header(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    with pytest.raises(GoldenError, match="derived: the file already has a different header; pass --replace-header"):
        accept(tmp_path, "seed000_fixed", [], derived="something else")
    assert path.read_bytes() == before
    done = accept(tmp_path, "seed000_fixed", [], derived="something else\n", replace_header=True)
    assert done.header and read_golden_file(path).derived == "something else\n"


def test_prune_removes_expectations_whose_sequence_is_gone(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    keep = {"seed000-talk-only", "seed000-tool-tool-answer"}
    n = len(read_golden_file(path).cells)
    done = accept(tmp_path, "seed000_fixed", [], keep_only=keep)
    assert len(done.pruned) == n - 2
    assert sorted(read_golden_file(path).cells) == sorted(keep)


def test_an_accepted_golden_file_gets_the_permissions_a_normal_write_gives(tmp_path: Path) -> None:
    accept(tmp_path, "simple", [replay(seq(answer(), sid="one"), simple)], derived="by hand", basis="rule")
    plain = tmp_path / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    assert (tmp_path / "simple.yaml").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
