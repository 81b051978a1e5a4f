"""bench.fuzz.strategies: every generated turn is well formed for its dialect, plain means plain, and a
hostile failure shrinks to a small counterexample a person can read."""

from __future__ import annotations

import json
from collections.abc import Callable
from random import Random

import pytest
from hypothesis import HealthCheck, find, given, settings

from bench.engine.model import ERROR_KINDS, Dialect, Sequence, Turn
from bench.fuzz.strategies import TOOL_NAMES, arguments, errors, long_sequences, sequences, turns
from bench.wires.dialects import DIALECTS, TABLES, canonical

SEARCH = settings(database=None, max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _minimal(condition: Callable[[Sequence], bool], dialect: Dialect = "openai-chat") -> Sequence:
    """The shrunk example of a short sequence (up to 2 turns: enough to show that shrinking drops
    the turns the condition does not need, cheap enough for the CI profile)."""
    return find(sequences(dialect, max_turns=2), condition, settings=SEARCH, random=Random(0))


@given(sequences())
def test_every_generated_turn_has_the_canonical_finish_of_its_raw_string_or_is_an_error(seq: Sequence) -> None:
    for t in seq.turns:
        if t.error is not None:
            assert t.finish == "error" and t.finish_raw in (None, *(r for r, e in TABLES[seq.dialect].items()
                                                                     if e.finish == "error"))
        else:
            assert t.finish == canonical(seq.dialect, t.finish_raw)
        assert all(c.name in TOOL_NAMES for c in t.tool_calls)
    assert seq.then in ("end", "repeat") and seq.turns


@pytest.mark.parametrize("dialect", DIALECTS)
def test_plain_turns_are_well_behaved(dialect: Dialect) -> None:
    @given(turns(dialect, hostile=False))
    def check(t: Turn) -> None:
        assert t.finish_raw in TABLES[dialect], "a plain turn uses a raw string of its dialect's table"
        assert t.error is None and t.finish in ("stop", "tool_calls", "length", "content_filter")
        ids = [c.id for c in t.tool_calls]
        assert all(ids) and len(set(ids)) == len(ids), "plain calls have distinct, non-empty ids"
        assert all(_valid_json(c.arguments) for c in t.tool_calls)
        if t.tool_calls:
            assert t.finish in ("tool_calls", "stop")
        elif t.finish == "tool_calls":
            pytest.fail("a plain tool_calls turn carries calls")

    check()


@given(arguments(valid=False, invalid=False, cut_off=True))
def test_cut_off_arguments_are_never_valid_json(args: str) -> None:
    assert not _valid_json(args)


def test_stop_with_calls_shrinks_to_one_turn_with_one_plain_call() -> None:
    seq = _minimal(lambda s: any(t.finish == "stop" and t.tool_calls for t in s.turns))
    assert len(seq.turns) == 1
    (turn,) = seq.turns
    assert turn.finish_raw == "stop" and turn.content in ("", None)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("call_1", "read_file", "{}")]


def test_duplicate_call_ids_shrink_to_two_calls_sharing_the_first_id() -> None:
    seq = _minimal(lambda s: any(len({c.id for c in t.tool_calls}) < len(t.tool_calls) for t in s.turns))
    assert len(seq.turns) == 1
    assert [c.id for c in seq.turns[0].tool_calls] == ["call_1", "call_1"]


def test_invalid_arguments_shrink_to_one_call_and_nothing_else_odd() -> None:
    seq = _minimal(lambda s: any(not _valid_json(c.arguments) for t in s.turns for c in t.tool_calls))
    assert len(seq.turns) == 1 and len(seq.turns[0].tool_calls) == 1
    assert seq.turns[0].finish_raw == "stop" and seq.turns[0].tool_calls[0].id == "call_1"


def test_an_unknown_raw_finish_shrinks_to_a_single_bare_turn() -> None:
    seq = _minimal(lambda s: any(t.finish_raw is not None and t.finish_raw not in TABLES[s.dialect]
                                 for t in s.turns), dialect="anthropic")
    assert len(seq.turns) == 1
    (turn,) = seq.turns
    assert turn.finish == "unknown" and not turn.tool_calls and turn.content in ("", None)


def test_an_error_in_place_of_a_response_is_generated_and_shrinks_to_one_turn() -> None:
    seq = _minimal(lambda s: any(t.error is not None for t in s.turns), dialect="gemini")
    assert len(seq.turns) == 1 and seq.turns[0].finish == "error" and not seq.turns[0].tool_calls


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_long_sequences_go_past_the_safety_cap_and_repeat_a_short_pattern() -> None:
    seq = find(long_sequences(), lambda s: len(s.turns) > 200, settings=SEARCH, random=Random(0))
    assert len(seq.turns) == 201
    assert len(set(seq.turns)) <= 3


@given(sequences())
def test_a_generated_after_names_follow_ups_in_catalogue_order_and_turns_that_exist(seq: Sequence) -> None:
    for t in seq.turns:
        actions = [a for a, _ in t.after]
        assert actions == [a for a in ("continue", "resend", "remind") if a in actions]
        assert all(0 <= i < len(seq.turns) for _, i in t.after)


def test_a_reactive_sequence_is_generated_and_shrinks_to_one_follow_up() -> None:
    seq = _minimal(lambda s: any(t.after for t in s.turns))
    assert len(seq.turns) == 1 and seq.turns[0].after == (("continue", 0),)


def test_every_kind_of_error_is_generated_with_a_status_it_arrives_with() -> None:
    for kind in ERROR_KINDS:
        err = find(errors(), lambda e, k=kind: e.kind == k, settings=SEARCH, random=Random(0))  # type: ignore[misc]
        assert err.kind == kind
    cut = find(errors(), lambda e: e.kind in ("connection_reset", "connection_refused", "stream_cut"),
               settings=SEARCH, random=Random(0))
    assert cut.status is None
