"""Drive pydantic-ai's own loop (`Agent.run`, PyPI pydantic-ai-slim 2.68.0) against the replay server.

Run with the Python of a venv where `pydantic-ai-slim[openai,anthropic]==2.68.0` is installed (it
brings openai 3.57.0 and anthropic 2.14.0), not the bench's venv:

    python pydantic_ai_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "model": "stopbench",
       "wire": "openai-chat" | "openai-responses" | "anthropic", "ok_marker": "STOPBENCH-OK",
       "tools": [{"name": "read_file", "required": ["path"]}, ...], "safety_cap": 200}

The loop is `Agent(model, tools=stubs).run(prompt)` with its defaults: `output_type=str`, retries 1
(tools and output), `end_strategy='graceful'`, the default `UsageLimits()` (request_limit 50), no
instrumentation. The model is `OpenAIChatModel` for the Chat wire, `OpenAIResponsesModel` for the
Responses wire and `AnthropicModel` for the Anthropic wire, each on its provider built with base URL
and key only (so the SDK client's own 2 retries apply). Gemini sequences go out on Chat
(predicates/pydantic_ai.py says why).

Every tool is a pydantic-ai `Tool` over a function whose signature has the `required` parameters
(typed Any, keyword-only) and `**kwargs`: pydantic-ai validates the arguments against the
signature's schema, and a failure becomes a retry prompt to the model (a RetryPromptPart), which
does not carry the ok marker. A call that binds answers "<ok_marker> <name>" and touches nothing.

A request past `safety_cap` raises a BaseException from the HTTP transport (httpx2, what openai 3.x
and anthropic 2.x send through), which no retry catches: the driver reports "capped". SPEC,
RESULT, the stub function and the request count are the Python drivers' shared plumbing
(stopbench_driver.py, beside this file).

RESULT: {"ok": bool | None, "reason": "output" | "<exception family>" | "capped", "final": str | null,
         "error": str | null}; the reasons are those of predicates/pydantic_ai.py (see `family`).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pydantic_ai import Agent, Tool
from stopbench_driver import (
    API_KEY,
    Capped,
    Spec,
    StubTool,
    count_requests,
    described,
    drive,
    new_result,
    stub_function,
)


def stub(tool: StubTool, marker: str) -> Tool[Any]:
    return Tool(stub_function(tool, marker, any_other_keywords=True), takes_ctx=False, name=tool.name,
                description=f"stopbench stub for {tool.name}")


def family(exc: BaseException) -> str:
    """The reason for an exception: the most specific of the families predicates/pydantic_ai.py names.

    Provider errors are one family, ModelAPIError: pydantic-ai sorts them into subclasses by status,
    code and message (models/openai/_errors.py map_api_errors; ModelRateLimitError,
    ModelContextWindowExceededError, ...), which the bench records as the error's kind, not as a
    stop reason. The class itself is kept in RESULT's error.
    """
    from pydantic_ai import exceptions as ex

    for cls in (ex.UsageLimitExceeded, ex.ContentFilterError, ex.IncompleteToolCall, ex.OutputTokenLimitExceeded,
                ex.UnexpectedModelBehavior, ex.ModelAPIError):
        if isinstance(exc, cls):
            return cls.__name__
    return type(exc).__name__


def model_for(spec: Spec) -> Any:
    if spec.wire == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(spec.model, provider=AnthropicProvider(base_url=spec.anthropic_base_url, api_key=API_KEY))
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=spec.base_url, api_key=API_KEY)
    if spec.wire == "openai-responses":
        return OpenAIResponsesModel(spec.model, provider=provider)
    return OpenAIChatModel(spec.model, provider=provider)


async def run_agent(spec: Spec) -> dict[str, Any]:
    tools = [stub(t, spec.marker) for t in spec.tools]
    agent: Agent[None, str] = Agent(model_for(spec), tools=tools,
                                    instructions="You are a stopbench conformance agent.")
    result = new_result()
    try:
        out = await agent.run(spec.prompt)
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except Exception as exc:  # what Agent.run lets out: its family is the reason, the class is in error
        result.update(ok=False, reason=family(exc), error=described(exc))
    else:
        result.update(ok=True, reason="output", final=None if out.output is None else str(out.output))
    return result


def run(spec: Spec) -> dict[str, Any]:
    count_requests(spec.safety_cap)
    return asyncio.run(run_agent(spec))


if __name__ == "__main__":
    sys.exit(drive(run))
