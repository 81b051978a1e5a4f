"""``stopbench record`` on the Ollama and Cohere v2 wires: a conversation through the recording proxy,
by each provider's official client, streamed and not, becomes a recorded sequence of that dialect with
the secret redacted, whose requests replay to the same bytes; under a fault recipe the proxy cuts an
Ollama NDJSON stream line by line, as the replay server does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

ollama = pytest.importorskip("ollama")
cohere = pytest.importorskip("cohere")

from bench.catalogue.load import load_sequence  # noqa: E402
from bench.faults import load_recipe  # noqa: E402
from bench.serve import BackgroundServer, Session  # noqa: E402
from tests.record.recording import ANSWER, SECRET, cassette, recording_proxy, replayed  # noqa: E402
from tests.serve.serving import CHAT_TOOLS, make_sequence  # noqa: E402

CALL = {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.txt"}'}
USAGE = ({"input_tokens": 11, "output_tokens": 7}, {"input_tokens": 30, "output_tokens": 12})
TURNS = {
    "ollama": [{"finish": "stop", "finish_raw": "stop", "content": None, "tool_calls": [CALL], "usage": USAGE[0]},
               {"finish": "stop", "finish_raw": "stop", "content": ANSWER, "usage": USAGE[1]}],
    "cohere": [{"finish": "tool_calls", "finish_raw": "TOOL_CALL", "content": "reading", "tool_calls": [CALL],
                "usage": USAGE[0]},
               {"finish": "stop", "finish_raw": "COMPLETE", "content": ANSWER, "usage": USAGE[1]}],
}
GO = [{"role": "user", "content": "read a.txt"}]


def _ollama(url: str, stream: bool) -> None:
    client = ollama.Client(host=url)
    messages: list[Any] = list(GO)
    for _ in range(2):
        got = client.chat(model="llama3.2", messages=messages, tools=CHAT_TOOLS, stream=stream)
        parts = list(got) if stream else [got]
        calls = [c for p in parts for c in (p.message.tool_calls or [])]
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        messages += [{"role": "tool", "content": "hello", "tool_name": c.function.name} for c in calls]


def _cohere(url: str, stream: bool) -> None:
    client = cohere.ClientV2(base_url=url, api_key="sk-ant-api03-" + "k" * 40, timeout=10)
    messages: list[Any] = list(GO)
    for _ in range(2):
        if stream:
            events = list(client.chat_stream(model="command-a-03-2025", messages=messages, tools=CHAT_TOOLS))
            calls = [(e.delta.message.tool_calls.id, e.delta.message.tool_calls.function.name)
                     for e in events if e.type == "tool-call-start"]
        else:
            answer = client.chat(model="command-a-03-2025", messages=messages, tools=CHAT_TOOLS)
            calls = [(c.id, c.function.name) for c in answer.message.tool_calls or []]
        if calls:
            messages.append({"role": "assistant", "tool_plan": "reading", "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": CALL["arguments"]}}
                for i, n in calls]})
            messages += [{"role": "tool", "tool_call_id": i, "content": "hello"} for i, _ in calls]


CLIENTS = {"ollama": _ollama, "cohere": _cohere}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("dialect", list(CLIENTS))
def test_a_conversation_through_the_proxy_becomes_a_sequence_that_replays_to_the_same_bytes(
        dialect: str, stream: bool, tmp_path: Path) -> None:
    served = make_sequence(TURNS[dialect], dialect)
    with BackgroundServer(Session(served)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, rec):
        CLIENTS[dialect](proxy.url, stream)
    assert rec.problems == []
    recorded = load_sequence(tmp_path / "rec-1.yaml")
    assert recorded.dialect == dialect and recorded.kind == "recorded"
    assert [t.finish_raw for t in recorded.turns] == [t.finish_raw for t in served.turns]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in recorded.turns[0].tool_calls] == [
        ("call_1", "read_file", {"path": "a.txt"})]
    assert recorded.turns[1].content is not None and SECRET not in recorded.turns[1].content
    assert recorded.turns[1].usage == served.turns[1].usage
    for name in ("rec-1.yaml", "rec-1.cassette"):
        assert "sk-ant-" not in (tmp_path / name).read_text() and "Zq7Zq7" not in (tmp_path / name).read_text()
    pairs = replayed(tmp_path / "rec-1.yaml")
    assert len(pairs) == 2 and all(recorded_bytes == replay_bytes for recorded_bytes, replay_bytes in pairs)


@pytest.mark.parametrize("preset", ["cut-after-3", "duplicate-frame"])
def test_the_proxy_cuts_an_ollama_stream_line_by_line_as_the_server_does(preset: str, tmp_path: Path) -> None:
    turns = [{"finish": "stop", "finish_raw": "stop", "content": "a long answer, " * 8}]
    body = {"model": "m", "messages": GO}  # no "stream": Ollama streams
    recipe = load_recipe(preset)
    with BackgroundServer(Session(make_sequence(turns, "ollama"), faults=recipe)) as direct:
        expected = httpx.post(direct.url + "/api/chat", json=body, timeout=10).content
    with BackgroundServer(Session(make_sequence(turns, "ollama"))) as upstream, \
            recording_proxy(upstream.url, tmp_path, faults=recipe) as (proxy, rec):
        got = httpx.post(proxy.url + "/api/chat", json=body, timeout=10).content
    assert got == expected and rec.problems == []
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert "injected" in inter["response"]
