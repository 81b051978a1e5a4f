"""A Chat Completions loop that keeps its own call ids: every call it is given is renumbered
("mine-<round>-<k>") before it goes into the history, as some frameworks do. It runs the bench's tools
over the HTTP tool endpoint, ends on the first reply without calls, and reports ok on finish 'stop'."""
import json
import os
import urllib.request


def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())

tools = [{"type": "function", "function": t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
msgs = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
outcome = {"ok": False, "reason": "gave up", "final": ""}
for rnd in range(12):
    reply = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                 {"model": os.environ["STOPBENCH_MODEL"], "messages": msgs, "tools": tools})
    choice = reply["choices"][0]
    calls = choice["message"].get("tool_calls") or []
    if not calls:
        outcome = {"ok": choice["finish_reason"] == "stop", "reason": choice["finish_reason"],
                   "final": choice["message"].get("content") or ""}
        break
    mine = [{**c, "id": f"mine-{rnd}-{k}"} for k, c in enumerate(calls)]
    msgs.append({"role": "assistant", "content": choice["message"].get("content"), "tool_calls": mine})
    for c in mine:
        try:
            args = json.loads(c["function"]["arguments"] or "{}")
        except ValueError:
            msgs.append({"role": "tool", "tool_call_id": c["id"], "content": "could not parse the arguments"})
            continue
        res = post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + c["function"]["name"], args)
        msgs.append({"role": "tool", "tool_call_id": c["id"], "content": res["content"]})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
