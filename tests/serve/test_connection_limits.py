"""The server's connections are bounded (issue 24 item 3): an idle socket, a half-sent request line and
half-sent headers after a kept-alive response are closed within the header deadline; a head over the
limit gets 400; a client that stops reading has its response cut after the write timeout, logged as
one line, not a traceback. On both stacks: uvloop + httptools where they import, asyncio + h11."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from bench.serve import Session
from bench.serve.refusals import MAX_HEAD
from bench.serve.server import BackgroundServer, Stack, fast_stack
from tests.serve.serving import CHAT_TOOLS, make_sequence

DEADLINE = 0.6
STACKS = [pytest.param("pure", id="h11"),
          pytest.param("fast", id="httptools", marks=pytest.mark.skipif(not fast_stack(), reason="uvloop/httptools"))]
TEXT = [{"finish": "stop", "content": "done"}]


@contextmanager
def server(stack: Stack, turns: list[dict[str, Any]] | None = None, **options: Any) -> Iterator[BackgroundServer]:
    seq = make_sequence(turns or TEXT, then="repeat")
    with BackgroundServer(Session(seq, **options), stack=stack, header_timeout=DEADLINE) as srv:
        yield srv


def closed_after(conn: socket.socket, limit: float = 5.0) -> float:
    """Seconds until the server closes `conn` (reads whatever it sends first)."""
    started = time.monotonic()
    conn.settimeout(limit)
    try:
        while conn.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


REQUEST = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS}).encode()
HEAD = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % len(REQUEST))


@pytest.mark.parametrize("stack", STACKS)
def test_the_server_runs_on_the_stack_asked_for(stack: Stack) -> None:
    with server(stack) as srv:
        got = httpx.post(srv.base_url + "/chat/completions", content=REQUEST, timeout=5)
        http = srv.server.config.http_protocol_class.__mro__
    assert got.status_code == 200 and got.json()["choices"][0]["message"]["content"] == "done"
    assert any(c.__name__ == ("HttpToolsProtocol" if stack == "fast" else "H11Protocol") for c in http)


@pytest.mark.parametrize("stack", STACKS)
def test_a_socket_that_sends_nothing_is_closed_at_the_header_deadline(stack: Stack) -> None:
    with server(stack) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        took = closed_after(conn)
    assert DEADLINE * 0.8 <= took < DEADLINE + 1.0, took


@pytest.mark.parametrize("stack", STACKS)
def test_a_half_sent_request_line_is_closed_at_the_header_deadline(stack: Stack) -> None:
    with server(stack) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(b"POST /v1/chat/compl")
        time.sleep(DEADLINE / 2)
        conn.sendall(b"etions HTTP/1.1\r\nhost: x\r\n")  # more bytes do not move the deadline
        took = closed_after(conn) + DEADLINE / 2
    assert DEADLINE * 0.8 <= took < DEADLINE + 1.0, took


@pytest.mark.parametrize("stack", STACKS)
def test_half_sent_headers_after_a_kept_alive_response_are_closed_at_the_header_deadline(stack: Stack) -> None:
    with server(stack) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(HEAD + REQUEST)
        conn.settimeout(5)
        got = b""
        while b'"done"' not in got:
            got += conn.recv(65536)
        assert got.startswith(b"HTTP/1.1 200")
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhos")
        took = closed_after(conn)
    assert DEADLINE * 0.8 <= took < DEADLINE + 1.0, took


@pytest.mark.parametrize("stack", STACKS)
def test_a_request_that_takes_longer_than_the_header_deadline_to_answer_is_not_cut(stack: Stack) -> None:
    # the deadline is for the head; a body that arrives slowly is the app's read timeout's business
    with server(stack) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(HEAD + REQUEST[:10])
        time.sleep(DEADLINE * 1.5)
        conn.sendall(REQUEST[10:])
        conn.settimeout(5)
        got = b""
        while b'"done"' not in got:
            part = conn.recv(65536)
            assert part, got
            got += part
    assert got.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("stack", STACKS)
def test_a_head_over_the_limit_gets_400_and_is_closed(stack: Stack) -> None:
    with server(stack) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
        try:
            for _ in range(MAX_HEAD // 1000 + 2):
                conn.sendall(b"x-filler: " + b"a" * 1000 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        conn.settimeout(5)
        try:
            got = conn.recv(65536)
        except ConnectionResetError:
            got = b""
        took = closed_after(conn)
    assert got.startswith(b"HTTP/1.1 400"), got[:100]
    assert took < DEADLINE, took


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("stack", STACKS)
def test_a_client_that_stops_reading_is_cut_after_the_write_timeout_with_one_log_line(stack: Stack) -> None:
    big = [{"finish": "stop", "content": "x" * (24 * 1024 * 1024)}]  # more than every buffer on the way
    lines = Lines()
    log = logging.getLogger("uvicorn.error")
    try:
        with server(stack, big, write_timeout=0.5) as srv:
            log.addHandler(lines)  # after uvicorn configured its logging (which drops the handlers there)
            conn = socket.socket()
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.connect(("127.0.0.1", srv.port))
            conn.sendall(HEAD + REQUEST)
            deadline = time.monotonic() + 10
            while not lines.records and time.monotonic() < deadline:
                time.sleep(0.05)
            # the client neither reads nor goes: the server drops the connection and what it holds
            while srv.server.server_state.connections and time.monotonic() < deadline:
                time.sleep(0.05)
            held = len(srv.server.server_state.connections)
            conn.close()
    finally:
        log.removeHandler(lines)
    assert held == 0
    assert len(lines.records) == 1, [r.getMessage() for r in lines.records]
    record = lines.records[0]
    assert record.exc_info is None and "\n" not in record.getMessage()
    assert "stopped reading for 0.5 s" in record.getMessage() and "/v1/chat/completions" in record.getMessage()
