"""Properties of the bench's reference loop (predicates/reference.py, named by bench.fuzz.REFERENCE).

Other loops break some of these on purpose or by history; `stopbench fuzz` reports those as findings
(reports/fuzz-findings.md). Here they are asserted only for the loop meant to satisfy them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from bench.engine.discovery import Broken, load_file
from bench.engine.predicate import Predicate
from bench.engine.replay import DEFAULT_SAFETY_CAP
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
