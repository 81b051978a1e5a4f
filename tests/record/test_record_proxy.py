"""Through the recording proxy in front of the bench's own server, a conversation on every wire,
streamed and not, becomes a sequence that replays to the same bytes, with the secret redacted."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from bench.catalogue.load import load_sequence
from bench.faults import parse_recipe
from bench.record import mask
from bench.serve import BackgroundServer, Session
from tests.record.recording import (
    ANSWER,
    CLIENTS,
    SECRET,
    WIRES,
    cassette,
    conversation_sequence,
    recording_proxy,
    replayed,
)

STALL = 1.0
"""Seconds the upstream waits before a stream's last frame in the pass-through test."""


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("dialect", WIRES)
def test_a_conversation_through_the_proxy_becomes_a_sequence_that_replays_to_the_same_bytes(
        dialect: str, stream: bool, tmp_path: Path) -> None:
    served = conversation_sequence(dialect)
    with BackgroundServer(Session(served)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, rec):
        CLIENTS[dialect](proxy.url, stream)
    assert rec.problems == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec-1.cassette", "rec-1.yaml"]
    recorded = load_sequence(tmp_path / "rec-1.yaml")
    assert recorded.dialect == dialect and recorded.kind == "recorded"
    assert [t.finish_raw for t in recorded.turns] == [t.finish_raw for t in served.turns]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in recorded.turns[0].tool_calls] == [
        (c.id, c.name, json.loads(c.arguments)) for c in served.turns[0].tool_calls]
    assert recorded.turns[1].content == ANSWER.replace(SECRET, mask(len(SECRET)))
    assert recorded.turns[1].usage == served.turns[1].usage
    for name in ("rec-1.yaml", "rec-1.cassette"):
        text = (tmp_path / name).read_text()
        assert "sk-ant-" not in text and "Zq7Zq7" not in text and "AIza" not in text and "AKIA" not in text
    pairs = replayed(tmp_path / "rec-1.yaml")
    assert len(pairs) == 2
    for recorded_bytes, replay_bytes in pairs:
        assert replay_bytes == recorded_bytes


def test_the_client_gets_the_upstreams_bytes_unchanged_chunk_for_chunk(tmp_path: Path) -> None:
    # The bench's server writes a stream in one write unless a recipe paces it: here it waits
    # STALL seconds before the stream's last frame, so the proxy passes chunks on as they come only
    # if the client has the rest of the stream that long before the last frame.
    served = conversation_sequence("openai-chat")
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]}
    with BackgroundServer(Session(served)) as direct, httpx.Client() as http:
        expected = http.post(f"{direct.url}/v1/chat/completions", json=body)
    last = b"data: [DONE]\n\n"
    frames = expected.content.count(b"\n\n")
    assert expected.content.endswith(last) and frames > 3
    stall = parse_recipe({"faults": [{"fault": "stall", "seconds": STALL, "before_frame": frames}]}, "test")
    with BackgroundServer(Session(served, faults=stall)) as upstream, \
            recording_proxy(upstream.url, tmp_path) as (proxy, _), httpx.Client() as http, \
            http.stream("POST", f"{proxy.url}/v1/chat/completions", json=body) as got:
        chunks, arrived = [], []
        for chunk in got.iter_raw():
            chunks.append(chunk)
            arrived.append(time.monotonic())
        headers = got.headers
    assert b"".join(chunks) == expected.content
    assert chunks[-1] == last  # the last frame on its own, as the upstream wrote it
    assert arrived[-1] - arrived[0] > STALL * 0.8  # the first frames reached the client before the last was sent
    assert headers["content-type"] == expected.headers["content-type"]
    assert [i["response"]["status"]["code"] for i in cassette(tmp_path / "rec-1.cassette")] == [200]


def test_credential_headers_are_never_written(tmp_path: Path) -> None:
    served = conversation_sequence("openai-chat")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    secrets = {"authorization": "Bearer abcdefghijklmnop", "x-api-key": "plain-key-1", "x-goog-api-key": "g-key-2",
               "cookie": "session=c-key-3", "x-amz-security-token": "t-key-4", "x-custom-token": "u-key-5"}
    with BackgroundServer(Session(served)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, _), \
            httpx.Client() as http:
        http.post(f"{proxy.url}/v1/chat/completions?key=q-key-6", json=body, headers=secrets)
    text = (tmp_path / "rec-1.cassette").read_text()
    for value in [*secrets.values(), "q-key-6"]:
        assert value.split("=")[-1] not in text
    assert "content-type" in text  # the other headers are kept


def test_a_redact_pattern_of_the_callers_own_is_applied_to_requests_and_answers(tmp_path: Path) -> None:
    served = conversation_sequence("openai-chat")
    body = {"model": "m", "messages": [{"role": "user", "content": "my id is EMP-4242"}]}
    with BackgroundServer(Session(served)) as upstream, \
            recording_proxy(upstream.url, tmp_path, patterns=(r"EMP-\d+", r"reading")) as (proxy, _), \
            httpx.Client() as http:
        http.post(f"{proxy.url}/v1/chat/completions", json=body)
    text = (tmp_path / "rec-1.cassette").read_text() + (tmp_path / "rec-1.yaml").read_text()
    assert "EMP-4242" not in text and "reading" not in text
    assert load_sequence(tmp_path / "rec-1.yaml").turns[0].content == mask(len("reading")) + " it"


def test_two_conversations_are_two_sequences_and_a_model_list_goes_to_the_side_cassette(tmp_path: Path) -> None:
    served = conversation_sequence("openai-chat")
    with BackgroundServer(Session(served)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, _):
        CLIENTS["openai-chat"](proxy.url, False)
        with httpx.Client() as http:
            http.get(f"{proxy.url}/v1/models")
            http.post(f"{upstream.url}/_stopbench/run", json={"sequence": "nope"})  # the same run goes on
            upstream.session.start(served)
        CLIENTS["openai-chat"](proxy.url, True)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["rec-1.cassette", "rec-1.yaml", "rec-2.cassette", "rec-2.yaml", "rec-side.cassette"]
    assert [len(load_sequence(tmp_path / f"rec-{k}.yaml").turns) for k in (1, 2)] == [2, 2]
