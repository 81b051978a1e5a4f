"""A Responses API loop that keeps no history: each request sends only the new function_call_output
items and previous_response_id, as the API allows. Runs the bench's tools; ok on status completed
with no function call."""
import json
import os
import urllib.request


def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())

tools = [{"type": "function", **t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
body = {"model": os.environ["STOPBENCH_MODEL"], "input": os.environ["STOPBENCH_PROMPT"], "tools": tools}
outcome = {"ok": False, "reason": "gave up", "final": ""}
for _ in range(12):
    resp = post(os.environ["OPENAI_BASE_URL"] + "/responses", body)
    calls = [o for o in resp["output"] if o["type"] == "function_call"]
    if not calls:
        text = "".join(c.get("text", "") for o in resp["output"] if o["type"] == "message" for c in o["content"])
        outcome = {"ok": resp["status"] == "completed", "reason": resp["status"], "final": text}
        break
    outputs = []
    for c in calls:
        res = post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + c["name"], json.loads(c["arguments"] or "{}"))
        outputs.append({"type": "function_call_output", "call_id": c["call_id"], "output": res["content"]})
    body = {"model": os.environ["STOPBENCH_MODEL"], "previous_response_id": resp["id"], "input": outputs,
            "tools": tools}
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
