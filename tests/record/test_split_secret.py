"""A small upstream that sends its stream in 7-byte writes, so a secret is split across the stream's
deltas and across the transport's chunks: the proxy passes every byte through as it comes, the
recording holds the secret nowhere, and the recorded sequence replays to the recorded bytes."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from bench.catalogue.load import load_sequence
from bench.record import mask, redactor
from bench.record.redact import redact_sse
from bench.serve.server import BackgroundUvicorn
from bench.wires.base import Context
from bench.wires.registry import wire
from tests.record.recording import ANSWER, SECRET, WIRES, cassette, recording_proxy, replayed

PIECE = 7
USER = "hi"
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "stream": True,
                                             "messages": [{"role": "user", "content": USER}]}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 100, "stream": True,
                                   "messages": [{"role": "user", "content": USER}]}),
    "openai-responses": ("/v1/responses", {"model": "m", "stream": True, "input": USER}),
    "gemini": ("/v1beta/models/m:streamGenerateContent?alt=sse",
               {"contents": [{"role": "user", "parts": [{"text": USER}]}]}),
    "bedrock-converse": ("/model/m/converse-stream", {"messages": [{"role": "user", "content": [{"text": USER}]}]}),
}


def splitting_upstream(dialect: str) -> Starlette:
    """Answers one streamed request on `dialect` with the secret-carrying answer, rendered as the
    bench's server renders it (same ids as its first request of its first run), written 7 bytes at a time."""
    served = wire(dialect)
    seq = load_sequence_of(dialect)

    async def handle(request: Request) -> Response:
        body = json.loads(await request.body())
        shape = served.shape(request.url.path, request.query_params.get("alt"))
        turn = seq.turns[0]
        ctx = Context(f"{served.id_prefix}stopbench-1-1", shape.model if shape else body["model"],
                      served.finish_for(dialect, turn), sse=shape.sse if shape else True)
        data = b"".join(served.render(turn, ctx, True).frames)

        async def pieces() -> AsyncIterator[bytes]:
            for i in range(0, len(data), PIECE):
                yield data[i:i + PIECE]
                await asyncio.sleep(0.001)

        return StreamingResponse(pieces(), media_type=served.stream_media)

    return Starlette(routes=[Route(path, handle, methods=["POST"]) for path in served.paths])


def load_sequence_of(dialect: str) -> Any:
    from bench.catalogue.load import parse_sequence

    finish = {"openai-chat": "stop", "anthropic": "end_turn", "openai-responses": "completed", "gemini": "STOP",
              "bedrock-converse": "end_turn"}[dialect]
    return parse_sequence({"title": "t", "kind": "constructed", "dialect": dialect, "source": "tests/record",
                           "turns": [{"finish": "stop", "finish_raw": finish, "content": ANSWER}]}, "split")


@pytest.mark.parametrize("dialect", WIRES)
def test_a_secret_split_across_chunks_is_redacted_and_the_recording_replays_to_its_bytes(
        dialect: str, tmp_path: Path) -> None:
    path, body = REQUESTS[dialect]
    config = uvicorn.Config(splitting_upstream(dialect), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off")
    with BackgroundUvicorn(config, "splitting upstream", "split-upstream") as upstream, \
            recording_proxy(upstream.url, tmp_path) as (proxy, rec), httpx.Client(timeout=10) as http, \
            http.stream("POST", proxy.url + path, json=body) as got:
        chunks = list(got.iter_raw())
    seen = b"".join(chunks)
    assert len(chunks) > 10  # the client got the pieces as they came
    assert SECRET.encode()[:12] in seen or dialect == "bedrock-converse"  # unchanged: the client sees the secret
    assert rec.problems == []
    recorded = load_sequence(tmp_path / "rec-1.yaml")
    assert recorded.turns[0].content == ANSWER.replace(SECRET, mask(len(SECRET)))
    for name in ("rec-1.yaml", "rec-1.cassette"):
        text = (tmp_path / name).read_text()
        assert "Zq7Zq7" not in text and "sk-ant" not in text
    [(recorded_bytes, replay_bytes)] = replayed(tmp_path / "rec-1.yaml")
    assert replay_bytes == recorded_bytes
    assert b"Zq7" not in recorded_bytes
    if dialect != "bedrock-converse":  # the recorded bytes are the client's, redacted in place
        assert recorded_bytes.decode() == redact_sse(seen.decode(), redactor())
    inter = cassette(tmp_path / "rec-1.cassette")[0]
    assert sum(n for _, n in inter["response"]["chunks"]) == len(seen)


def test_a_secret_split_across_deltas_is_found_only_over_the_reassembled_stream() -> None:
    """Pinned so the reassembly cannot quietly go: each delta alone holds no whole key."""
    rx = redactor()
    left, right = SECRET[:10], SECRET[10:]
    events = "".join(f'data: {json.dumps({"delta": {"text": t}})}\n\n' for t in ("key: " + left, right, " ok"))
    assert rx.text(events) == events  # no single event matches
    out = redact_sse(events, rx)
    assert "Zq7" not in out and out.count("data: ") == 3
    texts = [json.loads(line[6:])["delta"]["text"] for line in out.splitlines() if line.startswith("data: ")]
    assert [len(t) for t in texts] == [len("key: " + left), len(right), 3]  # every piece keeps its length
    assert "".join(texts) == "key: " + mask(len(SECRET)) + " ok"


RATE_LIMITED = {"finish": "error", "error": {"kind": "rate_limit", "status": 429, "code": "rate_limit_exceeded",
                                             "message": "slow down"}}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("dialect", WIRES)
def test_a_rate_limited_answer_is_recorded_and_replays_to_its_bytes(dialect: str, stream: bool,
                                                                    tmp_path: Path) -> None:
    from bench.catalogue.load import parse_sequence
    from bench.serve import BackgroundServer, Session

    seq = parse_sequence({"title": "t", "kind": "constructed", "dialect": dialect, "source": "tests/record",
                          "turns": [RATE_LIMITED]}, "limited")
    path, body = REQUESTS[dialect]
    if not stream:
        body = {k: v for k, v in body.items() if k != "stream"}
        path = path.replace(":streamGenerateContent?alt=sse", ":generateContent").replace("converse-stream", "converse")
    with BackgroundServer(Session(seq)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, rec), \
            httpx.Client(timeout=10) as http:
        got = http.post(proxy.url + path, json=body)
    assert got.status_code == 429 and rec.problems == []
    recorded = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert recorded.error is not None and recorded.error.kind == "rate_limit" and recorded.error.status == 429
    [(recorded_bytes, replay_bytes)] = replayed(tmp_path / "rec-1.yaml")
    assert replay_bytes == recorded_bytes == got.content


def test_a_client_that_goes_away_mid_stream_leaves_what_it_got_recorded(tmp_path: Path) -> None:
    path, body = REQUESTS["openai-chat"]
    config = uvicorn.Config(splitting_upstream("openai-chat"), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off")
    with BackgroundUvicorn(config, "splitting upstream", "split-upstream") as upstream, \
            recording_proxy(upstream.url, tmp_path) as (proxy, _):
        with httpx.Client(timeout=10) as http, http.stream("POST", proxy.url + path, json=body) as got:
            next(got.iter_raw())  # one chunk, then the connection is closed
        deadline = time.monotonic() + 10
        while not (tmp_path / "rec-1.cassette").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    inter = cassette(tmp_path / "rec-1.cassette")[0]
    assert inter["response"]["ended"] == "the client went away before the end"
    assert len(inter["response"]["chunks"]) > 0
