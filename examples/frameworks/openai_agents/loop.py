"""An OpenAI Agents SDK agent with MCP tools, as the SDK's MCP guide writes one, for ``stopbench check``.

The agent is built once and run once on STOPBENCH_PROMPT with ``Runner.run``. Its tools are the
sequence's, served by the MCP stdio server whose argv is STOPBENCH_MCP_COMMAND (a JSON list), through
``MCPServerStdio``. The model is STOPBENCH_MODEL as a string, so the SDK's default provider picks it:
the Responses API on the official ``openai`` client, which reads OPENAI_BASE_URL and OPENAI_API_KEY.
On a Chat Completions sequence (STOPBENCH_DIALECT openai-chat) the program makes the SDK's documented
switch, ``set_default_openai_api("chat_completions")``, so both wires are tested.
How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}``; an exception is ok=false
with its class name. No retries or guards beyond the SDK's defaults (max_turns 10).
"""

import asyncio
import json
import os

from agents import Agent, Runner, set_default_openai_api
from agents.mcp import MCPServerStdio


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    if os.environ.get("STOPBENCH_DIALECT") == "openai-chat":
        set_default_openai_api("chat_completions")  # the SDK's documented switch to Chat Completions
    params = {"command": argv[0], "args": argv[1:]}
    try:
        async with MCPServerStdio(name="stopbench tools", params=params) as server:
            agent = Agent(name="Assistant", instructions="Use the tools to complete the task.",
                          mcp_servers=[server], model=os.environ.get("STOPBENCH_MODEL", "gpt-4o"))
            result = await Runner.run(agent, os.environ.get("STOPBENCH_PROMPT", "Say hello."))
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    return {"ok": True, "reason": "final_output", "final": str(result.final_output)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
