"""`stopbench record` keeps a body's bytes and bounds what it inflates (issue 36): bytes that are not
UTF-8 in a JSON or SSE answer come back from the cassette as they came (``raw``, base64, beside the
text), a brotli body is recorded decoded, and a gzip, deflate or brotli body past the importer's
inflation bounds (made small here) is withheld with a note instead of filling the disk."""

from __future__ import annotations

import builtins
import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from bench.record import Exchange, Recorder, mask, redactor, response_bytes
from bench.record.recording import BOUNDS, Bounds, interaction
from bench.wires.capture import MAX_INFLATED, MAX_RATIO
from tests.record.recording import cassette

CHAT = "/v1/chat/completions"
REQUEST = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
KEY = "sk-ant-api03-" + "Qx9" * 14
SMALL = Bounds(limit=1 << 20, ratio=50, floor=4096)
"""Bounds small enough for a bomb of a few hundred KiB."""


def answer(body: bytes, content_type: str = "application/json", coding: str = "") -> Exchange:
    ex = Exchange("POST", CHAT, [("content-type", "application/json")], REQUEST)
    ex.status = 200
    ex.response_headers = [("content-type", content_type)] + ([("content-encoding", coding)] if coding else [])
    ex.chunks = [(0.0, body)]
    return ex


def record(out: Path, ex: Exchange, bounds: Bounds = BOUNDS) -> Recorder:
    rec = Recorder("https://api.example", out, "rec", redactor(), bounds)
    rec.add(ex)
    rec.close()
    return rec


def test_the_default_bounds_are_the_importers() -> None:
    assert (BOUNDS.limit, BOUNDS.ratio) == (MAX_INFLATED, MAX_RATIO)


def test_bytes_that_are_not_utf8_in_a_json_answer_are_kept_as_they_came(tmp_path: Path) -> None:
    body = b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"caf\xe9 \xff"}}]}'
    record(tmp_path, answer(body))
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert response_bytes(inter) == body
    assert "caf\ufffd \ufffd" in inter["response"]["body"]["string"]  # the text beside them, for the importer
    assert (tmp_path / "rec-1.yaml").exists()


def test_bytes_that_are_not_utf8_in_a_stream_are_kept_and_the_key_beside_them_masked(tmp_path: Path) -> None:
    body = (b'data: {"choices":[{"index":0,"delta":{"content":"\xfe ' + KEY[:20].encode() + b'"}}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{"content":"' + KEY[20:].encode() + b' \x80"}}]}\n\n'
            b"data: [DONE]\n\n")
    record(tmp_path, answer(body, "text/event-stream"))
    [inter] = cassette(tmp_path / "rec-1.cassette")
    kept = response_bytes(inter)
    assert kept == body.replace(KEY[:20].encode(), mask(len(KEY))[:20].encode()).replace(
        KEY[20:].encode(), mask(len(KEY))[20:].encode())
    assert KEY[20:] not in (tmp_path / "rec-1.cassette").read_text()


BROTLI_ANSWER = b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}'


def test_a_brotli_answer_is_recorded_decoded(tmp_path: Path) -> None:
    brotli = pytest.importorskip("brotli")
    rec = record(tmp_path, answer(brotli.compress(BROTLI_ANSWER), coding="br"))
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert response_bytes(inter) == BROTLI_ANSWER and rec.problems == []


def test_a_brotli_answer_without_a_decoder_is_withheld_with_a_note(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_brotli(name: str, *args: Any, **kw: Any) -> Any:
        if name == "brotli":
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_brotli)
    rec = record(tmp_path, answer(b"\x1b\x2b\x00\xf8" + KEY.encode(), coding="br"))
    assert KEY not in (tmp_path / "rec-1.cassette").read_text()
    assert any("content-encoding 'br' and no brotli decoder installed" in p for p in rec.problems)


def _bomb(coding: str, size: int) -> bytes:
    zeros = b"\0" * size
    if coding == "gzip":
        return gzip.compress(zeros)
    if coding == "deflate":
        return zlib.compress(zeros)
    return __import__("brotli").compress(zeros)  # type: ignore[no-any-return]


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_body_that_inflates_past_the_bounds_is_withheld_with_a_note(coding: str, tmp_path: Path) -> None:
    if coding == "br":
        pytest.importorskip("brotli")
    bomb = _bomb(coding, 8 << 20)  # 8 MiB of zeros: a few KiB compressed, past the small bounds' ratio
    rec = record(tmp_path, answer(bomb, coding=coding), SMALL)
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert inter["response"]["body"]["string"] == ""
    withheld = inter["response"]["withheld"]
    assert f"{coding} body inflates past 50 times its" in withheld
    assert "the bound on a body stopbench unpacks" in withheld
    assert any(withheld in p for p in rec.problems)
    assert (tmp_path / "rec-1.cassette").stat().st_size < 10_000


def test_a_body_past_the_size_bound_is_withheld_whatever_its_ratio(tmp_path: Path) -> None:
    text = json.dumps({"choices": [{"index": 0, "message": {"content": "x" * (2 << 20)}}]}).encode()
    inter = interaction(answer(gzip.compress(text), coding="gzip"), "https://api.example", redactor(),
                        Bounds(limit=1 << 20, ratio=10_000, floor=4096))
    assert "gzip body inflates past 1 MiB" in inter["response"]["withheld"]


def test_a_gzip_stream_the_upstream_broke_off_keeps_what_it_inflates_to(tmp_path: Path) -> None:
    body = b"".join(b'data: {"choices":[{"index":0,"delta":{"content":"part %d"}}]}\n\n' % i for i in range(500))
    ex = answer(gzip.compress(body)[:-12], "text/event-stream", "gzip")  # its 8-byte trailer and more cut off
    ex.error = ("connection_reset", "the upstream broke off the answer")
    inter = interaction(ex, "https://api.example", redactor())
    kept = inter["response"]["body"]["string"]
    assert len(kept) > 1000 and body.startswith(kept.encode())
    assert "gzip" not in inter["response"].get("withheld", "")  # only the event cut off mid-JSON, if any


def test_the_proxy_under_faults_inflates_within_the_bounds_and_passes_a_bomb_on_as_it_came(tmp_path: Path) -> None:
    import httpx

    from bench.faults import load_recipe
    from tests.record.raw_upstream import raw_upstream, response
    from tests.record.recording import recording_proxy

    bomb = _bomb("gzip", 8 << 20)
    sent = response("200 OK", {"content-type": "text/event-stream", "content-encoding": "gzip",
                               "content-length": str(len(bomb))}, bomb)
    with raw_upstream(sent, "close") as upstream, \
            recording_proxy(upstream, tmp_path, faults=load_recipe("cut-after-3"), bounds=SMALL) as (proxy, rec), \
            httpx.Client(timeout=10) as http:
        got = http.post(f"{proxy.url}{CHAT}", content=REQUEST, headers={"accept-encoding": "gzip"})
    assert got.headers["content-encoding"] == "gzip" and got.content == b"\0" * (8 << 20)  # as the upstream sent it
    assert any("no fault injected (gzip body inflates past 50 times" in p for p in rec.problems)
