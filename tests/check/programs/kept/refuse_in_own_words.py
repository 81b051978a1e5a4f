"""A Chat Completions loop with its own tools, kept back from the bench: it never uses the bench's
tools. A call whose arguments are not JSON it refuses in its own words (KEPT_REFUSAL, default
pydantic's "1 validation error for Args ... not run", as a loop validating with pydantic sends it),
with no error flag (Chat has none); any other call it answers "done: <name>". It ends with success
on the first reply without calls."""
import json
import os
import urllib.request

REFUSAL = os.environ.get("KEPT_REFUSAL") or (
    "1 validation error for Args\n  Invalid JSON: EOF while parsing a string [type=json_invalid]\nnot run")


def ask(messages, tools):
    body = {"model": os.environ["STOPBENCH_MODEL"], "messages": messages, "tools": tools}
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
                                 {"content-type": "application/json", "authorization": "Bearer k"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["choices"][0]["message"]


def answer(call):
    try:
        json.loads(call["function"]["arguments"] or "{}")
    except ValueError:
        return REFUSAL
    return "done: " + call["function"]["name"]


tools = [{"type": "function", "function": t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
messages = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
outcome = {"ok": False, "reason": "gave up", "final": ""}
for _ in range(8):
    message = ask(messages, tools)
    calls = message.get("tool_calls") or []
    messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls or None})
    if not calls:
        outcome = {"ok": True, "reason": "answered", "final": message.get("content") or ""}
        break
    for c in calls:
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": answer(c)})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
