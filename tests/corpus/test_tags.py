"""Edge-case tags are derived from the turns alone, the same way for every corpus source."""

from __future__ import annotations

import dataclasses

import pytest

from bench.corpus.tags import EDGE_TAGS, sequence_tags, turn_tags
from bench.engine.model import ToolCall, Turn, TurnError
from tests.helpers import answer, call, seq, tools, truncated


@pytest.mark.parametrize(("turn", "dialect", "tags"), [
    (answer(), "openai-chat", []),
    (tools("read_file"), "openai-chat", []),
    (truncated(), "openai-chat", ["truncation"]),
    (Turn("length", "length", tool_calls=(call("edit", 0, '{"path": "a'),)), "openai-chat", ["truncation", "cut-json"]),
    (Turn("content_filter", "content_filter", ""), "openai-chat", ["content-filter"]),
    (Turn("error", None, error=TurnError("rate_limit", status=429)), "openai-chat", ["error", "transient"]),
    (Turn("error", None, error=TurnError("context_overflow", status=400)), "openai-chat", ["error", "context-window"]),
    (Turn("unknown", None, "partial"), "openai-chat", ["unknown-finish", "missing-finish"]),
    (Turn("tool_calls", "tool_calls", ""), "openai-chat", ["dropped-calls"]),
    (Turn("stop", "stop", "ok", (call("grep"),)), "openai-chat", ["stop-with-calls"]),
    (Turn("stop", "completed", None, (call("grep"),)), "openai-responses", []),  # how that wire sends calls
    (Turn("stop", "stop", "  "), "openai-chat", ["empty-stop"]),
    (tools("a", "b"), "openai-chat", ["parallel"]),
    (Turn("tool_calls", "tool_calls", tool_calls=(ToolCall("x", "a"), ToolCall("x", "b"))), "openai-chat",
     ["parallel", "tool-call-id"]),
    (Turn("tool_calls", "tool_calls", tool_calls=(ToolCall("x", " "),)), "openai-chat", ["tool-call-name"]),
    (dataclasses.replace(answer(), reasoning="hmm", steer="also this"), "openai-chat", ["reasoning", "steer"]),
    (Turn("stop", "completed", "x", end_turn=False), "openai-responses", ["end-turn-false"]),
])
def test_each_edge_case_of_a_turn_gets_its_tag(turn: Turn, dialect: str, tags: list[str]) -> None:
    assert turn_tags(turn, dialect) == tags
    assert all(t in EDGE_TAGS for t in tags)


def test_a_sequence_has_the_union_of_its_turns_tags_in_a_fixed_order_or_normal() -> None:
    assert sequence_tags(seq(tools("a"), answer())) == ("normal",)
    assert sequence_tags(seq(Turn("tool_calls", "tool_calls", ""), truncated(), tools("a", "b"))) == (
        "truncation", "dropped-calls", "parallel")
