"""OpenAI Chat Completions, whole and streamed, on real captures.

Every expected value was read from the capture itself (tests/importers/data/, see PROVENANCE.md
there), not from the importer's output.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson

from bench.engine.model import ToolCall, Usage
from bench.importers import import_capture
from tests.importers.conftest import capture


def test_json_tool_call_with_empty_id_then_answer() -> None:
    # pydantic-ai test_compatible_api_with_tool_calls_without_id: `id: ''`, finish_reason tool_calls
    r = capture("pydantic-ai/test_compatible_api_with_tool_calls_without_id.yaml")
    first, second = (t.turn for t in r.turns)
    assert first.finish == "tool_calls" and first.finish_raw == "tool_calls"
    assert first.tool_calls == (ToolCall("", "get_current_time", "{}"),)
    assert first.content is None
    assert first.usage == Usage(35, 12)
    assert second.finish_raw == "stop" and second.content == "The current time is Noon."
    assert r.turns[0].meta["id"] == "3SE-aKjdCcCEz7IPxpqjCA"
    assert r.turns[0].meta["model"] == "gemini-2.5-pro-preview-05-06"


def test_stream_without_any_finish_reason_is_unknown_with_raw_none() -> None:
    # llm variant_a: tool-call deltas repeat id "0" and name, arguments "" then "{}"; no finish_reason
    r = capture("llm/test_tools_streaming_variant_a.yaml")
    first = r.turns[0].turn
    assert first.finish_raw is None and first.finish == "unknown"
    assert first.tool_calls == (ToolCall("0", "llm_version", "{}"),)
    assert first.content == ""  # the first delta carries content ""
    assert first.usage == Usage(57, 17)  # from the usage-only chunk
    assert r.turns[0].meta["provider"] == "Novita"
    second = r.turns[1].turn
    assert second.finish_raw == "stop"
    assert second.content == "The current version of *llm* is **0.fixed-version**."
    assert r.turns[1].meta["provider"] == "Moonshot AI"
    assert any("no chunk carried a finish_reason" in n for n in r.notes)


def test_continuation_delta_without_id_or_name_and_first_without_arguments() -> None:
    r = capture("llm/test_tools_streaming_variant_c.yaml")
    first = r.turns[0].turn
    assert first.tool_calls == (ToolCall("llm_version:0", "llm_version", "{}"),)
    assert first.finish == "tool_calls"


def test_arguments_null_gives_an_empty_raw_string() -> None:
    r = capture("llm/test_tools_streaming_variant_d.yaml")
    first = r.turns[0].turn
    assert first.tool_calls == (ToolCall("0", "llm_version", ""),)
    assert first.finish_raw == "tool_calls"
    assert any("never received an arguments string" in n for n in r.notes)


def test_tool_index_starting_at_one_and_finish_in_its_own_chunk() -> None:
    r = capture("vercel-ai/anthropic-fallback-tool-call.sse")
    (t,) = r.turns
    assert t.turn.content == "Reading it."
    assert t.turn.tool_calls == (ToolCall("toolu_sanitized", "read_file", '{"path": "a.txt"}'),)
    assert t.turn.finish_raw == "tool_calls"
    assert t.meta["model"] == "claude-haiku-4-5-20251001"
    assert "created" not in t.meta  # created: 0 is not a date
    assert any("indices start at 1" in n for n in r.notes)


def test_json_lines_stream_without_done_with_reasoning_and_finish_in_usage_chunk() -> None:
    r = capture("vercel-ai/deepseek-tool-call.chunks.txt")
    (t,) = r.turns
    assert t.turn.tool_calls == (ToolCall("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather",
                                          '{"location": "San Francisco"}'),)
    assert t.turn.finish_raw == "tool_calls"
    assert t.turn.usage == Usage(339, 83)
    assert t.turn.reasoning is not None
    assert t.turn.reasoning.startswith("The user is asking for the weather in San Francisco.")
    assert any("without [DONE]" in n for n in r.notes)


def test_error_chunk_after_length_makes_an_error_turn_and_keeps_the_finish_in_detail() -> None:
    # keep-alive comments, finish_reason "length" twice, then {"error":{"code":400,...}}, then [DONE]
    r = capture("pydantic-ai/test_openrouter_stream_error.yaml")
    (t,) = r.turns
    assert t.turn.finish == "error" and t.turn.finish_raw is None
    assert t.turn.error is not None
    assert t.turn.error.message == "Token limit reached" and t.turn.error.status == 400
    assert t.turn.finish_detail is not None and "'length'" in t.turn.finish_detail
    assert t.turn.reasoning == "We need to respond to a greeting. The user"
    assert t.turn.usage == Usage(43, 10)


def test_json_length_with_text_cut_mid_sentence() -> None:
    r = capture("vercel-ai/deepseek-text.json")
    (t,) = r.turns
    assert t.turn.finish == "length"
    assert t.turn.content is not None and t.turn.content.endswith("Instead of lavish presents, people exchange")
    assert t.turn.usage == Usage(13, 300)
    assert t.meta["id"] == "00f10ecd-60b3-4707-b5db-e4bcadf7aea1"


def test_empty_tool_calls_list_is_no_tool_calls() -> None:
    r = capture("pydantic-ai/test_max_completion_tokens.yaml")
    (t,) = r.turns
    assert t.turn.finish == "length" and t.turn.tool_calls == ()
    assert t.turn.content is not None and t.turn.content.startswith("<think>\n")


def test_vcr_body_string_json() -> None:
    r = capture("crewAI/test_openai_async_with_max_tokens.yaml")
    (t,) = r.turns
    assert t.turn.finish_raw == "length"
    assert t.turn.content == "**Title: The Last Ember of Eldoria**\n\n"
    assert t.turn.usage == Usage(16, 10)
    assert t.meta["date"] == "Mon, 01 Dec 2025 06:15:36 GMT"


def test_usage_only_last_chunk_with_empty_choices_and_no_done(tmp_path: Path) -> None:
    # constructed: finish in its own empty-delta chunk, then a usage chunk with `choices: []`, no [DONE]
    path = tmp_path / "usage-last.sse"
    path.write_text(
        ': keep-alive\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
        '"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
        '"finish_reason":"stop"}]}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[],'
        '"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\n')
    r = import_capture(path)
    (t,) = r.turns
    assert (t.turn.finish_raw, t.turn.content, t.turn.usage) == ("stop", "ok", Usage(3, 1))
    assert r.unknown == Counter()
    assert "stream ended without [DONE]" in r.notes


def test_a_streamed_filter_result_that_filtered_is_not_overwritten_by_a_later_safe_one() -> None:
    """Azure sends content_filter_results per chunk; the turn keeps, per category, the last result,
    except that one with ``filtered: true`` stays (the finish says why)."""
    from bench.wires.openai_chat.capture import StreamAssembler
    asm = StreamAssembler(Counter())
    for results, finish in (({"hate": {"filtered": True, "severity": "high"}}, None),
                            ({"hate": {"filtered": False, "severity": "safe"},
                              "violence": {"filtered": False, "severity": "low"}}, "content_filter")):
        asm.feed({"object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": {}, "content_filter_results": results, "finish_reason": finish}]})
    detail = asm.finish().turn.finish_detail
    assert detail is not None
    assert orjson.loads(detail.removeprefix("content_filter_results: ")) == {
        "hate": {"filtered": True, "severity": "high"}, "violence": {"filtered": False, "severity": "low"}}
