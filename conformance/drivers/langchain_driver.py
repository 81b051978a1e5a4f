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
model calls), and the driver reports "capped". SPEC, RESULT, the stub's answer and the request
count are the Python drivers' shared plumbing (stopbench_driver.py, beside this file).

RESULT: {"ok": bool | None, "reason": "final" | "GraphRecursionError" | "api_error" | "exception" |
         "capped", "final": str | null, "error": str | null}; the reasons are those of
predicates/langchain.py.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphRecursionError
from pydantic import ConfigDict, create_model
from stopbench_driver import (
    API_KEY,
    Capped,
    Spec,
    StubTool,
    answer,
    count_requests,
    described,
    drive,
    identifier,
    new_result,
)


def stub(tool: StubTool, marker: str) -> StructuredTool:
    fields: dict[str, Any] = {p: (Any, ...) for p in tool.required}
    schema = create_model(identifier("Args_", tool.name) or "Args_blank",
                          __config__=ConfigDict(extra="allow"), **fields)

    def execute(**kwargs: Any) -> str:
        return answer(marker, tool.name)

    return StructuredTool.from_function(func=execute, name=tool.name, description=f"stopbench stub for {tool.name}",
                                        args_schema=schema)


def model_for(spec: Spec) -> Any:
    if spec.wire == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=spec.model, base_url=spec.anthropic_base_url,  # type: ignore[call-arg]
                             api_key=API_KEY)
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=spec.model, base_url=spec.base_url, api_key=API_KEY,  # type: ignore[arg-type]
                      use_responses_api=spec.wire == "openai-responses")


def text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def run(spec: Spec) -> dict[str, Any]:
    count_requests(spec.safety_cap)
    agent = create_agent(model_for(spec), tools=[stub(t, spec.marker) for t in spec.tools])
    result = new_result()
    try:
        state = agent.invoke({"messages": [{"role": "user", "content": spec.prompt}]})
    except Capped as exc:
        result.update(ok=None, reason="capped", error=str(exc))
    except GraphRecursionError as exc:
        result.update(ok=False, reason="GraphRecursionError", error=str(exc))
    except Exception as exc:  # the provider's error (after the client's retries) or anything else raised
        api = type(exc).__module__.split(".")[0] in ("openai", "anthropic", "langchain_openai",
                                                      "langchain_anthropic")
        result.update(ok=False, reason="api_error" if api else "exception", error=described(exc))
    else:
        messages = state.get("messages", [])
        result.update(ok=True, reason="final", final=text_of(messages[-1]) if messages else None)
    return result


if __name__ == "__main__":
    sys.exit(drive(run))
