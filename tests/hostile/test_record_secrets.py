"""No secret reaches the disk through `stopbench record`, whatever the framing (issue 36): an AWS event
stream cut inside the message that holds a key, with a bad prelude CRC or a 4 GB length prefix; a key
split over SSE data that is not JSON; a key written as JSON ``\\u`` escapes; and, generated, keys split
over SSE events, HTTP chunks, gzip, event-stream messages and escapes. Every written file is searched
for the key as written, in base64 at its three alignments, ``\\u``-escaped and percent-encoded."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import struct
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.record import Exchange, Recorder, redactor
from bench.wires.bedrock_converse import eventstream

CHAT = "/v1/chat/completions"
CONVERSE = "/model/m/converse-stream"
KEY = "sk-ant-api03-" + "Qx9" * 14
REQUEST = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()


def forms(key: str) -> list[str]:
    """The ways a key can be read back from a file: as written, its second half alone (a key masked
    only in part), base64 at each of the three alignments, JSON ``\\u`` escapes, percent-encoding."""
    raw = key.encode()
    out = [key, key[len(key) // 2:]]
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw).decode()
        out.append(enc[(4 * pad + 2) // 3:-3])  # the characters only the key's bytes decide
    out += ["".join(f"\\u{ord(c):04x}" for c in key), "".join(f"\\u{ord(c):04X}" for c in key)]
    out += ["".join(f"%{ord(c):02X}" for c in key), "".join(f"%{ord(c):02x}" for c in key)]
    return out


def assert_nowhere(key: str, out: Path) -> None:
    """No form of `key` in any file under `out`, nor in the bytes of a base64 ``raw`` field."""
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files, "nothing was written"
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for form in forms(key):
            assert form not in text, f"{path.name} holds the key as {form[:20]}..."
        for line in text.splitlines():
            if line.strip().startswith("raw: "):
                decoded = base64.b64decode(line.split(":", 1)[1].strip())
                assert key.encode() not in decoded and key[len(key) // 2:].encode() not in decoded


def record(out: Path, *exchanges: Exchange) -> Recorder:
    """`exchanges` recorded into `out` as the proxy records them; the recorder, closed."""
    rec = Recorder("https://api.example", out, "rec", redactor())
    for ex in exchanges:
        rec.add(ex)
    rec.close()
    return rec


def answer(target: str, content_type: str, *chunks: bytes, coding: str = "", request: bytes = REQUEST) -> Exchange:
    ex = Exchange("POST", target, [("content-type", "application/json")], request)
    ex.status = 200
    ex.response_headers = [("content-type", content_type)] + ([("content-encoding", coding)] if coding else [])
    ex.chunks = [(0.01 * i, c) for i, c in enumerate(chunks)]
    return ex


def delta(text: str) -> bytes:
    return eventstream.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}})


STREAM_START = eventstream.event("messageStart", {"role": "assistant"})


def _cut_inside(message: bytes) -> bytes:
    return message[:len(message) - 10]  # the key whole in the bytes, the message's end missing


def _bad_crc(message: bytes) -> bytes:
    return message[:8] + struct.pack(">I", zlib.crc32(message[:8]) ^ 1) + message[12:]


def _four_gb(message: bytes) -> bytes:
    prelude = struct.pack(">II", 0xFFFF_FF00, struct.unpack(">I", message[4:8])[0])
    return prelude + struct.pack(">I", zlib.crc32(prelude)) + message[12:]


@pytest.mark.parametrize("spoil", [_cut_inside, _bad_crc, _four_gb], ids=["cut-inside", "bad-crc", "4-gb-length"])
def test_an_event_stream_whose_message_with_the_key_cannot_be_decoded_is_withheld_with_a_note(
        spoil: Callable[[bytes], bytes], tmp_path: Path) -> None:
    data = STREAM_START + delta("a key: ") + spoil(delta(f"{KEY} in it"))
    rec = record(tmp_path, answer(CONVERSE, eventstream.MEDIA, data[:50], data[50:]))
    assert_nowhere(KEY, tmp_path)
    [note] = [p for p in rec.problems if "not written" in p]
    assert note.startswith("rec-1: request 1: response: ") and "after message 2" in note
    assert "cannot be searched for secrets" in note


def test_a_key_split_over_two_data_frames_that_are_not_json_is_masked_whole(tmp_path: Path) -> None:
    first, second = KEY[:20], KEY[20:]
    body = f"data: here is {first}\n\ndata: {second} ok\n\ndata: [DONE]\n\n".encode()
    record(tmp_path, answer(CHAT, "text/event-stream", body))
    assert_nowhere(KEY, tmp_path)
    assert "data: here is [REDACTED" in (tmp_path / "rec-1.cassette").read_text()


def test_a_key_sent_as_json_unicode_escapes_in_the_request_is_masked(tmp_path: Path) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY[:8]) + KEY[8:]
    request = b'{"model":"m","messages":[{"role":"user","content":"my key ' + escaped.encode() + b'"}]}'
    answered = b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}'
    record(tmp_path, answer(CHAT, "application/json", answered, request=request))
    assert_nowhere(KEY, tmp_path)
    assert "my key [REDACTED" in (tmp_path / "rec-1.cassette").read_text()


def test_a_key_in_an_event_stream_header_or_a_payload_that_is_not_json_is_masked(tmp_path: Path) -> None:
    header = eventstream.message({":event-type": "contentBlockDelta", "x-note": KEY, ":message-type": "event"},
                                 b'{"contentBlockIndex":0,"delta":{"text":"ok"}}')
    not_json = eventstream.message({":event-type": "odd", ":message-type": "event"}, f"key={KEY}".encode())
    rec = record(tmp_path, answer(CONVERSE, eventstream.MEDIA, STREAM_START + header + not_json))
    assert_nowhere(KEY, tmp_path)
    assert not [p for p in rec.problems if "not written" in p]  # every message decodes: nothing withheld


# ---------------------------------------------------------------- generated


KEYS = st.one_of(
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=40, max_size=60).map(
        lambda s: "sk-ant-api03-" + s),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=48, max_size=48).map(
        lambda s: "sk-proj-" + s),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", min_size=35, max_size=35).map(
        lambda s: "AIza" + s),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
)


def _escaped(text: str, which: set[int]) -> str:
    """`text` as a JSON string literal, the characters at `which` written as ``\\u`` escapes."""
    return '"' + "".join(f"\\u{ord(c):04x}" if i in which else json.dumps(c)[1:-1] for i, c in enumerate(text)) + '"'


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[str, Exchange]:
    """A key, and an exchange that carries it in one of the framings a client or an upstream uses."""
    key = draw(KEYS)
    text = f"here is {key} ok"
    pieces = _pieces(text, draw(st.lists(st.integers(0, 200), max_size=5)))
    escapes = set(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    framing = draw(st.sampled_from(["sse-json", "sse-text", "json", "json-array", "request", "eventstream",
                                    "query"]))
    target, media, request = CHAT, "application/json", REQUEST
    if framing == "sse-json":
        media = "text/event-stream"
        body = b"".join(b'data: {"choices":[{"index":0,"delta":{"content":' + _escaped(p, escapes).encode()
                        + b"}}]}\n\n" for p in pieces) + b"data: [DONE]\n\n"
    elif framing == "json-array":  # Gemini's streamGenerateContent without alt=sse
        target = "/v1beta/models/m:streamGenerateContent"
        body = b"[" + b",\r\n".join(b'{"candidates":[{"content":{"parts":[{"text":' + _escaped(p, escapes).encode()
                                     + b'}],"role":"model"},"index":0}]}' for p in pieces) + b"]"
    elif framing == "sse-text":
        media, body = "text/event-stream", b"".join(f"data: {p}\n\n".encode() for p in pieces)
    elif framing == "json":
        body = b'{"choices":[{"index":0,"message":{"role":"assistant","content":' + _escaped(text, escapes).encode() \
            + b'},"finish_reason":"stop"}]}'
    elif framing == "request":
        request = b'{"model":"m","messages":[{"role":"user","content":' + _escaped(text, escapes).encode() + b"}]}"
        body = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'
    elif framing == "query":
        target = CHAT + "?note=" + "".join(f"%{ord(c):02X}" if i in escapes else c for i, c in enumerate(text))
        body = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'
    else:
        target, media = CONVERSE, eventstream.MEDIA
        body = STREAM_START + b"".join(delta(p) for p in pieces)
        spoil = draw(st.sampled_from([None, _cut_inside, _bad_crc, _four_gb]))
        if spoil is not None:
            body = body[:len(STREAM_START)] + spoil(body[len(STREAM_START):])
    if framing in ("sse-json", "json-array") and draw(st.booleans()):  # broken off inside the last chunk's JSON
        body = body.removesuffix(b"data: [DONE]\n\n").removesuffix(b"]")
        body = body[:len(body) - draw(st.integers(4, 16))]
    coding = draw(st.sampled_from(["", "gzip", "deflate"]))
    sent = gzip.compress(body) if coding == "gzip" else zlib.compress(body) if coding == "deflate" else body
    chunks = _pieces(sent.decode("latin-1"), draw(st.lists(st.integers(0, 4000), max_size=6)))
    return key, answer(target, media, *(c.encode("latin-1") for c in chunks), coding=coding, request=request)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exchanges())
def test_no_generated_key_reaches_any_written_file_whatever_the_framing(case: tuple[str, Exchange]) -> None:
    key, ex = case
    with tempfile.TemporaryDirectory(prefix="stopbench-secrets-") as tmp:
        rec = record(Path(tmp), ex)
        assert rec.lost == {}
        assert_nowhere(key, Path(tmp))


def test_a_key_in_a_header_name_or_value_is_masked(tmp_path: Path) -> None:
    key = KEY.lower()  # a header's name is written in lower case
    body = b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}'
    ex = answer(CHAT, "application/json", body)
    ex.request_headers += [("x-note", f"mine is {key}"), (f"x-{key}", "1")]
    ex.response_headers += [("x-echo", key), (f"x-{key}", "1")]
    record(tmp_path, ex)
    assert_nowhere(key, tmp_path)


def test_a_key_split_into_a_stream_event_that_was_cut_off_is_not_written(tmp_path: Path) -> None:
    first, second = KEY[:16], KEY[16:]
    events = (f'data: {{"choices":[{{"index":0,"delta":{{"content":"key: {first}"}}}}]}}\n\n'
              f'data: {{"choices":[{{"index":0,"delta":{{"content":"{second} and more').encode()
    ex = answer(CHAT, "text/event-stream", events)
    ex.error = ("connection_reset", "the upstream broke off the answer")
    rec = record(tmp_path, ex)
    assert_nowhere(KEY, tmp_path)
    assert any("an event cut off" in p for p in rec.problems)


def test_a_key_split_into_a_json_array_chunk_that_was_cut_off_is_not_written(tmp_path: Path) -> None:
    first, second = KEY[:16], KEY[16:]
    chunks = (f'[{{"candidates":[{{"content":{{"parts":[{{"text":"key: {first}"}}]}}}}]}},\r\n'
              f'{{"candidates":[{{"content":{{"parts":[{{"text":"{second} and more').encode()
    rec = record(tmp_path, answer("/v1beta/models/m:streamGenerateContent", "application/json", chunks))
    assert_nowhere(KEY, tmp_path)
    assert any("a chunk cut off" in p for p in rec.problems)
