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
start, finish = _IO["start"], _IO["finish"]


def main() -> int:
    spec, client, messages, tools = start()
    result: dict[str, Any] = {"ok": True, "reason": "done", "final": None, "error": None}
    try:
        for _ in range(10):
            answer = client.chat.completions.create(model=spec["model"], messages=messages, tools=tools)
            reply = answer.choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                result["final"] = reply.content
                break
            for call in reply.tool_calls:
                name = call.function.name  # type: ignore[union-attr]
                text = "Error: broken tool" if name == "broken" else f"{spec['ok_marker']} {name}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    except openai.APIError as exc:
        result.update(ok=False, reason="error", error=str(exc))
    return finish(result)


if __name__ == "__main__":
    sys.exit(main())
