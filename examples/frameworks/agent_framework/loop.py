"""A Microsoft Agent Framework ``Agent`` on the bench's MCP tools, as the framework's MCP guide and
``MCPStdioTool``'s own example write one, for ``stopbench check``.

Followed: https://learn.microsoft.com/en-us/agent-framework/user-guide/model-context-protocol/using-mcp-tools
and the example in ``MCPStdioTool``'s docstring (agent-framework-core 1.23.0,
``agent_framework/_mcp.py`` lines 3631-3652): ``MCPStdioTool(name, command, args)`` entered with
``async with``, ``Agent(client=client, name=..., tools=mcp_tool)`` and ``await agent.run(prompt)``,
everything else the framework's defaults (its function-invocation loop included). The client is the
sequence's wire: ``OpenAIChatCompletionClient`` (Chat Completions) or ``OpenAIChatClient`` (the
Responses API), both on the official ``openai`` client (OPENAI_BASE_URL, OPENAI_API_KEY) with
``model=STOPBENCH_MODEL``. How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason",
"final"}`` with the response's finish_reason (``end`` when it has none); an exception is ok=false
with its class name.
"""

import asyncio
import json
import os

from agent_framework import Agent, MCPStdioTool
from agent_framework.openai import OpenAIChatClient, OpenAIChatCompletionClient


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    model = os.environ.get("STOPBENCH_MODEL", "gpt-4o")
    wire = os.environ.get("STOPBENCH_DIALECT", "openai-chat")
    client = OpenAIChatClient(model=model) if wire == "openai-responses" else OpenAIChatCompletionClient(model=model)
    try:
        async with MCPStdioTool(name="stopbench", command=argv[0], args=argv[1:]) as mcp_tool:
            agent = Agent(client=client, name="assistant", instructions="Use the tools to complete the task.",
                          tools=mcp_tool)
            response = await agent.run(os.environ.get("STOPBENCH_PROMPT", "Say hello."))
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)[:500]}
    return {"ok": True, "reason": str(response.finish_reason or "end"), "final": response.text}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
