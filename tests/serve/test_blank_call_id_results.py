"""A call served without an id (a Gemini OpenAI-compatible endpoint sends ``"id": ""``) can only be
answered under an id the client makes up: Semantic Kernel 1.45.0 runs it and sends its result as
``tool_call_id: "unknown"`` (its FunctionResultContent's default), echoing the call with the blank
id. That result answers the blank-id call still open, in order; a result under an unknown id when
every served call had an id is still no call's."""

from __future__ import annotations

from typing import Any

from bench.engine.model import ToolCall, Turn
from bench.serve.observe import conversation, infer

USER: dict[str, Any] = {"role": "user", "content": "what time is it?"}


def turn(*ids: str) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=tuple(ToolCall(i, "get_current_time", "{}") for i in ids))


def follow_up(echo_ids: list[str], result_ids: list[str]) -> dict[str, Any]:
    echo = {"role": "assistant", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "get_current_time", "arguments": "{}"}} for i in echo_ids]}
    results = [{"role": "tool", "tool_call_id": i, "content": "Noon"} for i in result_ids]
    return {"messages": [USER, echo, *results]}


def test_a_result_under_a_made_up_id_answers_the_call_served_without_one() -> None:
    inferred = infer(conversation("openai-chat", {"messages": [USER]}), turn(""), "r1",
                     conversation("openai-chat", follow_up([""], ["unknown"])))
    assert (inferred.action, inferred.run) == ("continue", (0,))
    assert "served without an id" in inferred.detail


def test_two_blank_id_calls_are_answered_in_order() -> None:
    inferred = infer(conversation("openai-chat", {"messages": [USER]}), turn("", ""), "r1",
                     conversation("openai-chat", follow_up(["", ""], ["x1", "x2"])))
    assert inferred.run == (0, 1)


def test_a_result_under_an_unknown_id_answers_no_call_that_had_an_id() -> None:
    inferred = infer(conversation("openai-chat", {"messages": [USER]}), turn("call_1"), "r1",
                     conversation("openai-chat", follow_up(["call_1"], ["unknown"])))
    assert inferred.run == () and "result for unknown call id 'unknown'" in inferred.detail
