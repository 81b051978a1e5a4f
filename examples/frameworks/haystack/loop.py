"""A Haystack ``Agent`` on ``OpenAIChatGenerator`` with MCP tools, as Haystack's MCPToolset page writes
one, for ``stopbench check``.

The tools are the sequence's, from mcp-haystack's ``MCPToolset`` over the MCP stdio server whose argv is
STOPBENCH_MCP_COMMAND (a JSON list). The agent is built once (Chat Completions on the official
``openai`` client: OPENAI_BASE_URL, OPENAI_API_KEY; on an Anthropic sequence anthropic-haystack's
``AnthropicChatGenerator`` on the official ``anthropic`` client: ANTHROPIC_BASE_URL; model
STOPBENCH_MODEL) and run once on STOPBENCH_PROMPT. How the run ended goes to STOPBENCH_RESULT: ``{"ok",
"reason", "final"}`` with the last message's finish_reason as Haystack keeps it in its meta; an
exception is ok=false with its class name. No retries or guards beyond the framework's defaults
(max_agent_steps 100).
"""

import json
import os

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack_integrations.components.generators.anthropic import AnthropicChatGenerator
from haystack_integrations.tools.mcp import MCPToolset, StdioServerInfo


def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    try:
        toolset = MCPToolset(server_info=StdioServerInfo(command=argv[0], args=argv[1:]))
        model = os.environ.get("STOPBENCH_MODEL", "gpt-4o")
        if os.environ.get("STOPBENCH_DIALECT") == "anthropic":
            generator = AnthropicChatGenerator(model=model)
        else:
            generator = OpenAIChatGenerator(model=model)
        agent = Agent(chat_generator=generator,
                      tools=toolset, system_prompt="Use the tools to complete the task.")
        result = agent.run(messages=[ChatMessage.from_user(os.environ.get("STOPBENCH_PROMPT", "Say hello."))])
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    last = result["last_message"]
    return {"ok": True, "reason": str(last.meta.get("finish_reason") or "last_message"), "final": last.text or ""}


if __name__ == "__main__":
    outcome = main()
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
