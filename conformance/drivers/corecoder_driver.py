"""Drive CoreCoder's own loop (PyPI corecoder==0.4.0) against the stopbench replay server.

Run with the Python of a venv where `corecoder==0.4.0` is installed (not the bench's venv):

    python corecoder_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "max_rounds": 50,
       "ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...]}

Every tool is a stub: CoreCoder's `Tool` subclass whose `execute` answers
"<ok_marker> <name>" and does nothing else, so no file or shell is touched. Its signature
requires the parameters listed in `required` (and accepts any others), because CoreCoder checks
arguments with `inspect.signature(tool.execute).bind(**arguments)` before running a tool
(corecoder/agent.py L108-111): arguments that are not a JSON object become {} (llm.py L177-180)
and fail there when a parameter is required, as they do for every CoreCoder built-in tool. SPEC,
RESULT and the stub function are the Python drivers' shared plumbing (stopbench_driver.py).

RESULT: {"ok": bool, "reason": "text" | "max_rounds" | "api_error" | "stream_error",
         "final": str | null, "error": str | null}; the reasons are those of predicates/corecoder.py.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import openai
from corecoder.agent import Agent
from corecoder.llm import LLM
from corecoder.tools.base import Tool
from stopbench_driver import API_KEY, Spec, StubTool, answer, described, drive, new_result, stub_function

MAX_ROUNDS_TEXT = "(reached maximum tool-call rounds)"  # corecoder/agent.py L99


def stub(tool: StubTool, marker: str) -> Tool:
    class Stub(Tool):
        def execute(self, **kwargs: Any) -> str:  # replaced per instance below
            return answer(marker, tool.name)

    instance = Stub()
    instance.name = tool.name
    instance.description = f"stopbench stub for {tool.name}"
    instance.parameters = {"type": "object", "properties": {p: {"type": "string"} for p in tool.required},
                           "required": tool.required}
    instance.execute = stub_function(tool, marker, any_other_keywords=True)  # type: ignore[method-assign]
    return instance


def run(spec: Spec) -> dict[str, Any]:
    tools = [stub(t, spec.marker) for t in spec.tools]
    llm = LLM(spec.model, API_KEY, base_url=spec.base_url)
    agent = Agent(llm, tools=tools, max_rounds=int(spec.raw.get("max_rounds", 50)))
    result = new_result()
    try:
        final = agent.chat(spec.prompt)
    except openai.APIError as exc:
        # where it was raised, not its class, tells the reasons apart: inside `_call_with_retry`
        # (llm.py L193-209, around create()) it is a request error; otherwise it came out of the
        # stream iteration (llm.py L141), outside every retry (openai 3.x raises a cut body as
        # APIConnectionError there)
        at_request = any(f.name == "_call_with_retry" for f in traceback.extract_tb(exc.__traceback__))
        result.update(ok=False, reason="api_error" if at_request else "stream_error", error=described(exc))
    except Exception as exc:  # anything else CoreCoder lets out of chat()
        result.update(ok=False, reason="exception", error=described(exc))
    else:
        result.update(ok=True, reason="max_rounds" if final == MAX_ROUNDS_TEXT else "text", final=final)
    return result


if __name__ == "__main__":
    sys.exit(drive(run))
