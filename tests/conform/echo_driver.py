"""A driver for tests: one request, the reply's text appended to ``runs`` in SPEC's ``loop`` folder.

Its sequences answer the first request with text that names them, so a test can tell which
(loop, sequence) pairs a conformance run drove from the log alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import openai


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    client = openai.OpenAI(base_url=spec["base_url"], api_key="k", max_retries=0)
    reply = client.chat.completions.create(model=spec["model"],
                                           messages=[{"role": "user", "content": spec["prompt"]}])
    text = reply.choices[0].message.content or ""
    with (Path(spec["loop"]) / "runs").open("a", encoding="utf-8") as fh:
        fh.write(text + "\n")
    Path(sys.argv[2]).write_text(json.dumps({"ok": True, "reason": "done", "final": text, "error": None}),
                                 encoding="utf-8")


if __name__ == "__main__":
    main()
