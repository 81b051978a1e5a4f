"""LlamaIndex's FunctionAgent with the bench's tools over MCP, as the LlamaIndex agent and MCP docs write it.

``BasicMCPClient`` on the stdio server, ``McpToolSpec(client).to_tool_list_async()``, a
``FunctionAgent`` with the LLM of the sequence's wire (OpenAI, OpenAIResponses, Anthropic: each reads
its base URL and key from the environment) and ``await agent.run(prompt)``; everything else
LlamaIndex's defaults.
"""

import asyncio
import json
import os
import traceback

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec


def llm(dialect: str, model: str):  # each LLM class imports its SDK: only the one needed
    if dialect == "openai-chat":
        from llama_index.llms.openai import OpenAI
        return OpenAI(model=model)
    if dialect == "openai-responses":
        from llama_index.llms.openai import OpenAIResponses
        return OpenAIResponses(model=model)
    from llama_index.llms.anthropic import Anthropic
    return Anthropic(model=model)


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    tools = await McpToolSpec(client=BasicMCPClient(argv[0], args=argv[1:])).to_tool_list_async()
    agent = FunctionAgent(tools=tools, llm=llm(os.environ["STOPBENCH_DIALECT"], os.environ["STOPBENCH_MODEL"]))
    output = await agent.run(os.environ["STOPBENCH_PROMPT"])
    return True, "completed", str(output)


try:
    report(*asyncio.run(main()))
except Exception as exc:  # how the run ended, for the bench: LlamaIndex raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
