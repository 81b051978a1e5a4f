"""Properties of the bench's reference loop (predicates/reference.py, named by bench.fuzz.REFERENCE).

Other loops break some of these on purpose or by history; `stopbench fuzz` reports those as findings
(reports/fuzz-findings.md). Here they are asserted only for the loop meant to satisfy them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.engine.discovery import Broken, load_file
from bench.engine.model import Sequence, ToolCall, Turn
from bench.engine.predicate import Predicate
from bench.engine.replay import DEFAULT_SAFETY_CAP, replay
from bench.fuzz import BY_NAME, REFERENCE, Example, examples
from bench.fuzz.strategies import describe

REFERENCE_FILE = Path(__file__).resolve().parents[2] / "predicates" / f"{REFERENCE}.py"


@pytest.fixture(scope="module")
def reference() -> Predicate:
    loaded = load_file(REFERENCE_FILE)
    if isinstance(loaded, Broken):
        pytest.fail(f"predicates/{REFERENCE}.py does not load: {loaded.error}")
    return loaded


def _holds(pred: Predicate, prop: str) -> None:
    check_prop = BY_NAME[prop]
    assert check_prop.scope == "reference"

    @given(examples())
    def check(example: Example) -> None:
        why = check_prop.check(pred, example, DEFAULT_SAFETY_CAP)
        assert why is None, f"{pred.name} breaks {prop}: {why}\non {describe(example[0])}"

    check()


def test_reference_never_reports_success_on_a_truncated_filtered_errored_or_dropped_call_turn(
        reference: Predicate) -> None:
    _holds(reference, "no-false-ok")


def test_reference_never_throws_away_tool_calls_whatever_the_finish_says(reference: Predicate) -> None:
    _holds(reference, "keeps-calls")


def test_reference_stops_within_its_cap(reference: Predicate) -> None:
    _holds(reference, "within-cap")


def test_reference_stops_only_with_reasons_it_enumerates(reference: Predicate) -> None:
    _holds(reference, "enumerated-reasons")


# ---------------------------------------------------------------- the loop guard (rule 4, repeat)

_NAMES = st.sampled_from(["check_job", "read_file", "run_bash"])
_ARGS = st.sampled_from(['{"id": 1}', '{"id": 2}'])
_RESULTS = st.sampled_from(["queued", "running", "done", None])
_ROUND = st.tuples(_NAMES, _ARGS, _RESULTS)


def _turn(i: int, name: str, arguments: str, result: str | None) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(ToolCall(f"c{i}", name, arguments, result),))


def _no_cycle_thrice(rounds: list[tuple[str, str, str | None]]) -> bool:
    """No block of 1 to 5 rounds (calls and results) comes three times in a row followed by its first
    round's calls: every round of the work brought something new (the property's premise, stated
    apart from the predicate's code)."""
    for end in range(len(rounds)):
        for p in range(1, 6):
            start = end - 3 * p
            if start >= 0 and rounds[start:end] == rounds[start:start + p] * 3 and rounds[end][:2] == rounds[start][:2]:
                return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(_ROUND, min_size=1, max_size=16).filter(_no_cycle_thrice))
def test_reference_guard_stops_no_finite_work_whose_rounds_bring_something_new(
        rounds: list[tuple[str, str, str | None]]) -> None:
    pred = load_file(REFERENCE_FILE)
    assert isinstance(pred, Predicate)
    turns = [_turn(i, *r) for i, r in enumerate(rounds)]
    answer = Turn(finish="stop", finish_raw="stop", content="done")
    cell = replay(Sequence(id="s", title="s", kind="constructed", dialect="openai-chat", source="test",
                           turns=(*turns, answer)), pred)
    assert (cell.outcome, cell.ok, cell.n_steps) == ("stopped", True, len(rounds) + 1), [
        f"{s.decision.action} {s.decision.rule}" for s in cell.steps]
    assert len(cell.tools_run) == len(rounds)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ROUND, min_size=1, max_size=5, unique_by=lambda r: r[:2]))
def test_reference_guard_stops_a_stuck_cycle_of_p_rounds_within_3p_plus_2_requests_and_not_as_success(
        cycle: list[tuple[str, str, str | None]]) -> None:
    pred = load_file(REFERENCE_FILE)
    assert isinstance(pred, Predicate)
    p = len(cycle)
    turns = [_turn(i, *r) for i, r in enumerate(cycle)]
    turns[-1] = replace(turns[-1], after=(("continue", 0), ("resend", p - 1), ("remind", 0)))
    cell = replay(Sequence(id="s", title="s", kind="constructed", dialect="openai-chat", source="test",
                           turns=tuple(turns), then="repeat"), pred)
    assert (cell.outcome, cell.reason, cell.ok) == ("stopped", "repeated_tool_call", False)
    assert cell.n_steps <= 3 * p + 2
    assert len(cell.tools_run) == 3 * p  # three runs of the cycle, none a fourth time
