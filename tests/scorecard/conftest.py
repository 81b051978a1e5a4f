"""A fake framework (stdlib only: its loop speaks Chat Completions with urllib) and records built by hand."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

LOOP = '''
import json, os, urllib.request
def ask(messages):
    tools = json.loads(os.environ["STOPBENCH_TOOLS"])
    body = json.dumps({"model": os.environ["STOPBENCH_MODEL"], "messages": messages,
                       "tools": [{"type": "function", "function": t} for t in tools]})
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body.encode(),
                                 headers={"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=10).read())
messages = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
assert os.environ["FAKE_BASE"] == os.environ["OPENAI_BASE_URL"] + "/x", os.environ["FAKE_BASE"]
for _ in range(5):
    msg = ask(messages)["choices"][0]["message"]
    calls = msg.get("tool_calls") or []
    messages.append(msg)
    if not calls:
        break
    for c in calls:
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": "done"})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump({"ok": True, "reason": "no_tool_calls", "final": msg.get("content") or ""}, fh)
'''


def base_python() -> str:
    """An interpreter outside the bench's venv (the fake framework needs the standard library only)."""
    return os.path.realpath(sys.executable)


@pytest.fixture
def fake_framework(tmp_path: Path) -> tuple[Path, Path]:
    """(frameworks folder, FRAMEWORK_DIR) with one framework, ``fake``, installed by hand."""
    from bench.scorecard.framework import load_framework
    from bench.scorecard.install import STAMP, stamp_text
    folder = tmp_path / "examples" / "frameworks" / "fake"
    folder.mkdir(parents=True)
    (folder / "loop.py").write_text(LOOP, encoding="utf-8")
    (folder / "framework.json").write_text(json.dumps({
        "name": "fake", "title": "Fake", "language": "python", "version": "1.0", "install": ["fake==1.0"],
        "command": ["python", "loop.py"], "dialects": ["openai-chat"], "env": {"FAKE_BASE": "${OPENAI_BASE_URL}/x"},
        "docs": "https://example.invalid/fake", "notes": "a test framework"}), encoding="utf-8")
    fwdir = tmp_path / "fwdir"
    (fwdir / "fake" / "bin").mkdir(parents=True)
    (fwdir / "fake" / "bin" / "python").symlink_to(base_python())
    (fwdir / "fake" / STAMP).write_text(stamp_text(load_framework(folder)), encoding="utf-8")
    return folder.parent, fwdir


def cell(sequence: str, violations: list[tuple[str, str]] = (), outcome: str = "stopped",  # type: ignore[assignment]
         error: str | None = None) -> dict[str, Any]:
    """A live cell as a record keeps it."""
    return {"sequence": sequence, "predicate": "x@live", "outcome": outcome, "reason": "no_tool_calls", "ok": True,
            "steps": 1, "tools_run": [], "tools_failed": [], "reminders": 0, "resends": 0, "tokens": 0,
            "error": error, "golden": "live",
            "violations": [{"requirement": r, "step": 1, "detail": d} for r, d in violations],
            "decisions": [{"step": 1, "turn": 0, "action": "stop", "reason": "no_tool_calls", "ok": True,
                           "rule": "live", "run": [], "failed": [], "message": None}]}


def record(name: str, cells: list[dict[str, Any]], version: str = "1.0") -> dict[str, Any]:
    return {"name": name, "column": f"{name}@live", "command": ["$FRAMEWORK_DIR/x/bin/python", "loop.py"],
            "cells": cells, "version": 1, "catalogue": {"sequences": 4},
            "framework": {"name": name, "title": name.title(), "language": "python", "version": version,
                          "install": [f"{name}=={version}"], "command": ["python", "loop.py"],
                          "dialects": ["openai-chat"], "docs": "https://example.invalid", "notes": "", "env": {}},
            "reproduce": {"make": f"make scorecard-{name}", "check": "cd x && stopbench check"}}
