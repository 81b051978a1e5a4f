"""Shared helpers: sequences built in code and a replay server on an ephemeral loopback port."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.catalogue.load import parse_sequence
from bench.engine.model import Sequence
from bench.serve import BackgroundServer, Session


def make_sequence(turns: list[dict[str, Any]], dialect: str = "openai-chat", then: str = "end",
                  sid: str = "serve-test") -> Sequence:
    return parse_sequence({"title": "served in a test", "kind": "constructed", "dialect": dialect,
                           "source": "tests/serve", "then": then, "turns": turns}, sid)


@contextmanager
def serving(sequence: Sequence, **options: Any) -> Iterator[BackgroundServer]:
    with BackgroundServer(Session(sequence, **options)) as srv:
        yield srv


# a real client offers its tools with every request (a request offering none is answered in text)
TOOL = {"name": "read_file", "description": "read a file", "parameters": {"type": "object", "properties": {}}}
CHAT_TOOLS: list[Any] = [{"type": "function", "function": TOOL}]
CLAUDE_TOOLS: list[Any] = [{"name": "read_file", "description": "read a file", "input_schema": TOOL["parameters"]}]
RESPONSES_TOOLS: list[Any] = [{"type": "function", **TOOL}]
GEMINI_TOOLS: list[Any] = [{"functionDeclarations": [TOOL]}]


SEQ = """\
title: cli test
kind: constructed
dialect: openai-chat
source: tests/serve
then: end
turns:
  - finish: tool_calls
    content: null
    tool_calls:
      - {id: call_1, name: read_file, arguments: '{"path": "a"}'}
  - finish: stop
    content: answer
"""
"""The sequence ``cli-seq`` that :func:`serve_command` serves: one tool call, then the answer."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServedProcess:
    """A ``stopbench serve`` process: its root URL, the file it writes its observed steps to on SIGTERM,
    and (once it has ended) its stderr."""

    process: subprocess.Popen[bytes]
    url: str
    observed: Path
    stderr: bytes = b""


@contextmanager
def serve_command(tmp_path: Path, sequence: str | None = None) -> Iterator[ServedProcess]:
    """``stopbench serve cli-seq`` (:data:`SEQ`), or ``stopbench serve SEQUENCE`` of the shipped catalogue,
    as a process on a free port, once it answers; on leaving, SIGTERM and wait for it to end (it writes
    its observed steps then)."""
    where: list[str] = []
    if sequence is None:
        (tmp_path / "seqs").mkdir()
        (tmp_path / "seqs" / "cli-seq.yaml").write_text(SEQ, encoding="utf-8")
        where = ["--sequences", str(tmp_path / "seqs")]
    port = free_port()
    observed = tmp_path / "observed.json"
    proc = subprocess.Popen([sys.executable, "-m", "bench", "serve", sequence or "cli-seq", "--port", str(port),
                             *where, "--observed", str(observed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    served = ServedProcess(proc, f"http://127.0.0.1:{port}", observed)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(served.url + "/_stopbench/state", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
        yield served
    finally:
        proc.send_signal(signal.SIGTERM)
        _, served.stderr = proc.communicate(timeout=20)


async def asgi_request(app: Any, path: str, body: bytes, sent: list[Any], method: str = "POST") -> None:
    """One request with `body` straight into an ASGI `app` (no sockets), every message it sends appended
    to `sent` (what it sent before raising is kept: a plan that breaks the connection raises)."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]}
    given = False

    async def receive() -> Any:
        nonlocal given
        if given:
            return {"type": "http.disconnect"}
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)


def status_of(sent: list[Any]) -> int:
    """The status an ASGI app's messages started its response with (0: none)."""
    return next((m["status"] for m in sent if isinstance(m, dict) and m["type"] == "http.response.start"), 0)

