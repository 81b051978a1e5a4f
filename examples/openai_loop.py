"""A small agent loop on the official ``openai`` client, as many projects write it: ask, run the
tool calls, stop when a reply has none. Try it against the catalogue::

    stopbench check -- python examples/openai_loop.py

Run as a program it reads what ``stopbench check`` sets (OPENAI_BASE_URL and OPENAI_API_KEY are
read by the client itself; STOPBENCH_PROMPT, STOPBENCH_TOOLS and STOPBENCH_MODEL say what to do)
and writes STOPBENCH_RESULT. :func:`agent` is the loop itself, which
``examples/test_openai_loop.py`` tests with stopbench's pytest plugin. Its tools are stubs: this is
about the loop, not the tools.

It needs the ``openai`` package in the Python that runs it: ``pip install openai``, or stopbench's loops
extra (``pip install 'stopbench[loops]'``) in the environment stopbench is installed in.
"""

import json
import os
from typing import Any

import openai

MAX_STEPS = 20


def run_tool(name: str, arguments: str) -> str:
    json.loads(arguments or "{}")  # a real tool would fail on arguments it cannot parse
    return f"ok: {name} ran"


def agent(client: openai.OpenAI, prompt: str, tools: list[dict[str, Any]], model: str) -> dict[str, Any]:
    """Run the loop; returns ``{"ok", "reason", "final"}``."""
    specs = [{"type": "function", "function": t} for t in tools]
    messages: list[Any] = [{"role": "user", "content": prompt}]
    try:
        for _ in range(MAX_STEPS):
            reply = client.chat.completions.create(model=model, messages=messages,
                                                   **({"tools": specs} if specs else {}))
            message = reply.choices[0].message
            if not message.tool_calls:
                return {"ok": True, "reason": "no_tool_calls", "final": message.content or ""}
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                try:
                    result = run_tool(call.function.name, call.function.arguments)
                except ValueError as exc:
                    result = f"Error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    except openai.APIError as exc:
        return {"ok": False, "reason": "api_error", "final": str(exc)}
    return {"ok": False, "reason": "max_steps", "final": ""}


if __name__ == "__main__":
    outcome = agent(openai.OpenAI(timeout=30), os.environ.get("STOPBENCH_PROMPT", "Say hello."),
                    json.loads(os.environ.get("STOPBENCH_TOOLS", "[]")), os.environ.get("STOPBENCH_MODEL", "gpt-4o"))
    if os.environ.get("STOPBENCH_RESULT"):
        with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
            json.dump(outcome, fh)
    raise SystemExit(0 if outcome["ok"] else 1)
