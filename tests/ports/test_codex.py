"""Codex's turn loop (predicates/codex.py) against the pinned files: turn.rs @ 553376ff,
stream_events_utils.rs @ 010ccb0c, sse/responses.rs @ 0a7fb0d7 (openai/codex)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.discovery import load_file
from bench.model import Cell, Turn, TurnError
from bench.predicate import Predicate
from bench.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools, truncated


@pytest.fixture(scope="module")
def codex() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "codex.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end") -> Cell:
    return replay(seq(*turns, then=then), pred)


def actions(cell: Cell) -> list[str]:
    return [f"{s.decision.action} {s.decision.rule}" for s in cell.steps]


def test_truncation_is_a_stream_error_retried_five_times(codex: Predicate) -> None:
    # run_sampling_request: retries < stream_max_retries (5) -> retry; then Err -> run_turn breaks
    cell = run(codex, truncated(), then="repeat")
    assert actions(cell) == ["resend stream-retry"] * 5 + ["stop stream-retry-exhausted"]
    assert (cell.reason, cell.ok) == ("stream_error", False)


def test_a_completed_response_resets_the_retry_budget(codex: Predicate) -> None:
    # `retries` is a local of run_sampling_request, which run_turn calls afresh per request
    err = Turn(finish="error", error=TurnError(type="server_error", status=503))
    cell = run(codex, *([err] * 5), tools("ls"), *([err] * 5), answer())
    assert cell.reason == "turn_complete" and cell.resends == 10


def test_finish_strings_are_never_read(codex: Predicate) -> None:
    # only function_call items and end_turn decide: a "tool_calls" finish with no item ends the turn
    dropped = Turn(finish="tool_calls", finish_raw="tool_calls")
    assert run(codex, dropped).reason == "turn_complete"
    stop_with_call = Turn(finish="stop", finish_raw="stop", tool_calls=(call("read_file"),))
    assert actions(run(codex, stop_with_call, answer())) == ["continue tool-follow-up", "stop no-follow-up"]


def test_calls_done_before_a_stream_error_still_run(codex: Predicate) -> None:
    # drain_in_flight runs after try_run_sampling_request's event loop whatever the outcome
    cut = replace(truncated(), tool_calls=(call("read_file"),))
    cell = run(codex, cut, answer())
    assert cell.steps[0].decision.action == "resend" and cell.tools_run == ("read_file",)


def test_steer_forces_another_request(codex: Predicate) -> None:
    # run_turn: needs_follow_up = model_needs_follow_up || has_pending_input
    steered = replace(answer("done"), steer="also update the README")
    cell = run(codex, steered, answer("updated"))
    assert actions(cell) == ["remind steer", "stop no-follow-up"]


def test_end_turn_false_asks_again_without_tool_calls(codex: Predicate) -> None:
    # secondary rule (later upstream turn.rs): if let Some(false) = end_turn { needs_follow_up = true }
    cell = run(codex, replace(answer("next"), end_turn=False), answer())
    assert actions(cell) == ["continue end-turn-false", "stop no-follow-up"]


def test_no_step_cap(codex: Predicate) -> None:
    cell = run(codex, tools("bash"), then="repeat")
    assert cell.outcome == "capped"



def test_a_call_with_empty_arguments_is_answered_with_a_parse_error(codex: Predicate) -> None:
    # seen when @openai/codex 0.169.0 was driven: "" fails serde_json like any invalid JSON
    cell = run(codex, Turn(finish="tool_calls", tool_calls=(call("llm_version", 0, ""),)), answer())
    assert (cell.tools_run, cell.tools_failed) == ((), ("llm_version",))
