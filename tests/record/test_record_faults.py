"""``stopbench record --faults``: the client gets the upstream's answers as a fault recipe delivers
them; the recording keeps the upstream's bytes and says what was injected."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from bench.catalogue.load import load_sequence
from bench.catalogue.yaml_read import read_yaml
from bench.faults import load_recipe, status_plan
from bench.record import response_bytes
from bench.serve import BackgroundServer, Session
from tests.record.recording import WIRES, cassette, conversation_sequence, recording_proxy, replayed
from tests.record.test_split_secret import REQUESTS

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]}


def _direct(stream: bool) -> httpx.Response:
    """What the upstream answers the first request, with no proxy in between."""
    with BackgroundServer(Session(conversation_sequence("openai-chat"))) as direct, httpx.Client() as http:
        return http.post(f"{direct.url}/v1/chat/completions", json={**BODY, "stream": stream})


def test_a_cut_stream_reaches_the_client_cut_and_the_recording_keeps_the_upstreams_whole_stream(
        tmp_path: Path) -> None:
    expected = _direct(True).content
    frames = [f + b"\n\n" for f in expected.split(b"\n\n") if f]
    with BackgroundServer(Session(conversation_sequence("openai-chat"))) as upstream, \
            recording_proxy(upstream.url, tmp_path, faults=load_recipe("cut-after-3")) as (proxy, rec), \
            httpx.Client() as http:
        got = http.post(f"{proxy.url}/v1/chat/completions", json={**BODY, "stream": True}).content
    assert len(frames) > 3
    assert got == b"".join(frames[:3])  # the client's stream ends after three events, no finish
    assert rec.problems == []
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert response_bytes(inter) == expected  # the upstream's whole stream, not what the client got
    assert inter["response"]["injected"]["done"] == ["cut after 3 frames (stream ended without a finish)"]
    assert inter["response"]["injected"]["kind"] == "stream_cut"
    doc = read_yaml(tmp_path / "rec-1.yaml")
    said = json.dumps(doc)
    assert "faults injected" in said and "cut-after-3" in said and "cut after 3 frames" in said
    assert [t.finish_raw for t in load_sequence(tmp_path / "rec-1.yaml").turns] == ["tool_calls"]
    [(recorded, replay)] = replayed(tmp_path / "rec-1.yaml")
    assert replay == recorded == expected


def test_a_status_fault_answers_the_client_a_429_and_the_recording_keeps_the_upstreams_answer(
        tmp_path: Path) -> None:
    expected = _direct(False)
    with BackgroundServer(Session(conversation_sequence("openai-chat"))) as upstream, \
            recording_proxy(upstream.url, tmp_path, faults=load_recipe("rate-limited")) as (proxy, _), \
            httpx.Client() as http:
        first = http.post(f"{proxy.url}/v1/chat/completions", json=BODY)
        second = http.post(f"{proxy.url}/v1/chat/completions", json=BODY)
    assert first.status_code == 429 and first.headers["retry-after"] == "1"
    shaped, _ = status_plan("openai-chat", 429, 1, None)
    assert first.content == b"".join(f.data for f in shaped.frames)  # the provider's error, as the server sends it
    assert second.status_code == 200  # the preset faults the first request only
    inters = cassette(tmp_path / "rec-1.cassette")
    assert [i["response"]["status"]["code"] for i in inters] == [200, 200]
    assert response_bytes(inters[0]) == expected.content
    assert inters[0]["response"]["injected"]["done"] == ["HTTP 429, Retry-After: 1"]
    assert "injected" not in inters[1]["response"]
    said = json.dumps(read_yaml(tmp_path / "rec-1.yaml"))
    assert "answer 1 (proxy request 1): HTTP 429, Retry-After: 1" in said
    assert "answer 2" not in said


@pytest.mark.parametrize("preset", ["cut-after-3", "corrupt-frame", "duplicate-frame"])
@pytest.mark.parametrize("dialect", WIRES)
def test_the_proxy_delivers_a_stream_as_the_server_itself_would_under_the_recipe(
        dialect: str, preset: str, tmp_path: Path) -> None:
    # the bench's server with the recipe and the proxy with the recipe in front of the clean server
    # cut the stream into the same frames and send the same bytes (the first request of a first run)
    recipe = load_recipe(preset)
    served = conversation_sequence(dialect)
    path, body = REQUESTS[dialect]
    with BackgroundServer(Session(served, faults=recipe)) as direct, httpx.Client(timeout=10) as http:
        expected = http.post(direct.url + path, json=body).content
    with BackgroundServer(Session(served)) as upstream, \
            recording_proxy(upstream.url, tmp_path, faults=recipe) as (proxy, rec), httpx.Client(timeout=10) as http:
        got = http.post(proxy.url + path, json=body).content
    assert got == expected and rec.problems == []
    [inter] = cassette(tmp_path / "rec-1.cassette")
    # the recording holds the upstream's answer; it says so when the recipe changed what the client got
    # (Gemini's first answer is one frame, which these recipes leave as it is)
    assert (response_bytes(inter) != got) == ("injected" in inter["response"]) == (dialect != "gemini")
