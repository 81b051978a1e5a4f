"""Gemini generateContent, whole and streamed. Expected values were read from the captures."""

from __future__ import annotations

from pathlib import Path

import orjson

from bench.engine.model import ToolCall, Usage
from bench.importers import import_capture
from bench.wires.gemini.capture import parse_path
from tests.importers.conftest import capture


def test_safety_with_empty_content() -> None:
    (t,) = capture("pydantic-ai/test_google_model_safety_settings.yaml").turns
    assert t.turn.finish == "content_filter" and t.turn.finish_raw == "SAFETY"
    assert t.turn.content is None
    assert t.meta["id"] == "5lpeaLOIBf__698Pv8HGgAg"


def test_max_tokens_with_no_parts_counts_thoughts_as_output() -> None:
    (t,) = capture("pydantic-ai/test_google_model_max_tokens_thinking_model_empty_response.yaml").turns
    assert t.turn.finish == "length" and t.turn.finish_raw == "MAX_TOKENS"
    assert t.turn.content is None and t.turn.tool_calls == ()
    assert t.turn.usage == Usage(15, 2)


def test_blocked_prompt_without_candidates_sent_no_finish() -> None:
    r = capture("pydantic-ai/test_google_model_armor_prompt_template_text_gets_blocked.yaml")
    (t,) = r.turns
    assert t.turn.finish_raw is None and t.turn.finish == "unknown"
    assert t.turn.finish_detail is not None and "MODEL_ARMOR" in t.turn.finish_detail
    assert "Prompt Injection and Jailbreak" in t.turn.finish_detail
    assert len(r.skipped) == 1 and "oauth2.googleapis.com/token" in r.skipped[0]


def test_function_call_with_stop_then_a_second_provider_is_a_second_run() -> None:
    r = capture("pydantic-ai/test_multiple_agent_tool_calls.yaml")
    gemini_run, chat_run = r.runs()
    assert [t.dialect for t in gemini_run] == ["gemini", "gemini"]
    assert gemini_run[0].turn.finish_raw == "STOP" and gemini_run[0].turn.finish == "stop"
    assert gemini_run[0].turn.tool_calls == (ToolCall("", "get_capital", '{"country":"France"}'),)
    assert gemini_run[1].turn.content == "The capital of France is Paris.\n"
    assert [t.dialect for t in chat_run] == ["openai-chat", "openai-chat"]
    assert chat_run[0].turn.tool_calls == (ToolCall("call_SkEQ3ZGSJC8m6AvaIGNuuKdm", "get_capital",
                                                    '{"country":"England"}'),)


def test_partial_args_assemble_into_the_arguments_object() -> None:
    r = capture("vercel-ai/google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt")
    (t,) = r.turns
    (call,) = t.turn.tool_calls
    assert call.name == "writeItems"
    assert orjson.loads(call.arguments) == {"operations": [
        {"action": "add", "description": "Fresh red apple", "itemid": "apple_001", "price": 0.5},
        {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3},
    ]}
    assert t.turn.finish_raw == "STOP"
    assert t.meta["id"] == "3noMaojQL_2s6tkPiO26qQ4"
    assert not any("willContinue" in n for n in r.notes)  # the last args chunk closes the call


def test_json_array_stream() -> None:
    (t,) = capture("constructed/gemini-stream-array.json").turns
    assert t.turn.content == "Looking it up."
    assert t.turn.tool_calls == (ToolCall("", "lookup", '{"q":"weather","days":2}'),)
    assert t.turn.usage == Usage(7, 9)


def test_json_path_parsing() -> None:
    assert parse_path("$.operations[0].action") == ["operations", 0, "action"]
    assert parse_path("$['a b'][2]") == ["a b", 2]


def test_sse_stream_with_alt_sse_framing(tmp_path: Path) -> None:
    # constructed: streamGenerateContent?alt=sse frames, text in two chunks, MAX_TOKENS at the end
    path = tmp_path / "gemini.sse"
    path.write_text(
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Par"}]},"index":0}],'
        '"modelVersion":"gemini-test","responseId":"r1"}\r\n\r\n'
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"tial"}]},"finishReason":"MAX_TOKENS",'
        '"index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2},"modelVersion":"gemini-test",'
        '"responseId":"r1"}\r\n\r\n')
    (t,) = import_capture(path).turns
    assert (t.dialect, t.turn.finish, t.turn.content, t.turn.usage) == ("gemini", "length", "Partial", Usage(4, 2))
