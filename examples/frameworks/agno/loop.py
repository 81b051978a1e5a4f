"""Agno's Agent with the bench's tools over MCP, as Agno's MCP docs write it.

``MCPTools`` on the stdio server (``async with``), an ``Agent`` with the model class of the wire the
sequence speaks (OpenAIChat, OpenAIResponses, Claude, Gemini: each reads its base URL and key from
the environment), and ``await agent.arun(prompt)``; everything else Agno's defaults.
"""

import asyncio
import json
import os
import traceback

from agno.agent import Agent
from agno.models.anthropic import Claude
from agno.models.google import Gemini
from agno.models.openai import OpenAIChat, OpenAIResponses
from agno.run.base import RunStatus
from agno.tools.mcp import MCPTools
from mcp import StdioServerParameters

MODELS = {"openai-chat": OpenAIChat, "openai-responses": OpenAIResponses, "anthropic": Claude, "gemini": Gemini}


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    model = MODELS[os.environ["STOPBENCH_DIALECT"]](id=os.environ["STOPBENCH_MODEL"])
    async with MCPTools(server_params=StdioServerParameters(command=argv[0], args=argv[1:])) as mcp_tools:
        agent = Agent(model=model, tools=[mcp_tools])
        response = await agent.arun(os.environ["STOPBENCH_PROMPT"])
    status = response.status
    text = response.content if isinstance(response.content, str) else json.dumps(response.content, default=str)
    return status == RunStatus.completed, str(getattr(status, "value", status)), text or ""


try:
    report(*asyncio.run(main()))
except Exception as exc:  # how the run ended, for the bench: Agno raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
