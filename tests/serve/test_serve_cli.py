"""`stopbench serve` as a process: serves a catalogue sequence, writes the observed steps on SIGTERM."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.serve.serving import CHAT_TOOLS

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_command_answers_and_reports_observed_steps_on_sigterm(tmp_path: Path) -> None:
    (tmp_path / "seqs").mkdir()
    (tmp_path / "seqs" / "cli-seq.yaml").write_text(SEQ, encoding="utf-8")
    out = tmp_path / "observed.json"
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "bench", "serve", "cli-seq", "--port", str(port),
                             "--sequences", str(tmp_path / "seqs"), "--observed", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/_stopbench/state", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
        msgs = [{"role": "user", "content": "go"}]
        first = httpx.post(url, json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS}).json()
        msgs += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": "call_1", "content": "text"}]
        second = httpx.post(url, json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS}).json()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    assert second["choices"][0]["message"]["content"] == "answer"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [(s["turn"], s["action"], s["run"]) for s in report[0]["steps"]] == [(0, "continue", [0]),
                                                                                (1, "stop", [])]
