"""A Pydantic AI agent on Amazon Bedrock's Converse API, with MCP tools, as its MCP client guide and its
Bedrock page write one, for ``stopbench check``.

Followed: https://ai.pydantic.dev/models/bedrock/ (``Agent("bedrock:<model id>")``: Pydantic AI's
BedrockConverseModel on boto3's ``bedrock-runtime`` client, which reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
the region and the keys that ``check`` sets) and https://ai.pydantic.dev/mcp/client/ (``toolsets=
[MCPToolset(...)]``). The agent is built once and run once on STOPBENCH_PROMPT, as the pydantic_ai row's
program does on the other wires. Its tools are the sequence's, served by the MCP stdio server whose argv
is STOPBENCH_MCP_COMMAND (a JSON list). How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason",
"final"}`` with the last response's finish reason as Pydantic AI reports it; an exception is ok=false with
its class name. No retries or guards beyond the framework's defaults (boto3's own retries included).
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
    model = os.environ.get("STOPBENCH_MODEL", "us.anthropic.claude-sonnet-4-20250514-v1:0")
    agent = Agent(f"bedrock:{model}", toolsets=[tools], instructions="Use the tools to complete the task.")
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
