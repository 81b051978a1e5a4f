"""Drive LangChain v1's `create_agent` (PyPI langchain==1.5.0, LangGraph underneath) against the replay server.

Run with the Python of a venv where `langchain==1.5.0 langchain-openai==1.7.4
langchain-anthropic==1.7.10` are installed (they bring langgraph 1.2.24, langchain-core 1.8.3,
openai 3.57.0, anthropic 2.14.0), not the bench's venv:

    python langchain_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "model": "stopbench",
       "wire": "openai-chat" | "openai-responses" | "anthropic", "ok_marker": "STOPBENCH-OK",
       "tools": [{"name": "read_file", "required": ["path"]}, ...], "safety_cap": 200}

The loop is `create_agent(model, tools).invoke({"messages": [prompt]})` with its defaults: no
middleware, no response_format, no checkpointer, the graph's own recursion limit (create_agent sets
9,999 super-steps: langchain/agents/factory.py L1900-1902). The model is `ChatOpenAI` for the Chat
wire, `ChatOpenAI(use_responses_api=True)` for the Responses wire (one class, two APIs) and
`ChatAnthropic` for the Anthropic wire, each built with defaults apart from model, base URL and key
(so the openai/anthropic client's own 2 retries apply: ChatOpenAI passes max_retries only when set,
chat_models/base.py L913, L1474-1475; ChatAnthropic max_retries=2, chat_models.py L1417). Gemini
sequences go out on Chat (ChatGoogleGenerativeAI is another package; predicates/langchain.py).

Every tool is a `StructuredTool` whose args schema is a pydantic model with the `required`
parameters (typed Any, extra keys allowed): arguments without them fail validation, which the
ToolNode's default handler turns into an error ToolMessage (langgraph/prebuilt/tool_node.py
L405-413), as for any tool with a required parameter. A call that binds answers
"<ok_marker> <name>" and touches nothing.

A request past `safety_cap` raises a BaseException from the HTTP transport (nothing in the client
or the graph catches it, so it is not retried): the loop has no cap the bench can reach (5,000
model calls), and the driver reports "capped".

RESULT: {"ok": bool | None, "reason": "final" | "GraphRecursionError" | "api_error" | "exception" |
         "capped", "final": str | null, "error": str | null}; the reasons are those of
predicates/langchain.py.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphRecursionError
from pydantic import ConfigDict, create_model


class Capped(BaseException):
    """A request past the bench's safety cap (BaseException: no retry loop catches it)."""


def count_requests(cap: int) -> None:
    """Count every HTTP request any client makes (the clients keep their own default transports).

    openai 3.x and anthropic 2.x send through httpx2; httpx is patched as well for any client on it.
    """
    seen = {"n": 0}
    for module in ("httpx2", "httpx"):
        try:
            lib = importlib.import_module(module)
        except ImportError:
            continue
        send = lib.HTTPTransport.handle_request

        def handle_request(self: Any, request: Any, _send: Any = send) -> Any:
            seen["n"] += 1
            if seen["n"] > cap + 1:  # the server sees request cap + 1, so the bench knows the loop went on
                raise Capped(f"request {seen['n']} is past the safety cap of {cap}")
            return _send(self, request)

        lib.HTTPTransport.handle_request = handle_request


def stub(name: str, required: list[str], marker: str) -> StructuredTool:
    fields: dict[str, Any] = {p: (Any, ...) for p in required}
    schema = create_model("Args_" + "".join(ch if ch.isalnum() else "_" for ch in name) or "Args_blank",
                          __config__=ConfigDict(extra="allow"), **fields)

    def execute(**kwargs: Any) -> str:
        return f"{marker} {name}"

    return StructuredTool.from_function(func=execute, name=name, description=f"stopbench stub for {name}",
                                        args_schema=schema)


def model_for(spec: dict[str, Any]) -> Any:
    wire = spec.get("wire", "openai-chat")
    name = spec.get("model", "stopbench")
    if wire == "anthropic":
        from langchain_anthropic import ChatAnthropic

        base = spec["base_url"]
        base = base[: -len("/v1")] if base.endswith("/v1") else base  # the client appends /v1/messages
        return ChatAnthropic(model=name, base_url=base, api_key="sk-stopbench")  # type: ignore[call-arg]
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=name, base_url=spec["base_url"], api_key="sk-stopbench",  # type: ignore[arg-type]
                      use_responses_api=wire == "openai-responses")


def text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    marker = spec.get("ok_marker", "STOPBENCH-OK")
    count_requests(int(spec.get("safety_cap", 200)))
    tools = [stub(t["name"], list(t.get("required", [])), marker) for t in spec.get("tools", [])]
    agent = create_agent(model_for(spec), tools=tools)
    result: dict[str, Any] = {"ok": None, "reason": None, "final": None, "error": None}
    try:
        state = agent.invoke({"messages": [{"role": "user", "content": spec.get("prompt", "stopbench run")}]})
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except GraphRecursionError as exc:
        result.update(ok=False, reason="GraphRecursionError", error=str(exc))
    except Exception as exc:  # the provider's error (after the client's retries) or anything else raised
        api = type(exc).__module__.split(".")[0] in ("openai", "anthropic", "langchain_openai",
                                                      "langchain_anthropic")
        result.update(ok=False, reason="api_error" if api else "exception", error=f"{type(exc).__name__}: {exc}")
    else:
        messages = state.get("messages", [])
        result.update(ok=True, reason="final", final=text_of(messages[-1]) if messages else None)
    Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
