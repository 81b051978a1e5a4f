"""A fake loop for tests of ``stopbench check``: plain urllib, one behaviour per argument.

    answer     one Chat request, then write STOPBENCH_RESULT ok (the final text is the env it saw)
    forever    resend the same Chat request until killed
    sleep      one request, then sleep far past any test's time limit
    bad        one request, then a result file whose ok is not a boolean
    exit N     one request, no result file, exit status N
    silent     no request at all; a line on stderr and exit 3
"""

import contextlib
import json
import os
import sys
import time
import urllib.error
import urllib.request

ENV = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "STOPBENCH_PROMPT",
       "STOPBENCH_TOOLS", "STOPBENCH_DIALECT", "STOPBENCH_MODEL", "STOPBENCH_SEQUENCE", "STOPBENCH_STEERS",
       "OPENAI_API_BASE", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
       "STOPBENCH_TOOLS_URL", "STOPBENCH_MCP_COMMAND", "STOPBENCH_MCP_URL")


def ask() -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]})
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body.encode(),
                                 headers={"content-type": "application/json"})
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(req, timeout=10).read()


def result(data: object) -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(data, fh)


mode = sys.argv[1]
if mode == "silent":
    print("boom: cannot start", file=sys.stderr)
    sys.exit(3)
ask()
if mode == "answer":
    result({"ok": True, "reason": "answered", "final": json.dumps({k: os.environ.get(k) for k in ENV})})
elif mode == "forever":
    while True:
        ask()
elif mode == "sleep":
    if os.environ.get("FAKE_PID_DIR"):  # so a test can see that the program was ended
        open(os.path.join(os.environ["FAKE_PID_DIR"], str(os.getpid())), "w").close()
    time.sleep(600)
elif mode == "bad":
    result({"ok": "yes", "reason": "?"})
elif mode == "exit":
    sys.exit(int(sys.argv[2]))
