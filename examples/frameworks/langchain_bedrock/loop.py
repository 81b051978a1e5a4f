"""A LangChain 1.x agent (``create_agent``) on Amazon Bedrock's Converse API, with MCP tools, as
LangChain's MCP guide and its Bedrock page write one, for ``stopbench check``.

Followed: https://docs.langchain.com/oss/python/integrations/chat/bedrock (``init_chat_model(
"<model id>", model_provider="bedrock_converse")``: langchain-aws' ChatBedrockConverse on boto3's
``bedrock-runtime`` client, which reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the region and the keys that
``check`` sets) and https://docs.langchain.com/oss/python/langchain/mcp (tools from langchain-mcp-adapters'
``MultiServerMCPClient``, here the MCP stdio server whose argv is STOPBENCH_MCP_COMMAND). The agent is
built once with ``create_agent(model, tools)`` and invoked once on STOPBENCH_PROMPT with its defaults (the
same program as the langchain row, on Bedrock). How the run ended goes to STOPBENCH_RESULT: ``{"ok",
"reason", "final"}`` with the last message's stopReason as ChatBedrockConverse keeps it; an exception is
ok=false with its class name. No retries or guards beyond the framework's defaults (boto3's own retries
included).
"""

import asyncio
import json
import os

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_mcp_adapters.client import MultiServerMCPClient


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        model = init_chat_model(os.environ.get("STOPBENCH_MODEL", "us.anthropic.claude-sonnet-4-20250514-v1:0"),
                                model_provider="bedrock_converse")
        agent = create_agent(model, tools, system_prompt="Use the tools to complete the task.")
        state = await agent.ainvoke({"messages": [{"role": "user",
                                                   "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]})
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = state["messages"][-1]
    reason = last.response_metadata.get("stopReason") or "end"
    return {"ok": True, "reason": str(reason), "final": last.text if isinstance(last.text, str) else str(last.content)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
