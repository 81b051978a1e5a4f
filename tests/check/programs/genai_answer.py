"""One request with google-genai configured from the environment alone (no base_url, no key in the
code), as a Gemini program under stopbench check is: its reply's text becomes the result."""

import json
import os

from google import genai

client = genai.Client()
reply = client.models.generate_content(model=os.environ["STOPBENCH_MODEL"], contents=os.environ["STOPBENCH_PROMPT"])
with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
    json.dump({"ok": True, "reason": "answered", "final": reply.text or ""}, fh)
