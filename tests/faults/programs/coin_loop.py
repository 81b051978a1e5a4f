"""A Chat loop with a random component: one streamed request over plain urllib, then a coin decides
whether the loop looks at the finish reason (careful: a stream without one is not an answer) or takes
the text as the answer (naive). The coin is seeded by how many times the loop has run (a counter in
COIN_FILE), so the trials of a test are the same on every run."""

import json
import os
import random
import urllib.request

counter = os.environ["COIN_FILE"]
n = 0
if os.path.exists(counter):
    with open(counter) as fh:
        n = int(fh.read())
with open(counter, "w") as fh:
    fh.write(str(n + 1))
careful = random.Random(n).random() < 0.5

ASK = {"model": "m", "stream": True, "messages": [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]}
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                             headers={"content-type": "application/json"}, data=json.dumps(ASK).encode())
text, finish = [], None
with urllib.request.urlopen(req, timeout=10) as resp:
    for line in resp:
        line = line.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        for choice in json.loads(line[6:]).get("choices", []):
            text.append((choice.get("delta") or {}).get("content") or "")
            finish = choice.get("finish_reason") or finish
ok = finish == "stop" if careful else True
with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
    json.dump({"ok": ok, "reason": "answered" if ok else "no_finish", "final": "".join(text)}, fh)
