"""pydantic-ai Agent.run (predicates/pydantic_ai.py) against the pinned release: PyPI pydantic-ai-slim==2.68.0
(pydantic_ai/_agent_graph.py, tool_manager.py, usage.py, models/_continuation.py), openai==3.57.0 and
anthropic==2.14.0 for the client retries."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def pa() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "pydantic_ai.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def test_a_reply_with_nothing_to_act_on_is_asked_again_once(pa: Predicate) -> None:
    # _agent_graph.py L4021-4046: a retry prompt, consuming the output budget of 1; the second raises (L851-870)
    empty = Turn(finish="stop", finish_raw="stop", content="")
    cell = run(pa, empty, empty, answer())
    assert [s.decision.action for s in cell.steps] == ["remind", "stop"]
    assert (cell.reason, cell.ok) == ("UnexpectedModelBehavior", False)
    recovered = run(pa, empty, answer())
    assert (recovered.reason, recovered.ok, recovered.n_steps) == ("output", True, 2)


def test_an_empty_reply_cut_by_length_or_filtered_raises_at_once(pa: Predicate) -> None:
    # L3909-3921: OutputTokenLimitExceeded / ContentFilterError, no retry
    cut = run(pa, Turn(finish="length", finish_raw="length", reasoning="thinking"))
    filtered = run(pa, Turn(finish="content_filter", finish_raw="content_filter"))
    assert (cut.n_steps, cut.reason) == (1, "OutputTokenLimitExceeded")
    assert (filtered.n_steps, filtered.reason) == (1, "ContentFilterError")


def test_dropped_calls_are_an_empty_reply_not_an_answer(pa: Predicate) -> None:
    # finish_reason 'tool_calls' with no call: nothing actionable, the same no-output retry
    dropped = Turn(finish="tool_calls", finish_raw="tool_calls")
    cell = run(pa, dropped, dropped, dropped)
    assert [s.decision.action for s in cell.steps] == ["remind", "stop"]


def test_a_tool_that_fails_validation_twice_in_a_row_raises(pa: Predicate) -> None:
    # tool_manager.py L519-533: the step-start count against max_retries 1; L436-447 carries it over
    bad = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("write_file", 0, '{"path": "a'),))
    cell = run(pa, bad, bad, answer())
    assert [s.decision.action for s in cell.steps] == ["continue", "stop"]
    assert (cell.steps[0].tools_failed, cell.reason) == (("write_file",), "UnexpectedModelBehavior")
    # a success of that tool in between starts its count over
    good = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("write_file", 1, '{"path": "a"}'),))
    again = run(pa, bad, good, bad, answer())
    assert [s.decision.action for s in again.steps] == ["continue", "continue", "continue", "stop"]
    assert again.reason == "output"


def test_a_blank_tool_name_is_an_unknown_tool_retry(pa: Predicate) -> None:
    # tool_manager.py L808-825: 'Unknown tool name', charged to the default budget
    turn = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(ToolCall(id="c1", name="", arguments="{}"),))
    cell = run(pa, turn, answer())
    assert (cell.steps[0].decision.action, cell.steps[0].tools_failed) == ("continue", ("",))


def test_the_fiftieth_request_is_the_last(pa: Predicate) -> None:
    # usage.py L559, L631-637: the 51st request is refused before it is made; retries do not count
    cell = run(pa, tools("read_file"), then="repeat")
    assert (cell.n_steps, cell.reason, cell.ok) == (50, "UsageLimitExceeded", False)
    assert cell.steps[-1].tools_run == ("read_file",)
    err = Turn(finish="error", error=TurnError(kind="rate_limit", status=429))
    retried = run(pa, err, *[tools("read_file")] * 60, then="repeat")
    assert (retried.n_steps, retried.reason) == (51, "UsageLimitExceeded")


def test_the_client_retries_twice_then_the_error_leaves_run(pa: Predicate) -> None:
    err = Turn(finish="error", error=TurnError(kind="server_error", status=500))
    cell = run(pa, err, then="repeat")
    assert [s.decision.action for s in cell.steps] == ["resend", "resend", "stop"]
    assert (cell.reason, cell.ok) == ("ModelAPIError", False)


def test_pause_turn_is_continued_ten_times_then_raises(pa: Predicate) -> None:
    # models/_continuation.py L92 MAX_GENERATION_CONTINUATIONS = 10; the segments are merged
    paused = Turn(finish="unknown", finish_raw="pause_turn", content="Searching...")
    once = run(pa, paused, Turn(finish="stop", finish_raw="end_turn", content=""), dialect="anthropic")
    assert [s.decision.action for s in once.steps] == ["continue", "stop"] and once.reason == "output"
    stuck = run(pa, paused, then="repeat", dialect="anthropic")
    assert (stuck.n_steps, stuck.reason) == (11, "UnexpectedModelBehavior")


def test_a_cut_call_that_exhausts_its_budget_raises_incomplete_tool_call(pa: Predicate) -> None:
    # _tool_execution.py L764-767 -> check_incomplete_tool_call (_agent_graph.py L830-845); found by driving
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", 0, '{"path": "a'),))
    cell = run(pa, cut, cut, answer())
    assert (cell.n_steps, cell.reason) == (2, "IncompleteToolCall")
    bad = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("write_file", 0, '{"path": "a'),))
    assert run(pa, bad, bad, answer()).reason == "UnexpectedModelBehavior"


def test_a_chat_refusal_raises_content_filter_error_whatever_the_message_carries(pa: Predicate) -> None:
    # _chat_model.py L658-675: message.refusal -> no parts, finish 'content_filter' -> ContentFilterError
    refused = Turn(finish="stop", finish_raw="stop", content="I can't help with that.", refusal="I can't help.")
    assert run(pa, refused).reason == "ContentFilterError"
    # on Anthropic the refusal is a stop_reason: text beside it is still the output
    assert run(pa, replace(refused, finish_raw="end_turn"), dialect="anthropic").reason == "output"
