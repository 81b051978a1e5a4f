"""Codex's turn loop (predicates/codex.py) as @openai/codex 0.169.0 does it: the released binary's strings
and the driven original, with the loop's structure from turn.rs @ 553376ff, stream_events_utils.rs
@ 010ccb0c, sse/responses.rs @ 0a7fb0d7 (openai/codex)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
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


def test_truncation_fails_the_turn_at_once(codex: Predicate) -> None:
    # 0.169.0: response.incomplete (max_output_tokens) -> "Incomplete response returned, reason: ...",
    # not retried (bin/codex @380429; the driven original stopped at the cut-off turn)
    cell = run(codex, truncated(), then="repeat")
    assert actions(cell) == ["stop incomplete-response"]
    assert (cell.reason, cell.ok) == ("error", False)


def test_content_filter_is_retried_five_times_with_guidance(codex: Predicate) -> None:
    # 0.169.0: a retryable stream error with a <content_filter_guidance> message added before each retry
    filtered = Turn(finish="content_filter", finish_raw="content_filter")
    cell = run(codex, filtered, then="repeat")
    assert actions(cell) == ["remind content-filter-retry"] * 5 + ["stop stream-retry-exhausted"]
    assert "blocked by a content filter" in cell.steps[0].decision.message
    assert (cell.reason, cell.ok, cell.reminders) == ("stream_error", False, 5)


def test_a_dropped_stream_is_retried_five_times(codex: Predicate) -> None:
    # run_sampling_request: retries < stream_max_retries (5) -> retry; then Err -> run_turn breaks
    dropped = Turn(finish="error", error=TurnError("connection_reset", message="connection closed"))
    cell = run(codex, dropped, then="repeat")
    assert actions(cell) == ["resend stream-retry"] * 5 + ["stop stream-retry-exhausted"]
    assert cell.reason == "stream_error"


def test_a_5xx_gets_four_request_retries_per_stream_attempt(codex: Predicate) -> None:
    # default request_max_retries 4 inside each of the 1 + 5 stream attempts: 30 requests in all
    err = Turn(finish="error", error=TurnError("server_error", status=500))
    cell = run(codex, err, then="repeat")
    attempt = ["resend request-retry"] * 4
    assert actions(cell) == [*attempt, "resend stream-retry"] * 5 + attempt + ["stop stream-retry-exhausted"]
    assert cell.n_steps == 30


def test_a_rate_limit_is_not_retried(codex: Predicate) -> None:
    # 0.169.0: "exceeded retry limit, last status: 429" (RetryLimit), not retryable; 429 is not a
    # status the transport re-sends
    limited = Turn(finish="error", error=TurnError("rate_limit", status=429, code="rate_limit_error"))
    cell = run(codex, limited, tools("ls"), answer())
    assert actions(cell) == ["stop rate-limit"] and (cell.reason, cell.ok) == ("error", False)


def test_a_completed_response_resets_the_retry_budget(codex: Predicate) -> None:
    # `retries` is a local of run_sampling_request, which run_turn calls afresh per request
    dropped = Turn(finish="error", error=TurnError("connection_reset"))
    cell = run(codex, *([dropped] * 5), tools("ls"), *([dropped] * 5), answer())
    assert cell.reason == "turn_complete" and cell.resends == 10


def test_finish_strings_are_never_read(codex: Predicate) -> None:
    # only function_call items and end_turn decide: a "tool_calls" finish with no item ends the turn
    dropped = Turn(finish="tool_calls", finish_raw="tool_calls")
    assert run(codex, dropped).reason == "turn_complete"
    stop_with_call = Turn(finish="stop", finish_raw="stop", tool_calls=(call("read_file"),))
    assert actions(run(codex, stop_with_call, answer())) == ["continue tool-follow-up", "stop no-follow-up"]


def test_calls_done_before_a_stream_error_still_run(codex: Predicate) -> None:
    # drain_in_flight runs after try_run_sampling_request's event loop whatever the outcome
    failed = Turn(finish="error", finish_raw="error", tool_calls=(call("read_file"),))
    cell = run(codex, failed, answer())
    # the retried request carries the call and its output: a continue, not a resend (driven: 0.169.0)
    assert actions(cell)[0] == "continue stream-retry" and cell.tools_run == ("read_file",)


def test_a_stream_with_no_finish_is_retried_carrying_its_output(codex: Predicate) -> None:
    # no terminal event: 'stream closed before response.completed', retried (driven: chat-finish-null-intent)
    said = Turn(finish="unknown", finish_raw=None, content="I'll check the config first.")
    assert actions(run(codex, said, answer())) == ["continue stream-retry", "stop no-follow-up"]
    nothing = Turn(finish="unknown", finish_raw=None)
    assert actions(run(codex, nothing, answer())) == ["resend stream-retry", "stop no-follow-up"]


def test_an_error_after_output_is_a_stream_retry_whatever_its_status(codex: Predicate) -> None:
    # once output streamed the status is 200: a 400 arrives as an error event, which 0.169.0 does
    # not end the response on (driven: rec-openrouter-length-then-stream-error)
    after = Turn(finish="error", reasoning="thinking", content="", error=TurnError("invalid_request", status=400))
    assert actions(run(codex, after, answer())) == ["continue stream-retry", "stop no-follow-up"]
    before = Turn(finish="error", error=TurnError("invalid_request", status=400))
    assert actions(run(codex, before, answer())) == ["stop fatal-error"]
    event = Turn(finish="error", error=TurnError("stream_error", status=400))
    assert actions(run(codex, event, answer())) == ["resend stream-retry", "stop no-follow-up"]


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


def test_a_blank_name_is_an_unsupported_call_and_a_json_string_runs(codex: Predicate) -> None:
    # registry.rs dispatch_any: no handler -> "unsupported call: " (bin/codex @659030), failed;
    # dynamic.rs: the arguments are parsed into a serde_json::Value, so a JSON string is sent as is
    turn = Turn(finish="tool_calls", tool_calls=(call("", 0), call("bash", 1, '"{\\"command\\": \\"ls\\"}"')))
    cell = run(codex, turn, answer())
    first = cell.steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (1,), (0,))


def test_a_status_other_than_400_429_or_5xx_is_a_stream_retry_without_request_retries(codex: Predicate) -> None:
    # api_bridge.rs map_api_error: 400 -> InvalidRequest (fatal), any other status but 429/500 ->
    # UnexpectedStatus, retryable (error.rs is_retryable); driven: 408 and 409 each re-sent once
    for kind, status in (("timeout", 408), ("overloaded", 409), ("permission", 403), ("not_found", 404)):
        err = Turn(finish="error", error=TurnError(kind, status=status))  # type: ignore[arg-type]
        assert actions(run(codex, err, answer())) == ["resend stream-retry", "stop no-follow-up"], status
    for kind, status in (("invalid_request", 400), ("authentication", 401)):
        err = Turn(finish="error", error=TurnError(kind, status=status))  # type: ignore[arg-type]
        assert actions(run(codex, err, answer())) == ["stop fatal-error"], status


def test_a_turn_that_fails_after_a_stream_retry_ends_as_stream_error(codex: Predicate) -> None:
    # the app-server's failed turn after an `error` notification with willRetry (driven 0.169.0 on
    # chat-transient-errors-after-tools: 408, 409 re-sent, then the 429 -> stream_error)
    conflict = Turn(finish="error", error=TurnError("overloaded", status=409))
    limited = Turn(finish="error", error=TurnError("rate_limit", status=429))
    cell = run(codex, tools("ls"), conflict, limited, answer())
    assert actions(cell)[-1] == "stop rate-limit" and (cell.reason, cell.ok) == ("stream_error", False)
    assert run(codex, tools("ls"), limited, answer()).reason == "error"


def test_input_steered_during_a_tool_call_response_goes_out_with_the_outputs(codex: Predicate) -> None:
    # the queued input is drained into the follow-up that carries the tools' outputs (driven 0.169.0 on
    # chat-steer-with-tool-calls when the steer arrived in time: call_1's output and the user message)
    steered = replace(tools("run_tests"), steer="only the unit tests")
    cell = run(codex, steered, tools("run_tests"), answer())
    assert actions(cell) == ["remind steer", "continue tool-follow-up", "stop no-follow-up"]
    assert cell.steps[0].tools_run == ("run_tests",)
