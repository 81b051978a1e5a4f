"""Claude on Bedrock: Anthropic's ``AnthropicBedrock`` (``InvokeModel``, and
``InvokeModelWithResponseStream`` whose Anthropic events come base64-encoded in AWS event-stream
``chunk`` messages) runs chat-tool-rounds to its answer, JSON and streamed, signed with fake keys."""

from __future__ import annotations

import base64
import json
from typing import Any

import anthropic
import httpx
import pytest

from bench.wires.bedrock_converse.eventstream import MEDIA
from tests.serve.serving import make_sequence, serving
from tests.serve.surfaces import ANSWER, PROMPT, ROUNDS, calls_served, reached_the_end
from tests.serve.test_surfaces_vertex import claude_rounds

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"


def bedrock(url: str) -> anthropic.AnthropicBedrock:
    return anthropic.AnthropicBedrock(aws_region="us-east-1", base_url=url, aws_access_key="AKIDSTOPBENCH",
                                      aws_secret_key="stopbench", max_retries=0, timeout=10)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
def test_anthropic_bedrock_runs_the_rounds_to_the_answer(stream: bool) -> None:
    with serving(ROUNDS) as srv:
        rounds, answer, models = claude_rounds(bedrock(srv.url), MODEL, stream)
        reached_the_end(srv, f"/model/{MODEL}/invoke" + ("-with-response-stream" if stream else ""))
        first = srv.session.records()[0]
    assert (rounds, answer, set(models)) == (calls_served(), ANSWER, {MODEL})
    assert "anthropic_version" in first.body and "model" not in first.body and "stream" not in first.body
    assert any(name == b"authorization" and value.startswith(b"AWS4-HMAC-SHA256") for name, value in first.raw_headers)


def test_the_stream_is_event_stream_chunks_of_base64_anthropic_events() -> None:
    from botocore.eventstream import EventStreamBuffer

    with serving(ROUNDS) as srv:
        got = httpx.post(f"{srv.url}/model/{MODEL}/invoke-with-response-stream", timeout=10, json={
            "anthropic_version": "bedrock-2023-05-31", "max_tokens": 99,
            "messages": [{"role": "user", "content": PROMPT}], "tools": [{"name": "read_file", "input_schema": {}}]})
    buffer = EventStreamBuffer()
    buffer.add_data(got.content)
    messages = list(buffer)
    assert got.headers["content-type"] == MEDIA
    assert {m.headers[":event-type"] for m in messages} == {"chunk"}
    events: list[Any] = [json.loads(base64.b64decode(json.loads(m.payload)["bytes"])) for m in messages]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert any(e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use" for e in events)


def test_an_error_is_bedrocks_in_the_stream_and_as_an_answer() -> None:
    from botocore.eventstream import EventStreamBuffer

    seq = make_sequence([{"finish": "error", "content": "partial",
                          "error": {"kind": "rate_limit", "status": 429, "message": "slow down"}}], "anthropic",
                        then="repeat")
    ask: dict[str, Any] = {"max_tokens": 9, "messages": [{"role": "user", "content": PROMPT}]}
    with serving(seq) as srv:
        plain = httpx.post(f"{srv.url}/model/{MODEL}/invoke", json=ask, timeout=10)
        streamed = httpx.post(f"{srv.url}/model/{MODEL}/invoke-with-response-stream", json=ask, timeout=10)
    assert (plain.status_code, plain.headers["x-amzn-ErrorType"], plain.json()) == (
        429, "ThrottlingException", {"message": "slow down"})
    buffer = EventStreamBuffer()
    buffer.add_data(streamed.content)
    last = list(buffer)[-1]
    assert last.headers[":message-type"] == "exception"
    assert last.headers[":exception-type"] == "throttlingException"
    with serving(seq) as srv, pytest.raises(anthropic.RateLimitError):
        bedrock(srv.url).messages.create(model=MODEL, max_tokens=9, messages=[{"role": "user", "content": PROMPT}])
