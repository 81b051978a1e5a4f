"""A driver script for tests: a minimal loop on the official openai client (the bench's venv).

It runs every tool call (answering "<ok_marker> <name>") until a reply has no tool calls, and
answers calls to the tool named "broken" with an error result.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import openai

_IO = runpy.run_path(str(Path(__file__).resolve().parents[1] / "conform" / "driver_io.py"))
start, take_reply, finish = _IO["start"], _IO["take_reply"], _IO["finish"]


def main() -> int:
    spec, client, messages, tools = start()
    result: dict[str, Any] = {"ok": True, "reason": "done", "final": None, "error": None}
    try:
        for _ in range(10):
            answer = client.chat.completions.create(model=spec["model"], messages=messages, tools=tools)
            reply = answer.choices[0].message
            if not take_reply(messages, reply, lambda name: "Error: broken tool" if name == "broken"
                              else f"{spec['ok_marker']} {name}"):
                result["final"] = reply.content
                break
    except openai.APIError as exc:
        result.update(ok=False, reason="error", error=str(exc))
    return finish(result)


if __name__ == "__main__":
    sys.exit(main())
