"""A loop on the official ``openai`` client, its retries on (the default): one Chat request, the
client waits out a 429's Retry-After and asks again by itself. ``hasty`` switches the client's
retries off and resends a 429 at once instead. Writes STOPBENCH_RESULT."""

import json
import os
import sys

import openai

hasty = sys.argv[1:] == ["hasty"]
client = openai.OpenAI(max_retries=0 if hasty else 2, timeout=20)
messages = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
for _attempt in range(3):
    try:
        reply = client.chat.completions.create(model=os.environ["STOPBENCH_MODEL"], messages=messages)
        break
    except openai.RateLimitError:
        if not hasty:
            raise
else:
    raise SystemExit("rate limited three times")
with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
    json.dump({"ok": True, "reason": "answered", "final": reply.choices[0].message.content}, fh)
