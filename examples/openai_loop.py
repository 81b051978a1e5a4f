"""A small agent loop on the official ``openai`` client, as many projects write it: ask, run the
tool calls, stop when a reply has none. Try it against the catalogue::

    stopbench check -- python examples/openai_loop.py

It reads what ``stopbench check`` sets (OPENAI_BASE_URL and OPENAI_API_KEY are read by the client
itself; STOPBENCH_PROMPT, STOPBENCH_TOOLS and STOPBENCH_MODEL say what to do) and writes
STOPBENCH_RESULT. Its tools are stubs: this is about the loop, not the tools.
"""

import json
import os

import openai

MAX_STEPS = 20


def run_tool(name: str, arguments: str) -> str:
    json.loads(arguments or "{}")  # a real tool would fail on arguments it cannot parse
    return f"ok: {name} ran"


def main() -> dict:
    client = openai.OpenAI(max_retries=2, timeout=30)
    tools = [{"type": "function", "function": t} for t in json.loads(os.environ.get("STOPBENCH_TOOLS", "[]"))]
    messages = [{"role": "user", "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]
    model = os.environ.get("STOPBENCH_MODEL", "gpt-4o-mini")
    for _ in range(MAX_STEPS):
        reply = client.chat.completions.create(model=model, messages=messages, **({"tools": tools} if tools else {}))
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
    return {"ok": False, "reason": "max_steps", "final": ""}


if __name__ == "__main__":
    try:
        outcome = main()
    except openai.APIError as exc:
        outcome = {"ok": False, "reason": "api_error", "final": str(exc)}
    if os.environ.get("STOPBENCH_RESULT"):
        with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
            json.dump(outcome, fh)
    raise SystemExit(0 if outcome["ok"] else 1)
