"""What a client's reads see of a delivery plan (bench.serve.respond): coalesced frames arrive in one
read, frames delivered one by one arrive in reads of their own spaced by their delays; a cut plan
breaks the connection; a plan is built from a wire's answer as the server used to send it."""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from bench.serve.render import Context, render
from bench.serve.respond import Frame, Plan, PlanResponse, Template, json_plan, plan
from bench.serve.server import BackgroundUvicorn
from tests.serve.serving import make_sequence

FRAMES = tuple(f"data: {{\"n\": {n}, \"pad\": \"{'x' * 200}\"}}\n\n".encode() for n in range(8))
STREAM = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))


@contextmanager
def delivering(p: Plan, write_timeout: float = 30.0) -> Iterator[BackgroundUvicorn]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await PlanResponse(p, write_timeout)(scope, receive, send)

    cfg = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_level="critical", http="h11")
    with BackgroundUvicorn(cfg, "plan server", "plan-test") as srv:
        yield srv


def reads(port: int, until: float = 5.0) -> list[tuple[float, bytes]]:
    """Every read of one GET's response, with the time it returned, until the server closes."""
    out: list[tuple[float, bytes]] = []
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(until)
        conn.sendall(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        while True:
            try:
                got = conn.recv(1 << 20)
            except ConnectionResetError:
                break
            if not got:
                break
            out.append((time.monotonic(), got))
    return out


def test_coalesced_frames_arrive_in_one_read() -> None:
    # one write of the whole body: on a loopback socket a write under 64 KB is one segment, so every
    # frame is in the same read (the headers and the chunked end are writes of their own)
    with delivering(Plan(200, STREAM, tuple(Frame(f) for f in FRAMES), "close")) as srv:
        got = reads(srv.port)
    holding = [k for k, (_, data) in enumerate(got) if any(f in data for f in FRAMES)]
    assert len(holding) == 1, [len(d) for _, d in got]
    assert all(f in got[holding[0]][1] for f in FRAMES)


def test_frames_one_by_one_with_delays_arrive_in_reads_spaced_by_the_delays() -> None:
    delay = 0.15
    frames = tuple(Frame(f, delay if n else 0.0) for n, f in enumerate(FRAMES[:4]))
    with delivering(Plan(200, STREAM, frames, "close", one_by_one=True)) as srv:
        got = reads(srv.port)
    arrived = []
    for f in FRAMES[:4]:
        hit = [t for t, data in got if f in data]
        assert len(hit) == 1, f"frame {f[:12]!r} split or missing"
        arrived.append(hit[0])
    assert len({id(d) for f in FRAMES[:4] for _, d in got if f in d}) == 4  # four reads, one frame each
    gaps = [b - a for a, b in itertools.pairwise(arrived)]
    assert all(g >= delay * 0.8 for g in gaps), gaps


def test_a_cut_plan_breaks_the_connection_without_the_chunked_end() -> None:
    with delivering(Plan(200, STREAM, tuple(Frame(f) for f in FRAMES[:2]), "cut")) as srv:
        got = b"".join(d for _, d in reads(srv.port))
    assert FRAMES[0] in got and FRAMES[1] in got
    assert not got.endswith(b"0\r\n\r\n")


async def _messages(p: Plan) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    try:
        await PlanResponse(p, 30.0)({"type": "http", "method": "GET", "path": "/"}, receive, send)
    except Exception as exc:  # a cut plan ends by raising
        sent.append({"type": "raised", "exc": type(exc).__name__})
    return sent


def _bodies(p: Plan) -> list[dict[str, Any]]:
    return [m for m in asyncio.run(_messages(p)) if m["type"] == "http.response.body"]


def test_the_writer_coalesces_unless_a_frame_waits_or_the_plan_asks_one_by_one() -> None:
    frames = tuple(Frame(f) for f in FRAMES[:3])
    assert [(m["body"], m["more_body"]) for m in _bodies(Plan(200, STREAM, frames, "close"))] == [
        (b"".join(FRAMES[:3]), True), (b"", False)]
    assert [m["body"] for m in _bodies(Plan(200, STREAM, frames, "close", one_by_one=True))] == [*FRAMES[:3], b""]
    waits = (*frames[:2], Frame(FRAMES[2], 0.01))
    assert [m["body"] for m in _bodies(Plan(200, STREAM, waits, "close"))] == [*FRAMES[:3], b""]
    cut = asyncio.run(_messages(Plan(200, STREAM, frames, "cut")))
    assert cut[-1] == {"type": "raised", "exc": "CutConnection"}
    assert all(m.get("more_body", True) for m in cut if m["type"] == "http.response.body")


def test_a_json_answer_is_one_frame_with_its_length_as_starlette_sends_it() -> None:
    p = json_plan({"a": "é", "b": [1, 2]}, 201, {"X-Amzn-ErrorType": "ThrottlingException"})
    assert p.frames == (Frame('{"a":"é","b":[1,2]}'.encode()),)
    assert dict(p.headers) == {"x-amzn-errortype": "ThrottlingException", "content-length": str(len(p.frames[0].data)),
                               "content-type": "application/json"}
    assert (p.status, p.end, p.coalesced) == (201, "close", True)


def test_a_gemini_in_stream_error_waits_before_its_last_frame_so_it_is_a_read_of_its_own() -> None:
    seq = make_sequence([{"finish": "error", "content": "partial",
                          "error": {"kind": "stream_error", "message": "boom"}}], dialect="gemini")
    out = render("gemini", seq.turns[0], Context("r", "m", "STOP", sse=True), True)
    assert out.settle > 0
    p = plan(out)
    assert p.frames[-1].delay == out.settle and not p.coalesced
    assert [f.data for f in p.frames] == list(out.frames)


def test_a_template_filled_whole_is_the_same_bytes_in_one_frame_unless_its_frames_go_one_by_one() -> None:
    mark = "chatcmpl-PLACEHOLDER"
    frames = tuple(Frame(f.replace(b'"n"', f'"{mark}"'.encode())) for f in FRAMES[:3])
    for p in (Plan(200, STREAM, frames, "close"), Plan(200, STREAM, frames, "cut")):
        t = Template.of(p, mark)
        split, whole = t.fill("chatcmpl-7"), t.fill("chatcmpl-7", whole=True)
        assert len(split.frames) == 3 and len(whole.frames) == 1
        assert whole.frames[0].data == b"".join(f.data for f in split.frames) and b"chatcmpl-7" in whole.frames[0].data
        assert mark.encode() not in whole.frames[0].data and whole.end == p.end
    paced = (Plan(200, STREAM, frames, "close", one_by_one=True),
             Plan(200, STREAM, (*frames, Frame(b"x", 0.1)), "close"))
    for p in paced:
        t = Template.of(p, mark)
        assert t.fill("chatcmpl-7", whole=True).frames == t.fill("chatcmpl-7").frames


def test_a_template_s_response_sends_what_its_filled_plan_sends() -> None:
    mark = "chatcmpl-PLACEHOLDER"
    frames = tuple(Frame(f.replace(b'"n"', f'"{mark}"'.encode())) for f in FRAMES[:3])
    plans = (Plan(200, STREAM, frames, "close"), Plan(200, STREAM, frames, "cut"),
             json_plan({"id": mark, "choices": []}, 200, {"x-request-id": "r1"}),
             Plan(200, STREAM, (*frames, Frame(b"x", 0.01)), "close"))

    async def sent(response: PlanResponse) -> list[Any]:
        messages: list[Any] = []

        async def send(m: Any) -> None:
            messages.append(m)

        async def receive() -> Any:
            return {"type": "http.disconnect"}

        try:
            await response({"type": "http", "method": "POST", "path": "/"}, receive, send)
        except Exception as exc:  # a cut plan ends by breaking the connection
            messages.append(type(exc).__name__)
        return messages

    for p in plans:
        t = Template.of(p, mark)
        for rid in ("chatcmpl-7", "chatcmpl-stopbench-12-345"):
            fast = asyncio.run(sent(t.respond(rid, 30.0)))
            planned = asyncio.run(sent(PlanResponse(t.fill(rid, whole=True), 30.0)))
            assert fast == planned and b"".join(m["body"] for m in fast[1:] if isinstance(m, dict)).count(
                rid.encode()) >= 1
