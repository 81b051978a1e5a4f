"""OpenCode's session loop (predicates/opencode.py) against the v1.18.32 release (npm
opencode-linux-x64@1.18.32 bin/opencode; offsets are cited in the predicate file)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ErrorKind, RequestChanges, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def oc() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "opencode.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def http(status: int, message: str = "", kind: ErrorKind = "server_error") -> Turn:
    return Turn(finish="error", error=TurnError(kind, message, status))


def test_unknown_finish_does_not_exit_at_the_pin_and_has_no_cap(oc: Predicate) -> None:
    # exit test @96801587: !["tool-calls","unknown"].includes(finish); agent.steps ?? Infinity
    cell = run(oc, Turn(finish="unknown", finish_raw="other"), then="repeat")
    assert cell.outcome == "capped"
    assert {s.decision.rule for s in cell.steps} == {"unknown-finish"}
    assert cell.resends == cell.n_steps


def test_a_turn_that_does_not_exit_is_echoed_when_it_has_text(oc: Predicate) -> None:
    # the stored assistant message goes into the next request: not the same request again (seen when
    # the original was driven against the replay server)
    cell = run(oc, Turn(finish="unknown", finish_raw="other", content="The answer."), answer())
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.run) == ("continue", "unknown-finish", ())
    assert cell.resends == 0


def test_a_broken_connection_is_retried(oc: Predicate) -> None:
    # handleFetchError @94935712: ConnectionClosed -> APICallError isRetryable, whatever the message
    cut = Turn(finish="error", error=TurnError("connection_reset", "peer closed connection (incomplete read)"))
    cell = run(oc, cut, then="repeat")
    assert [s.decision.rule for s in cell.steps] == ["connection-retry"] * 5 + ["retries-exhausted"]
    assert (cell.reason, cell.ok) == ("error", False)


def test_tool_calls_finish_without_parts_is_sent_again(oc: Predicate) -> None:
    cell = run(oc, Turn(finish="tool_calls", finish_raw="tool_calls"), tools("read_file"), answer())
    assert [s.decision.action for s in cell.steps] == ["resend", "continue", "stop"]
    assert (cell.reason, cell.ok) == ("exit", True)


def test_stop_with_tool_parts_keeps_going(oc: Predicate) -> None:
    # conjunct 3: a tool part blocks the exit whatever the finish
    with_calls = Turn(finish="stop", finish_raw="stop", tool_calls=(call("read_file"),))
    cell = run(oc, with_calls, answer())
    assert cell.steps[0].decision.rule == "tool-parts" and cell.tools_run == ("read_file",)


def test_content_filter_breaks_with_an_error_after_the_tools_ran(oc: Predicate) -> None:
    # @96804875: ContentFilterError is set and the loop breaks
    blocked = Turn(finish="content_filter", finish_raw="content_filter", tool_calls=(call("read_file"),))
    cell = run(oc, blocked, answer())
    assert (cell.n_steps, cell.reason, cell.ok, cell.tools_run) == (1, "content_filter", False, ("read_file",))


def test_a_length_reply_exits_like_stop(oc: Predicate) -> None:
    cell = run(oc, Turn(finish="length", finish_raw="length", content="cut"))
    assert (cell.reason, cell.ok) == ("exit", True)


def test_unparsable_arguments_are_answered_by_the_invalid_tool(oc: Predicate) -> None:
    # experimental_repairToolCall @96729657 -> the 'invalid' tool, an error result
    cut = Turn(finish="length", finish_raw="length",
               tool_calls=(call("write_file", 0, '{"path": "a'), call("read_file", 1, '{"path": "b"}')))
    cell = run(oc, cut, answer())
    assert cell.tools_failed == ("write_file",) and cell.tools_run == ("read_file",)


def test_five_retryable_errors_are_resent_and_the_sixth_stops(oc: Predicate) -> None:
    # RETRY_MAX_RETRIES = 5, attempt counted from 1: attempts 1-5 retry, attempt 6 is done
    cell = run(oc, http(500, "Internal Server Error"), then="repeat")
    assert [s.decision.action for s in cell.steps] == ["resend"] * 5 + ["stop"]
    assert (cell.reason, cell.ok) == ("error", False)


def test_the_retry_count_restarts_after_a_good_response(oc: Predicate) -> None:
    turns = [http(429)] * 5 + [tools("read_file")] + [http(503)] * 5 + [answer()]
    cell = run(oc, *turns)
    assert (cell.outcome, cell.reason, cell.ok, cell.resends) == ("stopped", "exit", True, 10)


def test_a_client_error_is_not_retried(oc: Predicate) -> None:
    cell = run(oc, http(400, "Token limit reached", "stream_error"), answer())
    assert (cell.n_steps, cell.steps[0].decision.rule, cell.ok) == (1, "error", False)


def test_a_connection_reset_mid_stream_is_retried(oc: Predicate) -> None:
    # "socket hang up" is one of SessionRetry's retryable messages: the kind they name, connection_reset
    cut = Turn(finish="error", error=TurnError("connection_reset", "socket hang up"))
    cell = run(oc, cut, answer())
    assert [s.decision.action for s in cell.steps] == ["resend", "stop"]


def test_a_context_overflow_goes_to_compaction(oc: Predicate) -> None:
    overflow = http(400, "prompt is too long: 210000 tokens > 200000 maximum", "context_overflow")
    summary = answer("Summary of the conversation so far.")
    cell = run(oc, overflow, summary, answer())
    assert [s.decision.rule for s in cell.steps] == ["context-overflow", "compaction-summary", "exit"]


def test_a_newer_user_message_keeps_the_loop_going(oc: Predicate) -> None:
    # conjunct 4: lastAssistant.parentID === lastUser.id fails once the steer arrived
    steered = Turn(finish="stop", finish_raw="stop", content="done", steer="also do X")
    cell = run(oc, steered, answer())
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.message) == ("remind", "newer-user", "also do X")


def test_gemini_malformed_function_call_exits_without_error(oc: Predicate) -> None:
    # @ai-sdk/google maps it to 'error'; no message.error is set, so the exit test passes
    cell = run(oc, Turn(finish="error", finish_raw="MALFORMED_FUNCTION_CALL"), dialect="gemini")
    assert (cell.reason, cell.ok) == ("exit", True)


def test_gemini_stop_with_a_function_call_runs_it(oc: Predicate) -> None:
    turn = Turn(finish="stop", finish_raw="STOP", tool_calls=(call("get_forecast"),))
    cell = run(oc, turn, Turn(finish="stop", finish_raw="STOP", content="sunny"), dialect="gemini")
    assert cell.tools_run == ("get_forecast",) and cell.reason == "exit"


def test_anthropic_refusal_is_a_content_filter(oc: Predicate) -> None:
    cell = run(oc, Turn(finish="content_filter", finish_raw="refusal"), dialect="anthropic")
    assert (cell.reason, cell.ok) == ("content_filter", False)


def test_a_blank_tool_name_is_repaired_into_the_invalid_tool(oc: Predicate) -> None:
    # parseToolCall throws NoSuchToolError (@99365478); experimental_repairToolCall (@96729657)
    # finds no lower-case tool either and answers through 'invalid': failed, the others run
    cell = run(oc, tools("", "read_file"), answer())
    first = cell.steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (1,), (0,))


def test_the_request_after_a_compaction_summary_is_compacted(oc: Predicate) -> None:
    # SessionCompaction.process adds 'Continue if you have next steps...'; run re-reads the messages
    # with filterCompactedEffect (bin/opencode @96801238): the summary stands in for the history
    overflow = Turn(finish="error", error=TurnError("context_overflow", status=400))
    cell = run(oc, tools("read_file"), overflow, answer("summary"), answer())
    assert [(s.decision.action, s.decision.rule, s.decision.changes) for s in cell.steps] == [
        ("continue", "tool-parts", None), ("remind", "context-overflow", None),
        ("remind", "compaction-summary", RequestChanges(compact=True)), ("stop", "exit", None)]
