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
and anthropic 2.x send through), which no retry catches: the driver reports "capped".

RESULT: {"ok": bool | None, "reason": "output" | "<exception family>" | "capped", "final": str | null,
         "error": str | null}; the reasons are those of predicates/pydantic_ai.py (see `family`).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, Tool


class Capped(BaseException):
    """A request past the bench's safety cap (BaseException: no retry loop catches it)."""


def count_requests(cap: int) -> None:
    """Count every HTTP request the clients make, through httpx2's (and httpx's) async transport."""
    seen = {"n": 0}
    for module in ("httpx2", "httpx"):
        try:
            lib = importlib.import_module(module)
        except ImportError:
            continue
        send = lib.AsyncHTTPTransport.handle_async_request

        async def handle_async_request(self: Any, request: Any, _send: Any = send) -> Any:
            seen["n"] += 1
            if seen["n"] > cap + 1:  # the server sees request cap + 1, so the bench knows the loop went on
                raise Capped(f"request {seen['n']} is past the safety cap of {cap}")
            return await _send(self, request)

        lib.AsyncHTTPTransport.handle_async_request = handle_async_request


def stub(name: str, required: list[str], marker: str) -> Tool[Any]:
    params = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=Any) for p in required]
    params.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation=Any))

    def execute(**kwargs: Any) -> str:
        return f"{marker} {name}"

    execute.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    execute.__annotations__ = {**{p: Any for p in required}, "kwargs": Any, "return": str}
    execute.__name__ = "stub_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    execute.__doc__ = f"stopbench stub for {name}"
    return Tool(execute, takes_ctx=False, name=name, description=f"stopbench stub for {name}")


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


def model_for(spec: dict[str, Any]) -> Any:
    wire = spec.get("wire", "openai-chat")
    name = spec.get("model", "stopbench")
    if wire == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        base = spec["base_url"]
        base = base[: -len("/v1")] if base.endswith("/v1") else base  # the client appends /v1/messages
        return AnthropicModel(name, provider=AnthropicProvider(base_url=base, api_key="sk-stopbench"))
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=spec["base_url"], api_key="sk-stopbench")
    if wire == "openai-responses":
        return OpenAIResponsesModel(name, provider=provider)
    return OpenAIChatModel(name, provider=provider)


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    marker = spec.get("ok_marker", "STOPBENCH-OK")
    tools = [stub(t["name"], list(t.get("required", [])), marker) for t in spec.get("tools", [])]
    agent: Agent[None, str] = Agent(model_for(spec), tools=tools,
                                    instructions="You are a stopbench conformance agent.")
    result: dict[str, Any] = {"ok": None, "reason": None, "final": None, "error": None}
    try:
        out = await agent.run(spec.get("prompt", "stopbench conformance run"))
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except Exception as exc:  # what Agent.run lets out: its family is the reason, the class is in error
        result.update(ok=False, reason=family(exc), error=f"{type(exc).__name__}: {exc}")
    else:
        result.update(ok=True, reason="output", final=None if out.output is None else str(out.output))
    return result


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    count_requests(int(spec.get("safety_cap", 200)))
    result = asyncio.run(run(spec))
    Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
