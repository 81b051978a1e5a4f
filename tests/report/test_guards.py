"""The loop-guard score (bench/report/guards.py): which sequences are finite work and which are stuck,
what each column's cells count as (a false halt, a miss, the requests spent), and the score's place in
the decision table and on the page. Expectations are written from the definitions in the module's
docstring and the sequences' requirements, with toy loops whose behaviour is known by construction."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench import Continue, Remind, Stop, predicate
from bench.engine.model import ALL, Decision, Requirement, Sequence, ToolCall, Turn
from bench.engine.predicate import Predicate, State
from bench.engine.replay import replay
from bench.golden.run import Result
from bench.report.guards import guard_cases, guard_scores, html_section, markdown_section
from bench.report.page import build_page
from bench.report.write import write_reports
from tests.helpers import answer, seq

FINITE = Requirement(ok=True, answer_on=(3,), no_dropped_calls=True)
STUCK = Requirement(ok=False, stops_within=6)


def poll(i: int, result: str) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(ToolCall(f"c{i}", "check_job", '{"id": 1}', result),))


def sequences() -> list[Sequence]:
    finite = replace(seq(poll(0, "10%"), poll(1, "50%"), poll(2, "done"), answer(), require=FINITE,
                         sid="guard-finite"), tags=("repeat",))
    stuck = replace(seq(poll(0, "queued"), then="repeat", require=STUCK, sid="guard-stuck"), tags=("repeat",))
    other = seq(poll(0, "done"), answer(), require=Requirement(ok=True), sid="not-a-guard")
    return [finite, stuck, other]


@predicate(rules={"calls": "run the calls", "answer": "no calls: the answer", "third": "3rd identical call: stop"})
def halts_at_third(turn: Turn, state: State) -> Decision:
    """Stops at the 3rd identical call, whatever its results (a call-only guard)."""
    if not turn.tool_calls:
        return Stop("answer", ok=True, rule="answer")
    if state.step >= 3:
        return Stop("loop", ok=False, rule="third", failed=ALL)
    return Continue("calls")


@predicate(rules={"calls": "run the calls", "answer": "no calls: the answer"})
def never_guards(turn: Turn, state: State) -> Decision:
    """Runs every call, no cap: the bench's safety cap ends a stuck sequence."""
    return Continue("calls") if turn.tool_calls else Stop("answer", ok=True, rule="answer")


@predicate(rules={"calls": "run the calls", "answer": "no calls: the answer", "warn": "a reminder, not run",
                  "done-looping": "a loop detected: success"})
def ends_loop_as_success(turn: Turn, state: State) -> Decision:
    """Reminds at the 4th call, then stops reporting success (Gemini CLI's shape)."""
    if not turn.tool_calls:
        return Stop("answer", ok=True, rule="answer")
    if state.step == 4:
        return Remind("warn", "loop?")
    if state.step >= 5:
        return Stop("loop_detected", ok=True, rule="done-looping")
    return Continue("calls")


halts_at_third = replace(halts_at_third, name="halts_at_third")
never_guards = replace(never_guards, name="never_guards")
ends_loop_as_success = replace(ends_loop_as_success, name="ends_loop_as_success")


def table_rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines() if line.startswith("| ")]


def results(*preds: Predicate) -> list[Result]:
    return [Result(replay(s, p), "match") for s in sequences() for p in preds]


def test_the_score_covers_sequences_tagged_repeat_finite_by_ok_true_and_stuck_by_then_repeat_ok_false() -> None:
    cases = {c.sequence: c for c in guard_cases(sequences())}
    assert set(cases) == {"guard-finite", "guard-stuck"}
    assert (cases["guard-finite"].kind, cases["guard-finite"].bound) == ("finite", None)
    assert (cases["guard-stuck"].kind, cases["guard-stuck"].bound) == ("stuck", 6)


def test_a_guard_that_stops_finite_work_before_its_answer_is_a_false_halt_explained_by_its_rule() -> None:
    (score,) = guard_scores(results(halts_at_third), sequences(), ["halts_at_third"])
    assert [h.sequence for h in score.false_halts] == ["guard-finite"]
    assert score.false_halts[0].rules == ("third",)
    assert score.finished == 0
    assert [m.sequence for m in score.misses] == []  # it stopped the stuck poll at request 3, within 6
    assert score.requests == 3


