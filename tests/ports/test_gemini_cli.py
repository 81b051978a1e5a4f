"""Gemini CLI's non-interactive loop (predicates/gemini_cli.py) against npm @google/gemini-cli@0.61.0
(bundle line ranges are cited in the predicate file)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ErrorKind, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, seq


@pytest.fixture(scope="module")
def gc() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "gemini_cli.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "gemini") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def g(raw: str | None, content: str | None = None, *calls: ToolCall, reasoning: str | None = None) -> Turn:
    finish = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
              "MALFORMED_FUNCTION_CALL": "error", "TOO_MANY_TOOL_CALLS": "error", "LANGUAGE": "content_filter",
              "OTHER": "unknown"}.get(raw or "", "unknown")
    return Turn(finish=finish, finish_raw=raw, content=content, tool_calls=calls, reasoning=reasoning)  # type: ignore[arg-type]


def fc(name: str = "read_file", arguments: str = '{"path": "a"}', i: int = 0) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments) if i == 0 else ToolCall(id=f"c{i}", name=name,
                                                                                  arguments=arguments)


def err(kind: ErrorKind, status: int | None, content: str | None = None) -> Turn:
    return Turn(finish="error", content=content, error=TurnError(kind, "", status))


def path(cell: Cell) -> list[tuple[str, str]]:
    return [(s.decision.action, s.decision.rule) for s in cell.steps]


def test_calls_are_run_whatever_the_finish_reason(gc: Predicate) -> None:
    # turn.js L333058-333063: every functionCall part is a ToolCallRequest; the finish is not read
    cell = run(gc, g("MAX_TOKENS", None, fc()), g("STOP", "done"))
    assert path(cell) == [("continue", "calls"), ("stop", "answer")]
    assert cell.tools_run == ("read_file",) and cell.ok is True


def test_a_blank_name_and_arguments_that_are_no_object_fail(gc: Predicate) -> None:
    # generic_tool is no tool (L333132); {} fails the stub's required parameters
    cell = run(gc, g("STOP", None, fc(" "), fc("read_file", '{"path": "a', 1), fc("read_file", "", 2)), g("STOP", "ok"))
    assert (cell.steps[0].decision.run, cell.steps[0].decision.failed) == ((2,), (0, 1))


@pytest.mark.parametrize("raw", ["MAX_TOKENS", "SAFETY", "RECITATION", "OTHER", "MALFORMED_FUNCTION_CALL"])
def test_an_invalid_response_is_asked_again_three_times_then_the_run_fails(gc: Predicate, raw: str) -> None:
    # L332647-332679 throw; MID_STREAM_RETRY_OPTIONS.maxAttempts 4 (L331736-331741)
    cell = run(gc, g(raw), then="repeat")
    assert path(cell) == [("resend", "invalid-retry")] * 3 + [("stop", "invalid-stop")]
    assert (cell.reason, cell.ok) == ("invalid_stream", False)


@pytest.mark.parametrize("raw", ["MAX_TOKENS", "SAFETY", "LANGUAGE", "TOO_MANY_TOOL_CALLS"])
def test_a_response_with_text_ends_the_run_as_a_success_whatever_its_finish(gc: Predicate, raw: str) -> None:
    cell = run(gc, g(raw, "half an answer"))
    assert (cell.reason, cell.ok, cell.n_steps) == ("no_tool_calls", True, 1)


def test_malformed_call_is_invalid_even_with_text(gc: Predicate) -> None:
    cell = run(gc, g("MALFORMED_FUNCTION_CALL", "let me call"), g("STOP", "done"))
    assert path(cell) == [("resend", "invalid-retry"), ("stop", "answer")]


def test_an_empty_stop_after_tool_results_is_a_success_but_not_after_the_prompt(gc: Predicate) -> None:
    # NO_RESPONSE_TEXT only when the request was no function response (L332674-332676)
    after_tools = run(gc, g("STOP", None, fc()), g("STOP", ""))
    assert (after_tools.reason, after_tools.ok) == ("no_tool_calls", True)
    first = run(gc, g("STOP", ""), then="repeat")
    assert path(first) == [("remind", "invalid-nudge"), ("resend", "invalid-retry"), ("resend", "invalid-retry"),
                           ("stop", "invalid-stop")]


def test_no_finish_reason_is_invalid_only_when_the_request_was_no_function_response(gc: Predicate) -> None:
    assert path(run(gc, g(None, "text"), g("STOP", "done")))[0] == ("resend", "invalid-retry")
    assert path(run(gc, g("STOP", None, fc()), g(None, "text")))[1] == ("stop", "answer")


def test_thoughts_only_gets_the_thoughts_nudge(gc: Predicate) -> None:
    cell = run(gc, g("STOP", None, fc()), g("STOP", None, reasoning="hmm"), g("STOP", "done"))
    assert path(cell)[1] == ("remind", "invalid-nudge")
    assert "thoughts" in (cell.steps[1].decision.message or "")


def test_a_retryable_http_error_is_retried_to_ten_attempts(gc: Predicate) -> None:
    # retryWithBackoff: 429/499/5xx, maxAttempts 10 (L308010-308185, L379137)
    cell = run(gc, err("server_error", 500), then="repeat")
    assert path(cell) == [("resend", "http-retry")] * 9 + [("stop", "api-error")]
    assert run(gc, err("rate_limit", 429), g("STOP", "done")).ok is True


@pytest.mark.parametrize(("kind", "status"), [("invalid_request", 400), ("not_found", 404), ("authentication", 401),
                                              ("context_overflow", 400), ("timeout", 408)])
def test_any_other_http_error_ends_the_run_at_once(gc: Predicate, kind: ErrorKind, status: int) -> None:
    cell = run(gc, err(kind, status), g("STOP", "done"))
    assert path(cell) == [("stop", "api-error")] and cell.ok is False


def test_an_error_inside_the_stream_shares_the_four_mid_stream_attempts(gc: Predicate) -> None:
    # the SDK throws the in-stream code (L267627-267640), retried mid-stream (L332119-332140)
    cell = run(gc, err("server_error", 500, content="partial"), then="repeat")
    assert path(cell) == [("resend", "stream-error-retry")] * 3 + [("stop", "api-error")]


def test_five_identical_calls_in_a_row_get_the_loop_feedback_and_the_sixth_ends_the_run(gc: Predicate) -> None:
    # TOOL_CALL_LOOP_THRESHOLD 5 (L342233), _recoverFromLoop (L346954-346962), clearDetection keeps history
    cell = run(gc, g("STOP", None, fc()), then="repeat")
    assert path(cell) == [("continue", "calls")] * 4 + [("remind", "loop-recover"), ("stop", "loop-stop")]
    assert (cell.reason, cell.ok) == ("loop_detected", True)


def test_a_sequence_of_another_dialect_is_read_as_served_on_gemini(gc: Predicate) -> None:
    # a tool-call finish is STOP with parts; an unknown finish is served as OTHER (invalid when empty)
    calls = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(fc(),))
    assert path(run(gc, calls, g("STOP", "ok"), dialect="openai-chat"))[0] == ("continue", "calls")
    unknown = Turn(finish="unknown", finish_raw="pause_turn", content=None)
    assert path(run(gc, unknown, then="repeat", dialect="anthropic"))[-1] == ("stop", "invalid-stop")


def test_the_loop_has_no_cap(gc: Predicate) -> None:
    # maxSessionTurns -1 (L379033): distinct calls forever are capped by the bench, not the loop
    turns = [g("STOP", None, fc("read_file", f'{{"path": "{i}"}}')) for i in range(250)]
    assert run(gc, *turns).outcome == "capped"
