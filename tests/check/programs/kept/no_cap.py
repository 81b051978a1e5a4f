"""A Chat loop with no cap at all: it asks again as long as the reply carries tool calls, answering
each with 'done' (its own tools, no bench endpoint), and stops on a reply without calls."""
import json
import os
import urllib.request


def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())

tools = [{"type": "function", "function": t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
msgs = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
while True:
    ch = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
              {"model": "m", "messages": msgs, "tools": tools})["choices"][0]
    calls = ch["message"].get("tool_calls") or []
    msgs.append({"role": "assistant", "content": ch["message"].get("content"), "tool_calls": calls or None})
    if not calls:
        break
    msgs += [{"role": "tool", "tool_call_id": c["id"], "content": "done"} for c in calls]
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump({"ok": True, "reason": ch["finish_reason"], "final": ""}, fh)
