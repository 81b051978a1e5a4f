"""Report formatting: cell labels stay short and readable."""

from __future__ import annotations

import statistics

from bench import Continue, Stop, predicate, replay
from bench.catalogue.load import load_catalogue
from bench.engine.discovery import discover
from bench.engine.model import Decision, Turn, Violation
from bench.engine.predicate import State
from bench.golden.expected import load_golden
from bench.golden.run import Result, run
from bench.report.labels import label, short_label, tool_list
from bench.report.tables import decision_table, violations_summary
from tests.helpers import ROOT, answer, seq, tools


def test_a_run_of_the_same_tool_is_written_once_with_its_count() -> None:
    assert tool_list(("read_file", "write_file", "write_file", "write_file", "read_file")) == \
        "[read_file,write_file x3,read_file]"
    assert tool_list(()) == "[]"


def test_a_stopped_cell_reads_reason_steps_verdict_and_tools() -> None:
    @predicate()
    def simple(turn: Turn, state: State) -> Decision:
        return Continue("calls") if turn.tool_calls else Stop("no_tool_calls", ok=True, rule="done")

    cell = replay(seq(tools("read_file"), tools("count_lines"), answer()), simple)
    assert label(cell) == "stop:no_tool_calls@3 ok [read_file,count_lines]"


def test_a_label_writes_its_tool_lists_and_a_note_after_its_head_as_asked() -> None:
    @predicate()
    def runs_then_stops(turn: Turn, state: State) -> Decision:
        return Continue("calls") if turn.tool_calls else Stop("no_tool_calls", ok=True, rule="done")

    cell = replay(seq(tools("read_file"), tools("read_file"), answer()), runs_then_stops)
    assert label(cell, lambda names: "<" + "|".join(names) + ">", " (note)") == \
        "stop:no_tool_calls@3 ok (note) <read_file|read_file>"


# ---------------------------------------------------------------- the Markdown decision table


def test_a_short_cell_is_a_glyph_action_at_steps_and_its_marks() -> None:
    @predicate()
    def simple(turn: Turn, state: State) -> Decision:
        return Continue("calls") if turn.tool_calls else Stop("no_tool_calls", ok=True, rule="done")

    ok = replay(seq(tools("read_file"), answer()), simple)
    assert short_label(Result(ok, "match")) == "✓stop@2"
    assert short_label(Result(ok, "unreviewed")) == "✓stop@2 ?"
    running = replay(seq(tools("a"), tools("b"), then="end"), simple)
    judged = running.with_violations((Violation("stops_within: 1", 2, "never stopped"),))
    assert short_label(Result(judged, "mismatch")) == "↻run@2 ⚠ ≠"


def test_violations_are_counted_per_predicate_and_requirement_kind() -> None:
    @predicate()
    def simple(turn: Turn, state: State) -> Decision:
        return Stop("done", ok=True, rule="done")

    a = replay(seq(answer(), sid="a"), simple.named("p", "t")).with_violations(
        (Violation("stops_within: 1", 1, "x"), Violation("ok: false", 1, "y")))
    b = replay(seq(answer(), sid="b"), simple.named("p", "t")).with_violations((Violation("stops_within: 3", 1, "z"),))
    c = replay(seq(answer(), sid="a"), simple.named("q", "t"))
    headers, rows = violations_summary([Result(a, "match"), Result(b, "match"), Result(c, "match")], ["p", "q"])
    assert headers == ["predicate", "ok", "stops_within", "total"]
    assert rows == [["p", 1, 2, 3], ["q", 0, 0, 0]]


def test_a_live_column_has_no_golden_status_row_and_the_legend_says_why() -> None:
    @predicate()
    def simple(turn: Turn, state: State) -> Decision:
        return Stop("done", ok=True, rule="done")

    replayed = replay(seq(answer(), sid="a"), simple.named("p", "t"))
    observed = replay(seq(answer(), sid="a"), simple.named("mine@live", "t")).with_violations(
        (Violation("ok: false", 1, "x"),))
    plain = decision_table([Result(replayed, "match")], ["a"], ["p"])
    table = decision_table([Result(replayed, "match"), Result(observed, "live")], ["a"], ["p", "mine@live"])
    assert "observed live" not in plain and "observed live" in table.split("| sequence", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith("| a "))
    assert [c.strip() for c in row.strip("|").split("|")] == ["a", "✓stop@1", "✓stop@1 ⚠"]
    golden = table.split("## Golden status", 1)[1]
    assert [line.split("|")[1].strip() for line in golden.splitlines() if line.startswith("| ")] == ["predicate", "p"]
    assert "`mine@live` 1 cells, 1 with violations" in golden
    counted = table.split("## Requirement violations", 1)[1].split("## Golden status")[0]
    assert [[c.strip() for c in line.strip("|").split("|")] for line in counted.splitlines()
            if line.startswith("| ")][1:] == [["p", "0", "0"], ["mine@live", "1", "1"]]


def test_the_shipped_decision_table_has_a_median_row_under_20_characters_a_column() -> None:
    """A cell stays a short label (outcome, steps, a violation mark), so a row grows by about one
    padded label per column: the bar is per column (it was 350 characters at 14 columns, about 23 a
    column; the column-name padding of the longest names is most of a row's width)."""
    cat = load_catalogue(ROOT / "sequences")
    preds = discover(ROOT / "predicates", entry_points_too=False)
    res = list(run(cat.sequences, preds, load_golden(ROOT / "expected")))
    md = decision_table(res, [s.id for s in cat.sequences], [p.name for p in preds])
    table = md.split("\n## ", 1)[0].splitlines()
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| sequence")]
    assert len(rows) == len(cat.sequences)
    median = statistics.median(len(r) for r in rows)
    print(f"decision-table.md: {len(rows)} rows x {len(preds)} predicates, median row {median} characters, "
          f"longest {max(len(r) for r in rows)}")
    assert median < 20 * (len(preds) + 1)
