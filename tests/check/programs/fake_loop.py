"""A fake loop for tests of ``stopbench check``: plain urllib, one behaviour per argument.

    answer     one Chat request, then write STOPBENCH_RESULT ok (the final text is the env it saw)
    forever    resend the same Chat request until killed
    sleep      one request, then sleep far past any test's time limit
    bad        one request, then a result file whose ok is not a boolean
    exit N     one request, no result file, exit status N
    silent     no request at all; a line on stderr and exit 3
    leave      start a child in its own process group's reach and one in a session of its own (which
               double-forks a grandchild into another), one request, a result, exit: the pids (and
               the folder of STOPBENCH_RESULT) go to files in FAKE_PID_DIR
    leave-hang the same, then sleep far past any test's time limit
    tools TEXT a Chat loop: every call answered with TEXT as its result, until a reply has no calls
    endpoint   the same loop, every call run on the bench's tool endpoint (STOPBENCH_TOOLS_URL)
    mistype    one valid request, then one whose messages are not a list; exit 0
"""

import json
import os
import sys
import time

from chat import chat_loop, post, result

ENV = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "STOPBENCH_PROMPT",
       "STOPBENCH_TOOLS", "STOPBENCH_DIALECT", "STOPBENCH_MODEL", "STOPBENCH_SEQUENCE", "STOPBENCH_STEERS",
       "OPENAI_API_BASE", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
       "STOPBENCH_TOOLS_URL", "STOPBENCH_MCP_COMMAND", "STOPBENCH_MCP_URL")


def ask() -> None:
    """One Chat request with the prompt alone; whatever the answer, it is not read."""
    post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
         {"model": "m", "messages": [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]})


def leave_children() -> None:
    """A child in the group, a child in a session of its own and its grandchild in a third one."""
    import subprocess

    from detached import start_detached
    folder = os.environ["FAKE_PID_DIR"]
    group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    session = start_detached(os.path.join(folder, "grandchild"))
    for name, value in (("group-child", group.pid), ("session-child", session.pid), ("program", os.getpid()),
                        ("tmp", os.path.dirname(os.environ["STOPBENCH_RESULT"]))):
        with open(os.path.join(folder, name + ".part"), "w") as fh:
            fh.write(str(value))
        os.replace(os.path.join(folder, name + ".part"), os.path.join(folder, name))


mode = sys.argv[1]
if mode == "silent":
    print("boom: cannot start", file=sys.stderr)
    sys.exit(3)
TOOLS = [{"type": "function", "function": t} for t in json.loads(os.environ.get("STOPBENCH_TOOLS", "[]"))]
if mode == "tools":
    chat_loop(lambda name, arguments: sys.argv[2], TOOLS)
    sys.exit(0)
if mode == "endpoint":
    chat_loop(lambda name, arguments: post(f"{os.environ['STOPBENCH_TOOLS_URL']}/{name}",
                                           json.loads(arguments or "{}"))[1]["content"], TOOLS)
    sys.exit(0)
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
elif mode in ("leave", "leave-hang"):
    leave_children()
    if mode == "leave-hang":
        time.sleep(600)
    result({"ok": True, "reason": "answered", "final": ""})
elif mode == "mistype":
    post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "m", "messages": 5})
elif mode == "exit":
    sys.exit(int(sys.argv[2]))
