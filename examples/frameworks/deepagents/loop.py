"""A Deep Agent (LangChain's ``deepagents``, ``create_deep_agent``) with MCP tools, as the Deep Agents
tools page writes one, for ``stopbench check``.

Followed: https://docs.langchain.com/oss/python/deepagents/tools (MCP tools: load them with
langchain-mcp-adapters' ``MultiServerMCPClient``, pass them to ``create_deep_agent(model=..., tools=...)``
beside the harness's built-in tools, then ``await agent.ainvoke({"messages": [...]})``) and
https://docs.langchain.com/oss/python/deepagents/models (a ``provider:model`` string). The tools are the
sequence's, from the MCP stdio server whose argv is STOPBENCH_MCP_COMMAND (a JSON list). The model is the
string ``"openai:<model>"`` on a Responses sequence (deepagents' own default for ``openai:``: langchain-openai's
ChatOpenAI on the Responses API), ``init_chat_model("openai:<model>", use_responses_api=False)`` on a Chat
Completions sequence (what ``create_deep_agent``'s docstring says to pass for Chat Completions),
``"anthropic:<model>"`` (ChatAnthropic) on an Anthropic sequence and ``"bedrock_converse:<model>"``
(langchain-aws' ChatBedrockConverse on boto3's ``bedrock-runtime``: AWS_ENDPOINT_URL_BEDROCK_RUNTIME) on a
Bedrock sequence. The agent is invoked once on STOPBENCH_PROMPT with its defaults (no system prompt of its
own, the harness's recursion limit). How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason",
"final"}`` with the last message's finish_reason (Responses: status; Anthropic: stop_reason; Bedrock: stopReason) as
LangChain keeps it; an exception is ok=false with its class name. No retries or guards beyond the
framework's defaults.
"""

import asyncio
import json
import os

from deepagents import create_deep_agent
from langchain.chat_models import init_chat_model
from langchain_mcp_adapters.client import MultiServerMCPClient


def model():
    """The model as the Deep Agents docs pass it, per wire."""
    name = os.environ.get("STOPBENCH_MODEL", "gpt-4o")
    dialect = os.environ.get("STOPBENCH_DIALECT")
    if dialect == "openai-chat":
        return init_chat_model(f"openai:{name}", use_responses_api=False)
    provider = {"anthropic": "anthropic", "bedrock-converse": "bedrock_converse"}.get(dialect, "openai")
    return f"{provider}:{name}"


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        agent = create_deep_agent(model=model(), tools=tools)
        state = await agent.ainvoke({"messages": [{"role": "user",
                                                   "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]})
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = state["messages"][-1]
    meta = last.response_metadata
    reason = (meta.get("finish_reason") or meta.get("status") or meta.get("stop_reason") or meta.get("stopReason")
              or "end")
    return {"ok": True, "reason": str(reason), "final": last.text if isinstance(last.text, str) else str(last.content)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
