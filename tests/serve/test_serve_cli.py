"""`stopbench serve` as a process: serves a catalogue sequence, writes the observed steps on SIGTERM."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.serve.serving import CHAT_TOOLS, serve_command


def test_serve_command_answers_and_reports_observed_steps_on_sigterm(tmp_path: Path) -> None:
    with serve_command(tmp_path) as served:
        url = served.url + "/v1/chat/completions"
        msgs = [{"role": "user", "content": "go"}]
        first = httpx.post(url, json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS}).json()
        msgs += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": "call_1", "content": "text"}]
        second = httpx.post(url, json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS}).json()
    assert second["choices"][0]["message"]["content"] == "answer"
    report = json.loads(served.observed.read_text(encoding="utf-8"))
    assert [(s["turn"], s["action"], s["run"]) for s in report[0]["steps"]] == [(0, "continue", [0]),
                                                                                (1, "stop", [])]
