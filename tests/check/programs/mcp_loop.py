"""A Chat loop whose tools come from the bench's MCP server, as a framework that takes MCP tools
would: ``stdio`` spawns STOPBENCH_MCP_COMMAND with the MCP SDK's client (its own environment),
``http`` connects to STOPBENCH_MCP_URL. Every call goes through ``tools/call``; the loop stops on a
reply without calls and writes its result."""

import json
import os
import sys
import urllib.request

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def post(url: str, data: object) -> dict:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


async def main(transport: str) -> None:
    if transport == "stdio":
        argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
        server: object = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        server = os.environ["STOPBENCH_MCP_URL"]
    async with Client(server) as client:  # type: ignore[arg-type]
        listed = (await client.list_tools()).tools
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.input_schema}} for t in listed]
        messages: list = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
        for _ in range(20):
            reply = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                         {"model": os.environ["STOPBENCH_MODEL"], "messages": messages, "tools": tools})
            message = reply["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls or None})
            if not calls:
                break
            for c in calls:
                out = await client.call_tool(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                text = "".join(getattr(b, "text", "") for b in out.content)
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": text})
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": True, "reason": "answered", "final": ""}, fh)


anyio.run(main, sys.argv[1])
