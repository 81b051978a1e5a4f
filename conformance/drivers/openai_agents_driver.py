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
marker. A call that binds answers "<ok_marker> <name>" and touches nothing.

RESULT: {"ok": bool, "reason": "final_output" | "MaxTurnsExceeded" | "ModelBehaviorError" |
         "ModelRefusalError" | "APIError" | "exception", "final": str | null, "error": str | null};
the reasons are those of predicates/openai_agents.py.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from typing import Any

import openai
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.exceptions import MaxTurnsExceeded, ModelBehaviorError, ModelRefusalError
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel


def stub(name: str, required: list[str], marker: str) -> Any:
    params = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=Any) for p in required]

    def execute(**kwargs: Any) -> str:
        return f"{marker} {name}"

    execute.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    execute.__annotations__ = {**{p: Any for p in required}, "return": str}
    execute.__name__ = "stub_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    execute.__doc__ = f"stopbench stub for {name}"
    return function_tool(execute, name_override=name)


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    set_tracing_disabled(True)
    marker = spec.get("ok_marker", "STOPBENCH-OK")
    client = openai.AsyncOpenAI(base_url=spec["base_url"], api_key="sk-stopbench")
    model_name = spec.get("model", "stopbench")
    if spec.get("wire") == "openai-responses":
        model: Any = OpenAIResponsesModel(model=model_name, openai_client=client)
    else:
        model = OpenAIChatCompletionsModel(model=model_name, openai_client=client)
    tools = [stub(t["name"], list(t.get("required", [])), marker) for t in spec.get("tools", [])]
    agent = Agent(name="stopbench", instructions="You are a stopbench conformance agent.", model=model,
                  tools=tools)
    result: dict[str, Any] = {"ok": None, "reason": None, "final": None, "error": None}
    try:
        out = await Runner.run(agent, spec.get("prompt", "stopbench conformance run"))
    except MaxTurnsExceeded as exc:
        result.update(ok=False, reason="MaxTurnsExceeded", error=str(exc))
    except ModelRefusalError as exc:
        result.update(ok=False, reason="ModelRefusalError", error=str(exc))
    except ModelBehaviorError as exc:
        result.update(ok=False, reason="ModelBehaviorError", error=str(exc))
    except openai.APIError as exc:
        result.update(ok=False, reason="APIError", error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # anything else Runner.run lets out
        result.update(ok=False, reason="exception", error=f"{type(exc).__name__}: {exc}")
    else:
        final = out.final_output
        result.update(ok=True, reason="final_output", final=None if final is None else str(final))
    finally:
        await client.close()
    return result


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    result = asyncio.run(run(spec))
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump(result, fh, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
