"""The Anthropic Python SDK's tool runner (``client.beta.messages.tool_runner``) on the bench's MCP tools.

As the SDK's tool-runner docs and its MCP helpers (``anthropic.lib.tools.mcp``) write it: an MCP
client session over stdio, each listed tool wrapped with ``async_mcp_tool``, and the runner driven
to the end with ``until_done()``; everything else (threads, iterations, retries) the SDK's defaults.
"""

import asyncio
import json
import os
import traceback

from anthropic import AsyncAnthropic
from anthropic.lib.tools.mcp import async_mcp_tool
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        client = AsyncAnthropic()  # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from the environment
        runner = client.beta.messages.tool_runner(
            model=os.environ["STOPBENCH_MODEL"],
            max_tokens=1024,
            tools=[async_mcp_tool(t, session) for t in listed.tools],
            messages=[{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}],
        )
        message = await runner.until_done()
        text = "".join(b.text for b in message.content if b.type == "text")
        return True, str(message.stop_reason), text


try:
    report(*asyncio.run(main()))
except Exception as exc:  # how the run ended, for the bench: the SDK (or the MCP session) raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
