"""A Chat loop whose tools come from the bench's MCP server, as a framework that takes MCP tools
would: ``stdio`` spawns STOPBENCH_MCP_COMMAND with the MCP SDK's client (its own environment),
``http`` connects to STOPBENCH_MCP_URL. Every call goes through ``tools/call``; the loop stops on a
reply without calls and writes its result."""

import json
import os
import sys

from anyio.from_thread import start_blocking_portal
from chat import chat_loop
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def main(transport: str) -> None:
    if transport == "stdio":
        argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
        server: object = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        server = os.environ["STOPBENCH_MCP_URL"]
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:  # type: ignore[arg-type]
        listed = portal.call(client.list_tools).tools
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.input_schema}} for t in listed]

        def run_tool(name: str, arguments: str) -> str:
            out = portal.call(client.call_tool, name, json.loads(arguments or "{}"))
            return "".join(getattr(b, "text", "") for b in out.content)

        chat_loop(run_tool, tools)


main(sys.argv[1])
