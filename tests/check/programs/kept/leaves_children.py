"""A Chat loop that starts a helper in a session of its own (a 'language server' that sleeps) and never
stops it; it writes the helper's pid to $KEPT_PIDS and answers the task like a normal loop, running
the bench's tools."""
import json
import os
import subprocess
import sys
import urllib.request

helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open(os.environ["KEPT_PIDS"], "a") as fh:
    fh.write(f"{helper.pid}\n")

def post(url, data):
    req = urllib.request.Request(url, json.dumps(data).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())

tools = [{"type": "function", "function": t} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
msgs = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
for _ in range(10):
    ch = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
              {"model": "m", "messages": msgs, "tools": tools})["choices"][0]
    calls = ch["message"].get("tool_calls") or []
    msgs.append({"role": "assistant", "content": ch["message"].get("content"), "tool_calls": calls or None})
    if not calls:
        break
    for c in calls:
        args = json.loads(c["function"]["arguments"] or "{}")
        res = post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + c["function"]["name"], args)
        msgs.append({"role": "tool", "tool_call_id": c["id"], "content": res["content"]})
with open(os.environ["STOPBENCH_RESULT"], "w") as fh:
    json.dump({"ok": ch["finish_reason"] == "stop", "reason": ch["finish_reason"], "final": ""}, fh)
