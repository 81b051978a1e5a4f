"""Drive learn-claude-code's s01 lessons (both pinned files) against the stopbench replay server.

learn-claude-code is not published in a registry, so the loop is a checkout of the lesson file at its
pinned commit, laid out under the venv that runs this script (the venv's ``sys.prefix``):

    LOOP/src/0f691a092cb7dfcb9b51db5e72d99866f6d8588d/agents/s01_agent_loop.py           (Anthropic)
    LOOP/src/f8671fcbb0314ba40b27c3b0514b5a7faad596a9/agents/openai_code/s01_agent_loop_openai.py

with `anthropic==2.14.0`, `openai==3.57.0` and `python-dotenv` installed in LOOP (the versions the
ports read). Run with that venv's Python:

    python learn_claude_code_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "wire": "anthropic" | "openai-chat", "model": ...,
       "prompt": "...", "ok_marker": "STOPBENCH-OK", "safety_cap": 200, ...}. The wire picks the
lesson: `anthropic` drives agents/s01_agent_loop.py (port predicates/learn_claude_code_s01.py),
`openai-chat` drives agents/openai_code/s01_agent_loop_openai.py (port
predicates/learn_claude_code_s01_openai.py).

The lesson file is imported as a module (its REPL is under ``__main__`` and does not run), with its
environment variables set to the server (MODEL_ID, ANTHROPIC_*; OPENAI_MODEL_ID, OPENAI_*), and its
own `agent_loop(history)` is called once with the prompt as the user message. Nothing in the loop is
changed; three things around it are, each one standing in for what the bench's stubs are elsewhere:

* The lesson offers one tool, `bash`, and runs `block.input["command"]` (Anthropic) or only calls
  named "bash" (OpenAI). The sequences call other tools (read_file, edit_file, ...), which the ports
  read as standing in for bash. So the client's `create` is wrapped: each received call is rewritten
  into the bash call it stands for, `{"command": "<name> <arguments>"}`, before the loop sees it.
  What the ports treat differently is kept as it is: a blank tool name stays blank (the OpenAI lesson
  drops it, L133-134), arguments that are not valid JSON, or JSON that is not an object, stay as they
  are (the OpenAI lesson answers the first with "Error parsing command arguments" and crashes on the
  second, L137-159). Anthropic delivers `input` parsed, so there every call gets its command.
* The module's `run_bash` is replaced by a stub that answers "<ok_marker> <tool name>" and runs
  nothing (no shell is touched).
* The loop has no cap (`while True`): the wrapped `create` raises a private exception once the request
  past the bench's safety cap has been sent (so the server sees what the loop did at the cap's
  request), reported as `capped`, as the Node drivers do.

RESULT: {"ok": bool | None, "reason": "return" | "api_error" | "exception" | "capped", "final",
"error"}: `return` when agent_loop returns (the lesson then prints the answer: success), `api_error`
when the SDK raises an APIError (s01 has no try/except), `exception` for any other exception out of
agent_loop (the OpenAI lesson's AttributeError on JSON that is not an object).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

LESSONS = {
    "anthropic": ("0f691a092cb7dfcb9b51db5e72d99866f6d8588d", "agents/s01_agent_loop.py"),
    "openai-chat": ("f8671fcbb0314ba40b27c3b0514b5a7faad596a9", "agents/openai_code/s01_agent_loop_openai.py"),
}


class Capped(Exception):
    """The loop asked past the bench's safety cap."""


def lesson_path(wire: str) -> Path:
    commit, rel = LESSONS[wire]
    return Path(sys.prefix) / "src" / commit / rel


def load_lesson(wire: str, base_url: str, model: str) -> ModuleType:
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    if wire == "anthropic":
        os.environ.update(ANTHROPIC_BASE_URL=root, ANTHROPIC_API_KEY="sk-stopbench", MODEL_ID=model)
    else:
        os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-stopbench", OPENAI_MODEL_ID=model)
    path = lesson_path(wire)
    spec = importlib.util.spec_from_file_location("s01_lesson", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no lesson file at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_command(name: str, arguments: Any) -> str:
    return f"{name} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def stand_in_anthropic(response: Any) -> Any:
    for block in response.content:
        if getattr(block, "type", None) == "tool_use":
            block.input = {"command": as_command(block.name, block.input)}
    return response


def stand_in_openai(response: Any) -> Any:
    for choice in response.choices:
        for call in choice.message.tool_calls or ():
            fn = call.function
            name = fn.name
            if not name:
                continue  # a blank name is not "bash": the lesson drops it (L133-134)
            fn.name = "bash"
            try:
                value = json.loads(fn.arguments)
            except ValueError:
                continue  # left invalid: the lesson's own parse error answers it (L153-159)
            if isinstance(value, dict):  # anything else is left as it is: L138 raises on it
                fn.arguments = json.dumps({"command": as_command(name, value)}, ensure_ascii=False)
    return response


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    wire = spec.get("wire", "anthropic")
    marker = spec.get("ok_marker", "STOPBENCH-OK")
    cap = int(spec.get("safety_cap", 200))
    result: dict[str, Any] = {"ok": None, "reason": None, "final": None, "error": None}
    lesson = load_lesson(wire, spec["base_url"], spec.get("model", "stopbench"))
    lesson.run_bash = lambda command: f"{marker} {command.split(' ', 1)[0]}"
    calls = {"n": 0}
    if wire == "anthropic":
        import anthropic as sdk
        resource = lesson.client.messages
    else:
        import openai as sdk  # type: ignore[no-redef]
        resource = lesson.client.chat.completions
    create = resource.create

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        response = create(*args, **kwargs)
        if calls["n"] > cap:  # sent, so the server sees what the loop did at request `cap`; then ended
            raise Capped(f"request {calls['n']} is past the safety cap of {cap}")
        return stand_in_anthropic(response) if wire == "anthropic" else stand_in_openai(response)

    resource.create = wrapped
    history: list[Any] = [{"role": "user", "content": spec.get("prompt", "stopbench conformance run")}]
    try:
        lesson.agent_loop(history)
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except sdk.APIError as exc:
        result.update(ok=False, reason="api_error", error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # anything else s01 lets out of agent_loop
        result.update(ok=False, reason="exception", error=f"{type(exc).__name__}: {exc}")
    else:
        last = history[-1] if history else {}
        content = last.get("content") if isinstance(last, dict) else None
        final = content if isinstance(content, str) else "".join(
            getattr(b, "text", "") for b in content or () if hasattr(b, "text"))
        result.update(ok=True, reason="return", final=final)
    Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
