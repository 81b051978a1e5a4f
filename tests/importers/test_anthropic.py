"""Anthropic Messages, whole and streamed. Expected values were read from the captures."""

from __future__ import annotations

import orjson

from bench.engine.model import ToolCall, Usage
from tests.importers.conftest import capture


def test_four_parallel_tool_use_blocks_with_input_as_json() -> None:
    r = capture("pydantic-ai/test_multiple_parallel_tool_calls.yaml")
    first, second = (t.turn for t in r.turns)
    assert first.finish == "tool_calls" and first.finish_raw == "tool_use"
    assert [c.id for c in first.tool_calls] == ["toolu_0167cfEnoQaPviGdVXA95zcu", "toolu_01EEe2V5HD1Ac4rKiUR4HD2T",
                                                "toolu_01XFyAjstT3966qvRynZyVPo", "toolu_013mnQZbgtK2oe3Mo3XKJsx3"]
    assert [orjson.loads(c.arguments)["name"] for c in first.tool_calls] == ["Alice", "Bob", "Charlie", "Daisy"]
    assert {c.name for c in first.tool_calls} == {"retrieve_entity_info"}
    assert first.content is not None and first.content.startswith("I'll help you find out who is the youngest")
    assert first.usage == Usage(423, 202)
    assert second.finish_raw == "end_turn" and second.content is not None
    assert "Daisy is the youngest" in second.content
    assert len(r.runs()) == 1  # the second request carries the first exchange


def test_pause_turn_then_end_turn_server_tools_are_not_tool_calls() -> None:
    r = capture("pydantic-ai/test_pause_turn_web_search_vcr.excerpt.yaml")
    first, second = r.turns
    assert first.turn.finish_raw == "pause_turn" and first.turn.finish == "unknown"
    assert first.turn.tool_calls == ()
    assert first.meta["id"] == "msg_01WUxwtx6NsdkWnEyL8BMy1q"
    assert first.turn.usage == Usage(401468, 792)
    assert first.turn.content is not None
    assert first.turn.content.startswith("I'll run these searches for you one at a time. Let me begin:")
    assert second.turn.finish_raw == "end_turn"
    assert second.meta["id"] == "msg_01B8TcC6Ns8V46ZRAgLzKenY"
    assert second.turn.content is not None and second.turn.content.endswith(
        "All searches have been successfully completed with up-to-date information from February 2026.")
    assert len(r.runs()) == 1
    assert any("server tool call" in n for n in r.notes)


def test_refusal_json_keeps_stop_details() -> None:
    r = capture("vercel-ai/anthropic-refusal.json")
    (t,) = r.turns
    assert t.turn.finish == "content_filter" and t.turn.finish_raw == "refusal"
    assert t.turn.content is None
    assert t.turn.finish_detail is not None
    assert orjson.loads(t.turn.finish_detail)["category"] == "cyber"
    assert t.turn.usage == Usage(18, 5)


def test_refusal_stream_stop_reason_from_message_delta() -> None:
    r = capture("vercel-ai/anthropic-refusal.chunks.txt")
    (t,) = r.turns
    assert t.turn.finish_raw == "refusal" and t.turn.content is None and t.turn.tool_calls == ()
    assert t.turn.finish_detail is not None
    assert orjson.loads(t.turn.finish_detail)["recommended_model"] == "claude-fable-5"
    assert t.turn.usage == Usage(18, 5)
    assert t.meta["id"] == "msg_01RefusalStreamAbcdefghijk"


def test_spliced_message_start_keeps_the_second_message_and_notes_the_first() -> None:
    r = capture("vercel-ai/spliced-message-start.chunks.txt")
    (t,) = r.turns
    assert t.turn.tool_calls == (ToolCall("toolu_second", "test-tool", '{"value":"Sparkle Day"}'),)
    assert t.turn.reasoning == "Let me call the tool."
    assert t.turn.finish_raw == "tool_use"
    assert t.meta["id"] == "msg_second"
    assert any("msg_first" in n and "Spark" in n for n in r.notes)


def test_error_event_mid_stream_is_a_stream_error_turn_keeping_the_providers_code() -> None:
    r = capture("constructed/anthropic-error-event.sse")
    (t,) = r.turns
    assert t.turn.finish == "error"
    assert t.turn.error is not None
    assert (t.turn.error.kind, t.turn.error.code, t.turn.error.status) == ("stream_error", "overloaded_error", None)
    assert t.turn.content == "Partial"


def test_same_request_twice_is_two_runs() -> None:
    r = capture("crewAI/test_anthropic_async_with_max_tokens.yaml")
    runs = r.runs()
    assert [len(run) for run in runs] == [1, 1]
    assert runs[0][0].turn.content == "# The Last Song of Vaelthys"
    assert runs[1][0].turn.content == "# The Last Song of Thalassion"
    assert {run[0].turn.finish for run in runs} == {"length"}


def test_http_error_in_a_cassette_is_an_error_turn_and_its_retry_stays_in_the_run() -> None:
    r = capture("constructed/cassette-429-then-answer.yaml")
    first, second, third = (t.turn for t in r.turns)
    assert first.finish == "error" and first.error is not None
    assert (first.error.kind, first.error.code, first.error.status) == ("rate_limit", "rate_limit_error", 429)
    assert second.finish_raw == "end_turn" and second.content == "Hello!"
    assert third.error is not None and (third.error.kind, third.error.status) == ("server_error", 503)
    assert "upstream connect error" in third.error.message
    assert [len(run) for run in r.runs()] == [2, 1]  # the retry after 429 continues; the resend after an answer not
    assert [len(run) for run in r.runs(split=False)] == [3]
