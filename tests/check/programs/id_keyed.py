"""A loop that keeps its history keyed by call id, as Mastra and the OpenAI Agents SDK do: a call
whose id it has answered before is taken as done, and the loop ends on it. Every id it was served
is written to the file named by its first argument, one per line."""

import os
import sys

from chat import post, result

seen: set[str] = set()
messages: list = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
with open(sys.argv[1], "a", encoding="utf-8") as log:
    for _ in range(4):
        status, reply = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                             {"model": os.environ["STOPBENCH_MODEL"], "messages": messages, "tools": tools})
        calls = reply["choices"][0]["message"].get("tool_calls") or []
        new = [c for c in calls if c["id"] not in seen]
        log.writelines(c["id"] + "\n" for c in calls)
        if not new:
            result({"ok": True, "reason": "no new call", "final": ""})
            sys.exit(0)
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for c in new:
            seen.add(c["id"])
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": f"ran {c['id']}"})
result({"ok": False, "reason": "gave up", "final": ""})
