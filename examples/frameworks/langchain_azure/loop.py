"""A LangChain 1.x agent (``create_agent``) on Azure OpenAI, with MCP tools, for ``stopbench check``.

The chat model is langchain-openai's ``AzureChatOpenAI`` built as LangChain's Azure integration page
writes it (https://docs.langchain.com/oss/python/integrations/chat/azure_chat_openai): the deployment
named, the endpoint, key and API version from AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY and
OPENAI_API_VERSION (``framework.json`` sets them: the endpoint is the server's root), so each request
is ``POST /openai/deployments/<deployment>/chat/completions?api-version=...`` with an ``api-key``
header. The rest is the LangChain row's program (``examples/frameworks/langchain/loop.py``): the tools
through langchain-mcp-adapters' ``MultiServerMCPClient`` on STOPBENCH_MCP_COMMAND, the agent invoked
once on STOPBENCH_PROMPT, ``{"ok", "reason", "final"}`` to STOPBENCH_RESULT with the last message's
finish_reason as LangChain keeps it; an exception is ok=false with its class name. No retries or
guards beyond the framework's defaults.
"""

import asyncio
import json
import os

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import AzureChatOpenAI


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        model = AzureChatOpenAI(azure_deployment=os.environ.get("STOPBENCH_MODEL", "gpt-4o"))
        agent = create_agent(model, tools, system_prompt="Use the tools to complete the task.")
        state = await agent.ainvoke({"messages": [{"role": "user",
                                                   "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]})
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = state["messages"][-1]
    reason = last.response_metadata.get("finish_reason") or "end"
    return {"ok": True, "reason": str(reason), "final": last.text if isinstance(last.text, str) else str(last.content)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
