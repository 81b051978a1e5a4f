"""A Pydantic AI agent with MCP tools, as its MCP client guide writes one, for ``stopbench check``.

The agent is built once (``Agent("openai:<model>", toolsets=[MCPToolset(...)])``) and run once on
STOPBENCH_PROMPT. Its tools are the sequence's, served by the MCP stdio server whose argv is
STOPBENCH_MCP_COMMAND (a JSON list). ``openai:`` is Pydantic AI's default OpenAI model, which speaks
the Responses API on the official ``openai`` client (OPENAI_BASE_URL, OPENAI_API_KEY); on a Chat
Completions sequence (STOPBENCH_DIALECT openai-chat) the program names the documented ``openai-chat:``
model instead, and on an Anthropic sequence ``anthropic:`` (the official ``anthropic`` client:
ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY), so every wire it has a model for is tested.
How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}`` with the last response's
finish reason as Pydantic AI reports it; an exception is ok=false with its class name. No retries or
guards beyond the framework's defaults.
"""

import asyncio
import json
import os

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    tools = MCPToolset(StdioTransport(command=argv[0], args=argv[1:]))
    dialect = os.environ.get("STOPBENCH_DIALECT", "")
    kind = {"openai-chat": "openai-chat", "anthropic": "anthropic"}.get(dialect, "openai")
    agent = Agent(f"{kind}:{os.environ.get('STOPBENCH_MODEL', 'gpt-4o')}", toolsets=[tools],
                  instructions="Use the tools to complete the task.")
    try:
        async with agent:
            result = await agent.run(os.environ.get("STOPBENCH_PROMPT", "Say hello."))
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    return {"ok": True, "reason": result.response.finish_reason or "output", "final": str(result.output)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
