"""Drive the OpenAI Agents SDK's own loop (PyPI openai-agents==0.24.0) against the stopbench replay server.

Run with the Python of a venv where `openai-agents==0.24.0` (and `openai==3.57.0`) is installed,
not the bench's venv:

    python openai_agents_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "model": "stopbench",
       "wire": "openai-chat" | "openai-responses", "ok_marker": "STOPBENCH-OK",
       "tools": [{"name": "read_file", "required": ["path"]}, ...]}

The loop is `Runner.run(agent, prompt)` with its defaults (max_turns 10, no streaming, no
guardrails, no handoffs, tool_use_behavior "run_llm_again"), tracing disabled, on an `Agent` whose
model is `OpenAIChatCompletionsModel` for the Chat wire and `OpenAIResponsesModel` for the
Responses wire, both on a default `AsyncOpenAI` client pointed at the server (so the client's own
retries apply). This is the configuration predicates/openai_agents.py ports.

Every tool is a stub made by the SDK's own `function_tool` from a function whose signature has the
`required` parameters (typed Any: a stub takes whatever JSON value a call sends) and nothing else:
the SDK parses and validates the arguments as it does for any function tool (tool.py
`_parse_function_tool_json_input`, a pydantic model of the signature), and a failure becomes the
default error result ("An error occurred while running the tool..."), which does not carry the ok
marker. A call that binds answers "<ok_marker> <name>" and touches nothing. SPEC, RESULT and the
stub function are the Python drivers' shared plumbing (stopbench_driver.py, beside this file).

RESULT: {"ok": bool, "reason": "final_output" | "MaxTurnsExceeded" | "ModelBehaviorError" |
         "ModelRefusalError" | "APIError" | "exception", "final": str | null, "error": str | null};
the reasons are those of predicates/openai_agents.py.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import openai
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.exceptions import MaxTurnsExceeded, ModelBehaviorError, ModelRefusalError
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from stopbench_driver import API_KEY, Spec, StubTool, described, drive, new_result, stub_function


def stub(tool: StubTool, marker: str) -> Any:
    return function_tool(stub_function(tool, marker, any_other_keywords=False), name_override=tool.name)


async def run_agent(spec: Spec) -> dict[str, Any]:
    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=spec.base_url, api_key=API_KEY)
    if spec.wire == "openai-responses":
        model: Any = OpenAIResponsesModel(model=spec.model, openai_client=client)
    else:
        model = OpenAIChatCompletionsModel(model=spec.model, openai_client=client)
    tools = [stub(t, spec.marker) for t in spec.tools]
    agent = Agent(name="stopbench", instructions="You are a stopbench conformance agent.", model=model,
                  tools=tools)
    result = new_result()
    try:
        out = await Runner.run(agent, spec.prompt)
    except MaxTurnsExceeded as exc:
        result.update(ok=False, reason="MaxTurnsExceeded", error=str(exc))
    except ModelRefusalError as exc:
        result.update(ok=False, reason="ModelRefusalError", error=str(exc))
    except ModelBehaviorError as exc:
        result.update(ok=False, reason="ModelBehaviorError", error=str(exc))
    except openai.APIError as exc:
        result.update(ok=False, reason="APIError", error=described(exc))
    except Exception as exc:  # anything else Runner.run lets out
        result.update(ok=False, reason="exception", error=described(exc))
    else:
        final = out.final_output
        result.update(ok=True, reason="final_output", final=None if final is None else str(final))
    finally:
        await client.close()
    return result


def run(spec: Spec) -> dict[str, Any]:
    return asyncio.run(run_agent(spec))


if __name__ == "__main__":
    sys.exit(drive(run))
