"""Shapes that real captures showed the importers reading wrongly, each pinned on a real
capture from a repository not used before: openai/openai-python (recorded streams), traceloop/openllmetry
and Arize-ai/openinference (VCR cassettes). Provenance: tests/importers/data/PROVENANCE.md."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.importers import CaptureError, import_capture
from bench.wires.capture import iso_from_unix
from bench.wires.openai_chat.capture import StreamAssembler
from tests.importers.conftest import DATA, capture

REFUSAL_STREAM = "openai-python/173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin"
REFUSAL_STREAM_LOGPROBS = "openai-python/569c877e69429d4cbc1577d2cd6dd33878095c68badc6b6654a69769b391a1c1.bin"


@pytest.mark.parametrize(("rel", "text"), [
    (REFUSAL_STREAM, "I'm sorry, I can't assist with that request."),  # its eleven delta.refusal pieces
    (REFUSAL_STREAM_LOGPROBS, "I'm very sorry, but I can't assist with that."),
])
def test_a_streamed_refusal_with_finish_stop_keeps_its_pieces(rel: str, text: str) -> None:
    (t,) = capture(rel).turns
    assert (t.turn.finish, t.turn.finish_raw, t.turn.content) == ("stop", "stop", None)
    assert (t.turn.refusal, t.turn.finish_detail) == (text, None)


def test_a_non_streamed_refusal_with_finish_stop_is_kept_the_same_way() -> None:
    (t,) = capture("openllmetry/test_parsed_refused_completion.excerpt.yaml").turns
    assert (t.turn.finish, t.turn.content) == ("stop", None)
    text = "I'm very sorry, but I can't assist with that request."
    assert (t.turn.refusal, t.turn.finish_detail) == (text, None)


def test_a_legacy_function_call_is_a_tool_call_without_an_id() -> None:
    r = capture("openllmetry/test_open_ai_function_calls.excerpt.yaml")
    (t,) = r.turns
    assert (t.turn.finish, t.turn.finish_raw) == ("tool_calls", "function_call")
    (call,) = t.turn.tool_calls
    assert (call.id, call.name, call.arguments) == ("", "get_current_weather", '{\n  "location": "Boston"\n}')
    assert any("legacy function_call" in n for n in r.notes)


def test_a_legacy_streamed_function_call_is_assembled_from_its_pieces() -> None:
    def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
        return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": None,
                     "function_call": {"name": "get_current_weather", "arguments": ""}}),
              chunk({"function_call": {"arguments": '{"loc'}}), chunk({"function_call": {"arguments": '":1}'}}),
              chunk({}, "function_call")]
    asm = StreamAssembler(Counter())
    for c in chunks:
        asm.feed(c)
    (call,) = asm.finish().turn.tool_calls
    assert (call.name, call.arguments) == ("get_current_weather", '{"loc":1}')


@pytest.mark.parametrize(("rel", "text"), [
    ("openllmetry/test_completion.excerpt.yaml", "-go library\nS-dmssea 2020-08-13: How"),
    ("openllmetry/test_together_completion_legacy.yaml", None),
])
def test_a_legacy_text_completion_keeps_its_text_as_the_content(rel: str, text: str | None) -> None:
    r = capture(rel)
    (t,) = r.turns
    assert t.turn.finish_raw == "length" and t.turn.content
    if text is not None:
        assert t.turn.content == text
    else:  # Together's object is "text.completion"; its text starts with the model's " User:" echo
        assert t.turn.content.startswith(" User: Why did the OpenTelemetry developer go broke?")
    assert any("text_completion" in n for n in r.notes)


def test_an_image_hosts_403_in_a_cassette_is_not_a_model_turn() -> None:
    r = capture("openllmetry/test_vision_base64.excerpt.yaml")
    (t,) = r.turns  # the GET that wikimedia refused, then the model call with the refusal page as an "image"
    assert t.turn.error is not None
    err = t.turn.error
    assert (err.kind, err.status, err.code) == ("invalid_request", 400, "invalid_image_format")
    assert len(r.skipped) == 1 and "GET https://upload.wikimedia.org/" in r.skipped[0] and "HTTP 403" in r.skipped[0]


def test_groq_usage_sent_in_x_groq_is_read() -> None:
    (t,) = capture("openllmetry/test_chat_streaming_legacy.yaml").turns
    assert t.turn.usage is not None
    assert (t.turn.usage.input_tokens, t.turn.usage.output_tokens) == (18, 73)


def test_azure_content_filter_results_are_kept_in_finish_detail() -> None:
    (t,) = capture("openllmetry/test_chat_content_filtering.excerpt.yaml").turns
    assert (t.turn.finish, t.turn.content) == ("content_filter", None)
    assert t.turn.finish_detail is not None and t.turn.finish_detail.startswith("content_filter_results: ")
    results = orjson.loads(t.turn.finish_detail.removeprefix("content_filter_results: "))
    assert results["hate"] == {"filtered": True, "severity": "high"}
    assert results["violence"] == {"filtered": False, "severity": "safe"}


def test_azures_prompt_filter_error_is_a_content_filter_error_with_its_categories() -> None:
    (t,) = capture("openllmetry/test_prompt_content_filtering.excerpt.yaml").turns
    assert t.turn.error is not None
    # the cassette's HTTP status says 200; the body's own status is 400
    assert (t.turn.error.kind, t.turn.error.status, t.turn.error.code) == ("content_filter", 400, "content_filter")
    assert t.turn.finish_detail is not None
    result = orjson.loads(t.turn.finish_detail.removeprefix("content_filter_result: "))
    assert {k for k, v in result.items() if v["filtered"]} == {"hate", "self-harm", "violence"}


def test_an_unknown_stream_format_in_a_cassette_is_skipped_and_counted() -> None:
    r = capture("constructed/cassette-assistants-stream-then-chat.yaml")
    (t,) = r.turns
    assert t.turn.finish == "stop" and t.turn.content
    assert r.unknown == {"cassette: a body in a format no importer reads": 1}
    (skipped,) = r.skipped
    assert "/v1/threads/" in skipped and "thread.run.created" in skipped


def test_a_cassette_with_only_an_unknown_stream_is_one_line_naming_it_and_exit_2() -> None:
    path = DATA / "openllmetry/test_streaming_new_assistant.excerpt.yaml"
    with pytest.raises(CaptureError, match=r"no model call in the cassette .*thread\.run\.created"):
        import_capture(path)
    res = CliRunner().invoke(cli, ["import", str(path), "--dry-run"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.startswith("cannot import")]
    assert len(lines) == 1 and "test_streaming_new_assistant.excerpt.yaml" in lines[0]
    assert "Traceback" not in res.output


def test_format_names_the_dialect_of_a_cassettes_model_calls() -> None:
    path = DATA / "openllmetry/test_chat_streaming_legacy.yaml"
    forced = import_capture(path, "openai-chat")
    assert forced.format == "cassette"
    assert [t.turn for t in forced.turns] == [t.turn for t in import_capture(path).turns]
    misread = import_capture(path, "gemini").turns[0].turn  # forced to a dialect the bodies are not: obeyed
    assert (misread.finish, misread.content, misread.finish_detail) == ("unknown", None, "no candidates")
    res = CliRunner().invoke(cli, ["import", str(path), "--format", "openai-chat", "--dry-run"])
    assert res.exit_code == 0, res.output


def test_a_created_time_in_milliseconds_is_kept_as_sent_not_an_error() -> None:
    assert iso_from_unix(1753879648527) == "1753879648527 (not a Unix time in seconds)"
    assert iso_from_unix(1709033850) == "2024-02-27T11:37:30Z"


def test_together_eos_is_an_unknown_finish_with_the_answer_kept() -> None:
    (t,) = capture("openllmetry/test_together_chat_legacy.yaml").turns
    assert (t.turn.finish, t.turn.finish_raw) == ("unknown", "eos")
    assert t.turn.content is not None and t.turn.content.endswith("(I'll show myself out)")


def test_a_mistral_streamed_tool_call_is_one_call() -> None:
    rel = ("openinference/test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans"
           "[False].yaml")
    (t,) = capture(rel).turns
    assert t.turn.finish == "tool_calls"
    (call,) = t.turn.tool_calls
    assert call.name == "get_weather" and orjson.loads(call.arguments)


def test_an_ollama_api_chat_call_in_a_cassette_is_an_ollama_turn_with_its_thinking_and_counts() -> None:
    """Ollama's own /api/chat (a real openinference cassette) is read by the Ollama wire's importer:
    ``done_reason`` is the raw finish, ``thinking`` the reasoning, the eval counts the usage."""
    from bench.importers import ImportResult
    from bench.importers.cassette import import_cassette
    path = DATA / "openinference/test_chat.yaml"
    result = ImportResult(file="test_chat.yaml", format="cassette")
    import_cassette(str(path), "test_chat.yaml", None, result)
    (t,) = result.turns
    assert t.dialect == "ollama" and t.meta["endpoint"].endswith("11434/api/chat")
    assert (t.turn.finish, t.turn.finish_raw) == ("stop", "stop")
    assert t.turn.content is not None and t.turn.content.startswith("The sky appears blue")
    assert t.turn.reasoning is not None and t.turn.reasoning.startswith("Here's a thinking process")
    assert t.turn.usage is not None and (t.turn.usage.input_tokens, t.turn.usage.output_tokens) == (21, 369)
    assert not result.unknown
