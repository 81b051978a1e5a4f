#!/usr/bin/env python3
"""A stand-in for `codex app-server` (JSON-RPC over stdio) for tests of conformance/drivers/codex_driver.mjs:
each turn/start makes one Responses request to the base URL of CODEX_HOME/config.toml, then ends the turn
as the server's answer says: completed when it is a completed response, failed when it is incomplete (as
Codex 0.169.0 fails a turn on any incomplete reason but content_filter)."""

import json
import os
import re
import sys
import urllib.request
from typing import Any

with open(os.path.join(os.environ["CODEX_HOME"], "config.toml"), encoding="utf-8") as config:
    found = re.search(r"^base_url = (.*)$", config.read(), re.M)
assert found is not None
base_url = json.loads(found.group(1))


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def sample(text: str) -> str:
    body = json.dumps({"model": "stopbench", "stream": False, "tools": [],
                       "input": [{"role": "user", "content": text}]}).encode()
    req = urllib.request.Request(f"{base_url}/responses", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        return str(json.loads(resp.read()).get("status"))


turns = 0
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"id": mid, "result": {}})
    elif method == "thread/start":
        send({"id": mid, "result": {"thread": {"id": "thread-1"}}})
    elif method == "turn/start":
        turns += 1
        turn: dict[str, Any] = {"id": f"turn-{turns}", "items": [], "status": "inProgress", "error": None}
        send({"id": mid, "result": {"turn": turn}})
        send({"method": "turn/started", "params": {"threadId": "thread-1", "turn": turn}})
        status = sample(msg["params"]["input"][0]["text"])
        if status == "completed":
            done = {**turn, "status": "completed", "items": [{"type": "agentMessage", "text": "done"}]}
        else:
            done = {**turn, "status": "failed", "error": {"message": f"Incomplete response returned ({status})"}}
        send({"method": "turn/completed", "params": {"threadId": "thread-1", "turn": done}})
    elif mid is not None:
        send({"id": mid, "error": {"code": -32601, "message": "not in the fake"}})