def test_a_loop_without_a_guard_finishes_the_work_and_lets_the_stuck_loop_run_to_the_cap() -> None:
    (score,) = guard_scores(results(never_guards), sequences(), ["never_guards"])
    assert score.finished == 1 and score.false_halts == ()
    assert [m.sequence for m in score.misses] == ["guard-stuck"]
    assert score.misses[0].requests == 200 and score.misses[0].stopped is False
    assert score.requests == 200


def test_a_stuck_loop_stopped_within_its_bound_but_reported_as_success_is_counted_apart_from_misses() -> None:
    (score,) = guard_scores(results(ends_loop_as_success), sequences(), ["ends_loop_as_success"])
    assert score.misses == ()
    assert [s.sequence for s in score.ended_as_success] == ["guard-stuck"]
    assert score.ended_as_success[0].rules == ("warn", "done-looping")
    assert score.finished == 1  # the finite poll answers at request 4, before its reminder would come


def test_a_stuck_loop_stopped_past_its_bound_as_success_is_listed_as_both() -> None:
    late = replace(sequences()[1], require=Requirement(ok=False, stops_within=4))
    cells = [Result(replay(late, ends_loop_as_success), "match")]
    (score,) = guard_scores(cells, [late], ["ends_loop_as_success"])
    assert [m.sequence for m in score.misses] == [s.sequence for s in score.ended_as_success] == ["guard-stuck"]
    assert "- guard-stuck: miss, as success, stopped at request 5" in markdown_section([score])


def test_scores_come_in_the_columns_order_and_a_column_without_cells_scores_nothing() -> None:
    scores = guard_scores(results(never_guards, halts_at_third), sequences(), ["never_guards", "halts_at_third",
                                                                              "absent"])
    assert [s.predicate for s in scores] == ["never_guards", "halts_at_third", "absent"]
    assert (scores[2].finite, scores[2].stuck) == (0, 0)


def test_the_sections_are_the_same_bytes_twice_and_name_each_rule_with_its_text() -> None:
    preds = [never_guards, halts_at_third]
    names = ["never_guards", "halts_at_third"]
    one = markdown_section(guard_scores(results(*preds), sequences(), names), preds)
    two = markdown_section(guard_scores(results(*preds), sequences(), names), preds)
    assert one == two
    assert one.startswith("## Loop-guard score\n")
    assert ["halts_at_third", "0 of 1", "1", "0 of 1", "0", "3"] in table_rows(one)
    assert ["never_guards", "1 of 1", "0", "1 of 1", "0", "200"] in table_rows(one)
    assert "`third`: 3rd identical call: stop" in one
    html = [html_section(guard_scores(results(*preds), sequences(), names), preds) for _ in range(2)]
    assert html[0] == html[1] and 'href="#guard-halts_at_third"' in html[0]


def test_the_html_section_escapes_what_it_shows() -> None:
    @predicate(rules={"calls": "run", "answer": "answer", "<b>": "a <script> rule"})
    def odd(turn: Turn, state: State) -> Decision:
        return Stop("x", ok=False, rule="<b>") if state.step == 2 else (
            Continue("calls") if turn.tool_calls else Stop("answer", ok=True, rule="answer"))

    odd = replace(odd, name="odd")
    html = html_section(guard_scores(results(odd), sequences(), ["odd"]), [odd])
    assert 'id="loop-guards"' in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_decision_table_and_the_page_carry_the_loop_guard_score(tmp_path: Path) -> None:
    preds = [never_guards, halts_at_third]
    names = ["never_guards", "halts_at_third"]
    res = results(*preds)
    ids = [s.id for s in sequences()]
    write_reports(tmp_path, res, ids, names, catalogue=sequences(), loaded=preds)
    table = (tmp_path / "decision-table.md").read_text()
    assert "## Loop-guard score" in table
    assert ["halts_at_third", "0 of 1", "1", "0 of 1", "0", "3"] in table_rows(table.split("## Loop-guard")[1])
    page = build_page(res, sequences(), preds)
    assert 'id="loop-guards"' in page
    assert (tmp_path / "index.html").read_text().count('id="loop-guards"') == 1
