"""A LangChain 1.x agent (``create_agent``) on Ollama's native API, with MCP tools, for ``stopbench check``.

The chat model is langchain-ollama's ``ChatOllama`` built as LangChain's Ollama integration page
writes it (https://docs.langchain.com/oss/python/integrations/chat/ollama): the model named, nothing
else; its ``ollama`` client finds the server by OLLAMA_HOST (which ``check`` sets to the server's
root), so each request is ``POST /api/chat``. The rest is the LangChain row's program
(``examples/frameworks/langchain/loop.py``): the tools through langchain-mcp-adapters'
``MultiServerMCPClient`` on STOPBENCH_MCP_COMMAND, the agent invoked once on STOPBENCH_PROMPT,
``{"ok", "reason", "final"}`` to STOPBENCH_RESULT with the last message's ``done_reason`` as
ChatOllama keeps it in ``response_metadata``; an exception is ok=false with its class name. No
retries or guards beyond the framework's defaults.
"""

import asyncio
import json
import os

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_ollama import ChatOllama


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        model = ChatOllama(model=os.environ.get("STOPBENCH_MODEL", "llama3.2"))
        agent = create_agent(model, tools, system_prompt="Use the tools to complete the task.")
        state = await agent.ainvoke({"messages": [{"role": "user",
                                                   "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]})
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = state["messages"][-1]
    reason = last.response_metadata.get("done_reason") or "end"
    return {"ok": True, "reason": str(reason), "final": last.text if isinstance(last.text, str) else str(last.content)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
