"""A Chat Completions loop that runs the bench's tools (STOPBENCH_TOOLS_URL), kept back from the
bench: a call whose arguments are not JSON never reaches the tool; it answers it in its own words,
"Not run: the arguments of <name> are not JSON.", which start with no "error". After three rounds
with nothing run it gives up (ok false)."""
import json
import os
import urllib.request


def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json",
                                                                   "authorization": "Bearer k"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


tools = [{"type": "function", "function": t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
messages = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
outcome = {"ok": False, "reason": "gave up", "final": ""}
refused = 0
while refused < 3:
    reply = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                 {"model": os.environ["STOPBENCH_MODEL"], "messages": messages, "tools": tools})
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls or None})
    if not calls:
        outcome = {"ok": True, "reason": "answered", "final": message.get("content") or ""}
        break
    for c in calls:
        name = c["function"]["name"]
        try:
            args = json.loads(c["function"]["arguments"] or "{}")
        except ValueError:
            refused += 1
            text = f"Not run: the arguments of {name} are not JSON."
        else:
            text = post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + name, args)["content"]
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": text})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
