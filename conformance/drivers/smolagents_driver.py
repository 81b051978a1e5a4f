"""Drive smolagents' `ToolCallingAgent` (PyPI smolagents==1.26.0) on `OpenAIServerModel` against the replay server.

Run with the Python of a venv where `smolagents==1.26.0 openai==3.57.0` are installed, not the
bench's venv:

    python smolagents_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "model": "stopbench",
       "wire": "openai-chat", "ok_marker": "STOPBENCH-OK",
       "tools": [{"name": "read_file", "required": ["path"]}, ...], "safety_cap": 200}

The loop is `ToolCallingAgent(tools, model).run(prompt)` with its defaults: max_steps 20, no
planning, no final_answer_checks, not streamed (stream_outputs False: `model.generate`, one
non-streamed Chat Completions request per step). The model is `OpenAIServerModel(model_id, api_base,
api_key)` (an alias of OpenAIModel, models.py L1796) with nothing else set, so the openai client's
own 2 retries and smolagents' rate-limit retrier (3 attempts, models.py L38-41, L1174-1184) apply.
Every sequence goes out on Chat Completions: OpenAIServerModel speaks nothing else
(predicates/smolagents.py says why).

Two things the driver changes that are timing or wire shape, not decisions, said here:
- the rate-limit retrier's waits (60 s, doubled with jitter: utils.py L591-600) are skipped
  (its `time.sleep` is a no-op in the driver): the attempts happen as they would, at once;
- a Chat completion without `usage` gets a zero usage before the client reads it. OpenAI sends
  usage in every non-streamed completion; the replay server omits it when the sequence recorded
  none, and OpenAIModel.generate reads `response.usage.prompt_tokens` unconditionally
  (models.py L1785-1793): without this every such step would raise AttributeError out of run.

Every tool is a smolagents `Tool` whose inputs are the `required` parameters (type "any"), and
which accepts other keys too (as the other drivers' stubs do): a call that validates answers
"<ok_marker> <name>" and touches nothing. A name that is not a Python identifier cannot be a
smolagents tool (Tool.validate_arguments: is_valid_name) and is not registered.

A request past `safety_cap` raises a BaseException from the HTTP transport (smolagents' retrier
re-raises it, nothing else catches it): the driver reports "capped". SPEC, RESULT, the stub's
answer and the request count are the Python drivers' shared plumbing (stopbench_driver.py).

RESULT: {"ok": bool | None, "reason": "final_answer" | "max_steps_error" | "api_error" | "exception" |
         "capped", "final": str | null, "error": str | null}; the reasons are those of
predicates/smolagents.py.
"""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import smolagents.utils as smol_utils
from smolagents import OpenAIServerModel, Tool, ToolCallingAgent
from smolagents.utils import AgentGenerationError, AgentMaxStepsError, is_valid_name
from stopbench_driver import API_KEY, Capped, Spec, StubTool, answer, count_requests, described, drive, new_result


def _with_usage(lib: Any, request: Any, response: Any) -> Any:
    """The response, with a zero `usage` added to a Chat completion that has none (see the docstring)."""
    if not str(request.url).endswith("/chat/completions") or response.status_code != 200:
        return response
    response.read()
    try:
        body = json.loads(response.content)
    except ValueError:
        return response
    if not isinstance(body, dict) or body.get("usage") is not None:
        return response
    body["usage"] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")]
    return lib.Response(200, headers=headers, content=json.dumps(body).encode(), request=request)


class _AnyKeys(dict):  # type: ignore[type-arg]
    """Tool inputs that also admit keys outside the declared ones (validate_tool_arguments reads
    `key not in tool.inputs` and `tool.inputs[key]["type"]`, tools.py L1385-1402)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> dict[str, Any]:
        return {"type": "any", "description": "any value", "nullable": True}


def stub(spec_tool: StubTool, marker: str) -> Tool:
    class Stub(Tool):
        skip_forward_signature_validation = True

        def forward(self, *args: Any, **kwargs: Any) -> str:
            return answer(marker, spec_tool.name)

    Stub.name = spec_tool.name
    Stub.description = f"stopbench stub for {spec_tool.name}"
    Stub.inputs = {p: {"type": "any", "description": p} for p in spec_tool.required}
    Stub.output_type = "string"
    tool = Stub()
    tool.inputs = _AnyKeys(tool.inputs)
    return tool


def run(spec: Spec) -> dict[str, Any]:
    count_requests(spec.safety_cap, amend=_with_usage)
    smol_utils.time = types.SimpleNamespace(time=smol_utils.time.time, sleep=lambda _s: None)  # type: ignore[assignment]
    tools = [stub(t, spec.marker) for t in spec.tools if is_valid_name(t.name)]
    model = OpenAIServerModel(model_id=spec.model, api_base=spec.base_url, api_key=API_KEY)
    agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=-1)
    result = new_result()
    try:
        output = agent.run(spec.prompt)
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except AgentGenerationError as exc:  # the model call raised (after the retries): out of run
        result.update(ok=False, reason="api_error", error=described(exc))
    except Exception as exc:
        result.update(ok=False, reason="exception", error=described(exc))
    else:
        steps = agent.memory.steps
        capped = bool(steps) and isinstance(getattr(steps[-1], "error", None), AgentMaxStepsError)
        result.update(ok=not capped, reason="max_steps_error" if capped else "final_answer",
                      final=None if output is None else str(output))
    return result


if __name__ == "__main__":
    sys.exit(drive(run))
