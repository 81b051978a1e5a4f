"""The Chat Completions loop the test programs share: plain urllib against the bench's server."""

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable


def post(url: str, data: object) -> tuple[int, dict]:
    """POST `data` as JSON; the status and the JSON body (``{"raw": text}`` when it is not JSON)."""
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, {"raw": body.decode("utf-8", "replace")}


def result(data: object) -> None:
    """Write STOPBENCH_RESULT."""
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(data, fh)


def chat_loop(run_tool: Callable[[str, str], str], tools: list[dict]) -> None:
    """Ask, answer every call with run_tool(name, arguments), until a reply carries no calls (or is
    not a 200); then write a successful result."""
    messages: list = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
    for _ in range(20):
        status, reply = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                             {"model": os.environ["STOPBENCH_MODEL"], "messages": messages, "tools": tools})
        if status != 200:
            break
        message = reply["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls or None})
        if not calls:
            break
        for c in calls:
            text = run_tool(c["function"]["name"], c["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": text})
    result({"ok": True, "reason": "answered", "final": ""})
