"""How recorded requests are split into conversations (as the replay server follows a client), and the
redaction of a Gemini stream sent as one JSON array."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from bench.catalogue.load import load_sequence, parse_sequence
from bench.engine.model import Sequence
from bench.record import mask, redactor
from bench.record.recording import redact_body
from bench.serve import BackgroundServer, Session
from tests.record.recording import SECRET, recording_proxy

USER = {"role": "user", "content": "hi"}


def _seq(turns: list[dict[str, Any]], dialect: str = "openai-chat") -> Sequence:
    return parse_sequence({"title": "t", "kind": "constructed", "dialect": dialect, "source": "tests/record",
                           "then": "repeat", "turns": turns}, "split")


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".yaml")


def test_the_same_history_after_a_finished_answer_is_a_new_conversation(tmp_path: Path) -> None:
    seq = _seq([{"finish": "stop", "content": "done"}])
    with BackgroundServer(Session(seq)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, _), \
            httpx.Client() as http:
        for _ in range(2):
            http.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": [USER]})
    assert _files(tmp_path) == ["rec-1.yaml", "rec-2.yaml"]


def test_a_resend_after_a_cut_answer_stays_in_its_conversation(tmp_path: Path) -> None:
    seq = _seq([{"finish": "length", "content": "cut sho"}, {"finish": "stop", "content": "done"}])
    with BackgroundServer(Session(seq)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, _), \
            httpx.Client() as http:
        for _ in range(2):
            http.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": [USER]})
    assert _files(tmp_path) == ["rec-1.yaml"]
    assert [t.finish for t in load_sequence(tmp_path / "rec-1.yaml").turns] == ["length", "stop"]


def test_a_request_that_follows_a_reply_by_reference_joins_that_replys_conversation(tmp_path: Path) -> None:
    seq = _seq([{"finish": "stop", "finish_raw": "completed", "content": "first"},
                {"finish": "stop", "finish_raw": "completed", "content": "second"}], "openai-responses")
    with BackgroundServer(Session(seq)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, _), \
            httpx.Client() as http:
        first = http.post(f"{proxy.url}/v1/responses", json={"model": "m", "input": "hi"}).json()
        http.post(f"{proxy.url}/v1/responses", json={"model": "m", "input": "more",
                                                       "previous_response_id": first["id"]})
    assert _files(tmp_path) == ["rec-1.yaml"]
    assert [t.content for t in load_sequence(tmp_path / "rec-1.yaml").turns] == ["first", "second"]


def test_a_secret_split_across_the_chunks_of_a_json_array_stream_is_masked_in_place() -> None:
    chunks = [{"candidates": [{"content": {"parts": [{"text": piece}]}}]} for piece in
              ("key " + SECRET[:9], SECRET[9:], " end")]
    text = json.dumps(chunks, indent=1)
    out = redact_body(text, "application/json", redactor())
    assert "Zq7" not in out and "sk-ant" not in out
    pieces = [c["candidates"][0]["content"]["parts"][0]["text"] for c in json.loads(out)]
    assert "".join(pieces) == "key " + mask(len(SECRET)) + " end"
    assert len(out) == len(text)  # rewritten in place: the array keeps its layout
