"""A program for ``stopbench check`` that speaks only the throwaway wire (tests/wires/throwaway_wire.py):
it finds the server and its model where that wire's clients do (THROWAWAY_ENDPOINT, THROWAWAY_TOKEN,
STOPBENCH_MODEL), runs the calls it is given, waits out a 429's ``wait_s``, and writes what it was told
and what it got to THROWAWAY_SEEN (JSON) beside its result."""

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

env = os.environ
seen: dict[str, Any] = {"endpoint": env.get("THROWAWAY_ENDPOINT"), "token": env.get("THROWAWAY_TOKEN"),
        "model": env.get("STOPBENCH_MODEL"), "dialect": env.get("STOPBENCH_DIALECT"),
        "real_endpoint": env.get("THROWAWAY_REAL_ENDPOINT"), "errors": [], "whys": []}
tools = [{"name": t["name"]} for t in json.loads(env.get("STOPBENCH_TOOLS", "[]"))] or [{"name": "read_file"}]
history = [{"who": "user", "said": env["STOPBENCH_PROMPT"]}]
ok, final = False, ""
for _ in range(12):
    body = json.dumps({"model": seen["model"], "history": history, "tools": tools}).encode()
    req = urllib.request.Request(f"{seen['endpoint']}/reply", data=body,
                                 headers={"content-type": "application/json", "x-token": str(seen["token"])})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            answer = json.loads(resp.read())["throwaway"]
    except urllib.error.HTTPError as exc:
        error = json.loads(exc.read())
        seen["errors"].append({"status": exc.code, "body": error, "headers": dict(exc.headers)})
        time.sleep(float(error.get("oops", {}).get("wait_s", 0)))
        continue
    seen["whys"].append(answer["why"])
    history.append({"who": "model", "said": answer["said"], "calls": answer["calls"]})
    if answer["why"] != "call":
        ok, final = answer["why"] == "done", answer["said"]
        break
    history += [{"who": "tool", "ref": c["ref"], "result": f"ok: {c['tool']} ran"} for c in answer["calls"]]
with open(env["THROWAWAY_SEEN"], "w", encoding="utf-8") as fh:
    json.dump(seen, fh)
with open(env["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
    json.dump({"ok": ok, "reason": "answered" if ok else "gave_up", "final": final}, fh)
