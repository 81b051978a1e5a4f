"""``stopbench serve`` stopped or asked in ways a careless or hostile user does: SIGTERM while a fault
holds an answer back ends in one line and exit 0, never a traceback; a compressed request body is
refused as an encoding the server does not take, whatever the route."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.hostile.sequences import ONE_ANSWER as SEQ

ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "sequences").mkdir()
    (tmp_path / "sequences" / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    (tmp_path / "stall.yaml").write_text("faults: [{fault: stall, seconds: 60}]\n", encoding="utf-8")
    return tmp_path


def start_serve(project: Path, port: int, *args: str) -> subprocess.Popen[str]:
    """``stopbench serve one-answer`` on `port`, once it says it is serving."""
    env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "serve", "one-answer", "--port", str(port), *args],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert first.startswith("serving one-answer"), first
    return proc


def post(url: str, body: bytes, headers: dict[str, str], timeout: float = 70) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (OSError, http.client.HTTPException):  # the server went away mid-answer
        return 0, b""


def test_sigterm_while_an_answer_is_stalled_ends_in_one_line_and_exit_0(project: Path) -> None:
    port = free_port()
    proc = start_serve(project, port, "--faults", "stall.yaml")
    asking = threading.Thread(target=post, args=(f"http://127.0.0.1:{port}/v1/chat/completions",
                                                 json.dumps(ASK).encode(), {}), daemon=True)
    asking.start()
    time.sleep(1.5)  # the request is in, its answer stalled for 60 s
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err and "Exception in ASGI" not in err, err
    assert proc.returncode == 0, err
    assert err.strip().splitlines() == ["stopped (SIGTERM): cut off 1 answer still being sent"], err


ASKER = """\
import json, os, urllib.request
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
ask = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                             headers={"content-type": "application/json"})
urllib.request.urlopen(ask, timeout=100).read()
"""


def test_sigterm_to_check_while_an_answer_is_stalled_is_its_one_interrupted_line(project: Path) -> None:
    (project / "asker.py").write_text(ASKER, encoding="utf-8")
    env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "check", "--no-report", "--faults", "stall.yaml", "--",
                             sys.executable, "asker.py"], cwd=project, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(4)  # the server started, the program asked, its answer stalled for 60 s
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err and "Exception in ASGI" not in err, err
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted (SIGTERM)"), err


@pytest.mark.parametrize(("route", "body"), [
    ("/model/m/converse", {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}),
    ("/model/m/converse-stream", {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
])
def test_a_gzip_request_body_is_an_encoding_not_supported_on_every_route(project: Path, route: str,
                                                                        body: dict[str, object]) -> None:
    port = free_port()
    proc = start_serve(project, port)
    try:
        status, answer = post(f"http://127.0.0.1:{port}{route}", gzip.compress(json.dumps(body).encode()),
                              {"content-encoding": "gzip"}, timeout=20)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert status == 415, (status, answer)
    assert b"not UTF-8" not in answer and b"encoding not supported" in answer, answer
