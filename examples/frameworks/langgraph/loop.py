"""A LangGraph agent built by hand on ``StateGraph`` with ``ToolNode`` and ``tools_condition``, as
LangGraph's "Add tools" tutorial writes one, for ``stopbench check``.

Followed: https://langchain-ai.github.io/langgraph/tutorials/get-started/2-add-tools/ (the chatbot
node calls ``llm.bind_tools(tools)``; ``ToolNode`` runs the calls; ``add_conditional_edges("chatbot",
tools_condition)`` routes to the tools while the last message has calls, else to ``END``; an edge
goes back from the tools to the chatbot). The tools are the sequence's, loaded through
langchain-mcp-adapters' ``MultiServerMCPClient`` from the MCP stdio server whose argv is
STOPBENCH_MCP_COMMAND (a JSON list); with MCP tools the graph runs async (``ainvoke``). The model is
``init_chat_model("openai:<model>")`` (langchain-openai's ChatOpenAI, Chat Completions on the
official ``openai`` client: OPENAI_BASE_URL, OPENAI_API_KEY) or, on an Anthropic sequence,
``"anthropic:<model>"`` (langchain-anthropic's ChatAnthropic: ANTHROPIC_BASE_URL). The graph is
invoked once on STOPBENCH_PROMPT with LangGraph's defaults (its recursion limit included). How the
run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}`` with the last message's
finish_reason (Anthropic: stop_reason) as LangChain keeps it; an exception is ok=false with its
class name. No retries or guards beyond the framework's defaults.
"""

import asyncio
import json
import os

from langchain.chat_models import init_chat_model
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def build_graph(llm, tools):
    """The tutorial's graph: chatbot -> (tools -> chatbot)* -> END."""
    llm_with_tools = llm.bind_tools(tools)

    async def chatbot(state: MessagesState):
        return {"messages": [await llm_with_tools.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chatbot", chatbot)
    builder.add_node("tools", ToolNode(tools=tools))
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    builder.add_edge(START, "chatbot")
    return builder.compile()


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = MultiServerMCPClient({"stopbench": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    try:
        tools = await client.get_tools()
        provider = "anthropic" if os.environ.get("STOPBENCH_DIALECT") == "anthropic" else "openai"
        llm = init_chat_model(f"{provider}:{os.environ.get('STOPBENCH_MODEL', 'gpt-4o')}")
        graph = build_graph(llm, tools)
        state = await graph.ainvoke({"messages": [{"role": "user",
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
