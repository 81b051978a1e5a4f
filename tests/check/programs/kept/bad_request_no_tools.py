"""A buggy Chat loop: after its first request it sends the history in the wrong shape ({"messages": 5}
when the reply had tool calls). On an HTTP error it reports not ok with the status and stops."""
import json
import os
import urllib.error
import urllib.request


def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")

url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
status, reply = post(url, {"model": "m", "messages": [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]})
outcome = {"ok": True, "reason": "answered", "final": ""}
if status != 200:
    outcome = {"ok": False, "reason": f"http {status}", "final": ""}
elif reply["choices"][0]["message"].get("tool_calls"):
    status, reply = post(url, {"model": "m", "messages": 5})
    outcome = {"ok": status == 200, "reason": f"http {status}", "final": json.dumps(reply)[:200]}
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump(outcome, fh)
