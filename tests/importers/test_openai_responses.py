"""OpenAI Responses, whole and streamed. Expected values were read from the captures."""

from __future__ import annotations

from collections import Counter

import orjson
import yaml

from bench.engine.model import ToolCall, Usage
from bench.wires.capture import read_events
from bench.wires.openai_responses.capture import StreamAssembler
from tests.importers.conftest import DATA, capture


def test_function_call_stream_then_answer() -> None:
    r = capture("llm/test_responses_tool_use_streaming.yaml")
    first, second = r.turns
    assert first.turn.tool_calls == (ToolCall("call_sVidsfFJ6zlzRpelrPkTPlpd", "multiply", '{"a":1231,"b":2331}'),)
    assert first.turn.finish_raw == "completed" and first.turn.finish == "stop"
    assert first.turn.content is None
    assert first.turn.usage == Usage(58, 23)
    assert first.meta["id"] == "resp_00d64fa806f333310169fab1be69d081a08f8285661855594c"
    assert first.meta["model"] == "gpt-5.5-2026-04-23"
    assert second.turn.content == "1231 × 2331 = **2,869,461**"
    assert second.turn.usage == Usage(94, 18)
    assert len(r.runs()) == 1


def test_argument_deltas_assemble_when_the_terminal_event_has_no_output() -> None:
    cassette = yaml.safe_load((DATA / "llm/test_responses_tool_use_streaming.yaml").read_text())
    body = cassette["interactions"][0]["response"]["body"]["string"]
    asm = StreamAssembler(Counter())
    for ev in read_events(body.splitlines()):
        obj = orjson.loads(ev.data)
        if obj["type"] == "response.output_item.done":
            continue  # only the deltas may build the arguments
        if obj["type"] == "response.completed":
            obj["response"]["output"] = []
        asm.feed(obj, ev.name)
    turn = asm.finish().turn
    assert turn.tool_calls == (ToolCall("call_sVidsfFJ6zlzRpelrPkTPlpd", "multiply", '{"a":1231,"b":2331}'),)


def test_incomplete_uses_the_reason_as_raw_key() -> None:
    r = capture("constructed/responses-incomplete.json")
    (t,) = r.turns
    assert t.turn.finish_raw == "incomplete/max_output_tokens" and t.turn.finish == "length"
    assert t.turn.content == "The answer is"
    assert t.turn.reasoning == "Thinking about it"


def test_failed_carries_its_error() -> None:
    r = capture("constructed/responses-failed.sse")
    (t,) = r.turns
    assert t.turn.finish == "error" and t.turn.finish_raw == "failed"
    assert t.turn.error is not None
    assert (t.turn.error.kind, t.turn.error.code) == ("stream_error", "server_error")  # response.failed in a stream


def test_end_turn_false_and_text_from_deltas() -> None:
    r = capture("constructed/responses-end-turn-false.sse")
    (t,) = r.turns
    assert t.turn.end_turn is False
    assert t.turn.content == "Let me keep going."
    assert r.unknown == Counter({"openai-responses: event 'response.hologram.delta'": 1})


def test_a_message_whose_only_part_is_a_refusal_has_no_content_whole_and_streamed() -> None:
    """No public recording of a Responses refusal was found (searched openllmetry, openinference,
    openai-python); the shape is the API reference's (`output[].content[]` part `{"type": "refusal"}`,
    `response.refusal.delta` events), written here by hand."""
    from bench.wires.openai_responses.capture import from_response
    item = {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help."}]}
    whole = from_response({"object": "response", "status": "completed", "output": [item]}, Counter()).turn
    asm = StreamAssembler(Counter())
    asm.feed({"type": "response.output_item.added", "output_index": 0,
              "item": {"type": "message", "role": "assistant", "content": []}})
    for piece in ("I can", "'t help."):
        asm.feed({"type": "response.refusal.delta", "output_index": 0, "delta": piece})
    asm.feed({"type": "response.completed", "response": {"status": "completed", "output": []}})
    streamed = asm.finish().turn
    for turn in (whole, streamed):
        assert turn.content is None  # was "": an empty message, which a loop reads as an empty answer
        assert (turn.refusal, turn.finish_detail) == ("I can't help.", None)
