"""`stopbench record` when the upstream or the disk fails (issue 36): the recording says what the client
got (a connection broken off is a ``connection_reset``, no answer a 504 ``timeout``), a request without an
answer is still recorded, a write that fails is named and ends non-zero, an unwritable ``--out`` is refused
before the proxy starts, and an upstream reset is one line, not a traceback."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from bench.catalogue.load import load_sequence
from bench.catalogue.yaml_read import read_yaml
from bench.cli import cli
from tests.helpers import ROOT
from tests.record.raw_upstream import chunk, raw_upstream, response
from tests.record.recording import cassette, recording_proxy
from tests.serve.serving import free_port

CHAT = "/v1/chat/completions"
GOOGLE_KEY = "AIza" + "Kq8" * 11 + "zz"
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"half an answer"}}]}\n\n'
SSE = {"content-type": "text/event-stream", "transfer-encoding": "chunked"}
ANSWER = json.dumps({"id": "c1", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "a whole answer"}}]}).encode()


def _through(upstream: str, out: Path, **kw: object) -> httpx.Response | httpx.HTTPError:
    """One chat request through a recording proxy in front of `upstream`: the answer, or the error the
    client got."""
    with recording_proxy(upstream, out, **kw) as (proxy, rec), httpx.Client(timeout=10) as http:  # type: ignore[arg-type]
        try:
            got: httpx.Response | httpx.HTTPError = http.post(proxy.url + CHAT, json=BODY)
        except httpx.HTTPError as exc:
            got = exc
        deadline = time.monotonic() + 10
        while not (out / "rec-1.yaml").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert rec.lost == {}
    return got


@pytest.mark.parametrize("then", ["reset", "close"])
def test_an_upstream_that_breaks_a_stream_off_is_recorded_as_the_broken_connection_the_client_got(
        then: str, tmp_path: Path) -> None:
    sent = response("200 OK", SSE, chunk(EVENT))
    with raw_upstream(sent, then) as upstream:  # type: ignore[arg-type]
        got = _through(upstream, tmp_path)
    assert isinstance(got, httpx.RemoteProtocolError)  # the client's connection was broken too
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert inter["response"]["error"]["kind"] == "connection_reset"
    turn = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert turn.finish == "error" and turn.error is not None and turn.error.kind == "connection_reset"
    assert turn.content == "half an answer"  # what the client had before the break
    source = read_yaml(tmp_path / "rec-1.yaml")["source"]
    assert "upstream failures: answer 1: the upstream broke off the answer after" in source


def test_an_upstream_that_stalls_mid_stream_past_the_timeout_is_recorded_as_the_broken_connection(
        tmp_path: Path) -> None:
    with raw_upstream(response("200 OK", SSE, chunk(EVENT)), "stall") as upstream:
        got = _through(upstream, tmp_path, client=httpx.AsyncClient(timeout=httpx.Timeout(0.3)))
    assert isinstance(got, httpx.RemoteProtocolError)
    turn = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert turn.error is not None and turn.error.kind == "connection_reset" and "(ReadTimeout)" in turn.error.message
    assert turn.content == "half an answer"


def test_a_body_shorter_than_its_content_length_is_a_broken_connection_not_a_finished_answer(
        tmp_path: Path) -> None:
    sent = response("200 OK", {"content-type": "application/json", "content-length": str(len(ANSWER) + 100)}, ANSWER)
    with raw_upstream(sent, "close") as upstream:
        got = _through(upstream, tmp_path)
    assert isinstance(got, httpx.RemoteProtocolError)
    turn = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert turn.finish == "error" and turn.error is not None and turn.error.kind == "connection_reset"
    assert "the upstream broke off the answer after" in turn.error.message
    assert "RemoteProtocolError" in turn.error.message


def test_an_upstream_that_never_answers_is_recorded_as_the_504_the_client_got(tmp_path: Path) -> None:
    with raw_upstream(b"", "hang") as upstream:
        got = _through(upstream, tmp_path, client=httpx.AsyncClient(timeout=httpx.Timeout(0.3)))
    assert isinstance(got, httpx.Response) and got.status_code == 504
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert inter["request"]["body"] == json.dumps(BODY, separators=(",", ":"))
    assert "the upstream gave no answer (ReadTimeout" in inter["response"]["answered_by"]
    turn = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert turn.error is not None and turn.error.kind == "timeout" and turn.error.status == 504


def _record(upstream: str, out: Path, port: int, *, prelude: str = "") -> subprocess.Popen[str]:
    """`stopbench record` as a process (after `prelude`, Python run first in it), waiting for its port."""
    code = f"{prelude}\nfrom bench.cli import main\nmain()"
    proc = subprocess.Popen([sys.executable, "-c", code, "record", "--upstream", upstream, "--port", str(port),
                             "--out", str(out), "--name", "rec"], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=30)[1]


def test_an_upstream_reset_under_record_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    port = free_port()
    with raw_upstream(response("200 OK", SSE, chunk(EVENT)), "reset") as upstream:
        proc = _record(upstream, tmp_path, port)
        try:
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(f"http://127.0.0.1:{port}{CHAT}?key={GOOGLE_KEY}", json=BODY, timeout=10)
        finally:
            err = _stop(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and GOOGLE_KEY not in err
    [line] = [line for line in err.splitlines() if "broke off" in line]
    assert re.fullmatch(re.escape(f"WARNING:  stopbench record: POST {CHAT}?key=[REDACTED]: ")
                        + "the upstream broke off the answer after "
                        r"\d+ bytes \(ReadError\); the proxy broke the client's connection too", line), line


def test_a_request_the_upstream_never_answers_is_recorded_when_the_proxy_stops(tmp_path: Path) -> None:
    port = free_port()
    with raw_upstream(b"", "hang") as upstream:
        proc = _record(upstream, tmp_path, port)
        waiting = threading.Thread(target=lambda: _quietly(f"http://127.0.0.1:{port}{CHAT}"), daemon=True)
        waiting.start()
        try:
            time.sleep(0.3)  # the request reaches the proxy and waits on the upstream
        finally:
            err = _stop(proc)
    assert proc.returncode == 0, err
    assert "recorded 1 conversation(s)" in err and "Traceback" not in err
    [inter] = cassette(tmp_path / "rec-1.cassette")
    assert inter["request"]["method"] == "POST"
    assert "the proxy stopped before it did" in inter["response"]["answered_by"]
    turn = load_sequence(tmp_path / "rec-1.yaml").turns[0]
    assert turn.error is not None and turn.error.kind == "timeout"


def _quietly(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(url, json=BODY, timeout=30)


FULL_DISK = """
import errno
import bench.record.recording as recording
def full(files):
    raise OSError(errno.ENOSPC, "No space left on device")
