"""A LangChain 1.x agent (``create_agent``) with MCP tools, as LangChain's MCP guide writes one, for
``stopbench check``.

The tools are the sequence's, loaded through langchain-mcp-adapters' ``MultiServerMCPClient`` from the
MCP stdio server whose argv is STOPBENCH_MCP_COMMAND (a JSON list). The agent is built once with
``create_agent("openai:<model>", tools)`` (langchain-openai's ChatOpenAI, Chat Completions on the
official ``openai`` client: OPENAI_API_BASE or OPENAI_BASE_URL, OPENAI_API_KEY; on an Anthropic sequence
``"anthropic:<model>"``, langchain-anthropic's ChatAnthropic: ANTHROPIC_BASE_URL) and invoked once on
STOPBENCH_PROMPT. How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}`` with the
last message's finish_reason (Anthropic: stop_reason) as LangChain keeps it; an exception is ok=false
with its class name. No retries or guards beyond the framework's defaults.
"""

import asyncio
import json
import os

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        provider = "anthropic" if os.environ.get("STOPBENCH_DIALECT") == "anthropic" else "openai"
        agent = create_agent(f"{provider}:{os.environ.get('STOPBENCH_MODEL', 'gpt-4o')}", tools,
                             system_prompt="Use the tools to complete the task.")
        state = await agent.ainvoke({"messages": [{"role": "user",
                                                   "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]})
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = state["messages"][-1]
    meta = last.response_metadata
    reason = meta.get("finish_reason") or meta.get("stop_reason") or "end"
    return {"ok": True, "reason": str(reason), "final": last.text if isinstance(last.text, str) else str(last.content)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
