"""Error answers recorded from the bench's server: each is imported as the error it is, and the
recorded sequence replays to the bytes the client got (a cut stream, an in-stream error, an HTTP
error with the provider's reason and code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.catalogue.load import load_sequence, parse_sequence
from bench.engine.model import Turn
from bench.serve import BackgroundServer, Session
from tests.record.recording import WIRES, recording_proxy, replayed
from tests.record.test_split_secret import REQUESTS


def _record(dialect: str, turn: dict[str, Any], stream: bool, tmp_path: Path) -> tuple[Turn, httpx.Response]:
    """One request answered with `turn` by the bench's server through the proxy: the imported turn,
    after checking that the recorded sequence replays to the bytes the client got."""
    seq = parse_sequence({"title": "t", "kind": "constructed", "dialect": dialect, "source": "tests/record",
                          "turns": [turn]}, "errors")
    path, body = REQUESTS[dialect]
    if not stream:
        body = {k: v for k, v in body.items() if k != "stream"}
        path = path.replace(":streamGenerateContent?alt=sse", ":generateContent").replace("converse-stream", "converse")
    with BackgroundServer(Session(seq)) as upstream, recording_proxy(upstream.url, tmp_path) as (proxy, rec), \
            httpx.Client(timeout=10) as http:
        got = http.post(proxy.url + path, json=body)
    assert rec.problems == []
    [(recorded_bytes, replay_bytes)] = replayed(tmp_path / "rec-1.yaml")
    assert replay_bytes == recorded_bytes == got.content
    return load_sequence(tmp_path / "rec-1.yaml").turns[0], got


CUT = {"finish": "error", "content": "half an answer", "error": {"kind": "stream_cut"}}


@pytest.mark.parametrize("dialect", WIRES)
def test_a_stream_that_ends_without_a_finish_is_imported_as_a_cut_and_replays_to_its_bytes(
        dialect: str, tmp_path: Path) -> None:
    turn, _ = _record(dialect, CUT, True, tmp_path)
    assert turn.error is not None and turn.error.kind == "stream_cut"
    assert turn.content == "half an answer" and turn.finish_raw is None


IN_STREAM = {"finish": "error", "content": "half an answer",
             "error": {"kind": "stream_error", "status": 500, "message": "internal error"}}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_gemini_error_after_the_stream_is_imported_and_replays_to_its_bytes(stream: bool, tmp_path: Path) -> None:
    turn, got = _record("gemini", IN_STREAM, stream, tmp_path)
    assert turn.error is not None and turn.error.status == 500
    if stream:  # the answer's first part, then the error, written across lines after the events
        assert got.content.endswith(b"\n}\n") and turn.error.kind == "stream_error"
        assert turn.content == "half an answer"
    else:  # a JSON answer has no stream to put the error in: an HTTP 500, read as one
        assert got.status_code == 500 and turn.error.kind == "server_error"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_gemini_429_keeps_its_reason_and_replays_to_its_bytes(stream: bool, tmp_path: Path) -> None:
    limited = {"finish": "error", "error": {"kind": "rate_limit", "status": 429, "code": "rate_limit_exceeded",
                                            "message": "slow down"}}
    turn, got = _record("gemini", limited, stream, tmp_path)
    assert got.status_code == 429
    assert turn.error is not None and turn.error.kind == "rate_limit" and turn.error.code == "rate_limit_exceeded"


@pytest.mark.xfail(strict=True, reason="the server's OpenAI error body puts the HTTP status in `code` when the turn "
                   "has one (bench/wires/base.py openai_error_body, for OpenRouter's in-stream errors), and an HTTP "
                   "error's status is always read: docs/how-to/record.md, Limits")
def test_an_openai_json_error_without_a_status_keeps_its_code_and_replays_to_its_bytes(tmp_path: Path) -> None:
    broken = {"finish": "error", "error": {"kind": "stream_error", "code": "stream_error", "message": "it broke"}}
    turn, got = _record("openai-chat", broken, False, tmp_path)
    assert got.json()["error"]["code"] == "stream_error"
    assert turn.error is not None and turn.error.code == "stream_error"


CHUNK = ('data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m",'
         '"choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}\n\n')


def test_a_stream_with_its_end_marker_but_no_finish_stays_an_unknown_finish() -> None:
    from collections import Counter

    from bench.importers import _read

    cut = _read.body(CHUNK, None, "f", "body", Counter()).turn
    assert cut.error is not None and cut.error.kind == "stream_cut" and cut.content == "half"
    marked = _read.body(CHUNK + "data: [DONE]\n\n", None, "f", "body", Counter()).turn  # a provider that sends none
    assert marked.error is None and marked.finish == "unknown" and marked.finish_raw is None
    start = ('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
             '"role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n')
    stop = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert _read.body(start, None, "f", "body", Counter()).turn.error is not None
    assert _read.body(start + stop, None, "f", "body", Counter()).turn.error is None


def test_a_json_value_written_across_lines_is_one_event() -> None:
    from bench.wires.capture import read_events

    lines = ['data: {"a": 1}', "", "{", '  "error": {', '    "code": 500', "  }", "}", "data: {\"b\": 2}", ""]
    assert [(e.line, e.data) for e in read_events(lines)] == [
        (1, '{"a": 1}'), (3, '{\n  "error": {\n    "code": 500\n  }\n}'), (8, '{"b": 2}')]