recording.write_all_or_nothing = full
"""


def test_a_write_that_fails_names_the_conversation_lost_and_exits_non_zero(tmp_path: Path) -> None:
    port = free_port()
    sent = response("200 OK", {"content-type": "application/json", "content-length": str(len(ANSWER))}, ANSWER)
    with raw_upstream(sent, "close") as upstream:
        proc = _record(upstream, tmp_path, port, prelude=FULL_DISK)
        try:
            assert httpx.post(f"http://127.0.0.1:{port}{CHAT}", json=BODY, timeout=10).status_code == 200
        finally:
            err = _stop(proc)
    assert proc.returncode == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("cannot record: lost") and "rec-1 (.yaml, .cassette)" in last and "No space left" in last


def test_an_out_folder_that_cannot_be_written_is_refused_before_the_proxy_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a read-only file system: root writes in a folder whatever its mode, so the probe's file is refused here
    real = tempfile.TemporaryFile

    def read_only(*args: Any, **kw: Any) -> Any:
        if Path(kw.get("dir") or ".").resolve() == tmp_path.resolve():
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", "0",
                                      "--out", str(tmp_path / "recordings")])
    assert result.exit_code == 2
    assert result.output == (f"cannot record: --out {tmp_path / 'recordings'}: cannot write in {tmp_path} "
                             "(Read-only file system)\n")
    assert not (tmp_path / "recordings").exists()


def test_a_resend_after_a_broken_answer_stays_in_its_conversation(tmp_path: Path) -> None:
    # the broken answer's bytes hold a whole answer with finish stop, but the client got an error
    sent = response("200 OK", {"content-type": "application/json", "content-length": str(len(ANSWER) + 100)}, ANSWER)
    with raw_upstream(sent, "close") as upstream, recording_proxy(upstream, tmp_path) as (proxy, rec), \
            httpx.Client(timeout=10) as http:
        for _ in range(2):
            with contextlib.suppress(httpx.RemoteProtocolError):
                http.post(proxy.url + CHAT, json=BODY)
    assert [c.number for c in rec.conversations] == [1]
    assert len(load_sequence(tmp_path / "rec-1.yaml").turns) == 2
