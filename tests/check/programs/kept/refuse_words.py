"""An Anthropic Messages loop with a guard: it runs only read-only tools (names starting 'read' or
'grep' or 'search') on the bench's tool endpoint, and answers any other call with its own words,
"Not allowed here: <name> changes things.", without is_error. It ends on end_turn (ok) or any other
stop reason that brings no tool_use (not ok)."""
import json
import os
import urllib.request


def post(url, data, headers=()):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json", **dict(headers)})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())

base = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
tools = [{"name": t["name"], "description": t.get("description") or t["name"], "input_schema": t["parameters"]}
         for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
msgs = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
outcome = {"ok": False, "reason": "gave up", "final": ""}
for _ in range(12):
    reply = post(base + "/v1/messages", {"model": os.environ["STOPBENCH_MODEL"], "max_tokens": 1024,
                                         "messages": msgs, "tools": tools},
                 {"x-api-key": "k", "anthropic-version": "2023-06-01"})
    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
    msgs.append({"role": "assistant", "content": reply["content"]})
    if not uses:
        text = "".join(b.get("text", "") for b in reply["content"] if b["type"] == "text")
        outcome = {"ok": reply["stop_reason"] == "end_turn", "reason": reply["stop_reason"], "final": text}
        break
    results = []
    for u in uses:
        if u["name"].startswith(("read", "grep", "search")):
            res = post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + u["name"], u["input"])
            results.append({"type": "tool_result", "tool_use_id": u["id"], "content": res["content"],
                            "is_error": res["is_error"]})
        else:
            results.append({"type": "tool_result", "tool_use_id": u["id"],
                            "content": f"Not allowed here: {u['name']} changes things."})
    msgs.append({"role": "user", "content": results})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
