"""A kept-back program: Microsoft Semantic Kernel's ChatCompletionAgent with MCP tools.

Written the way Semantic Kernel's docs write an agent with tools (a ChatCompletionAgent over a chat
completion service, the tools as a plugin, here the bench's MCP server through MCPStdioPlugin; the
agent's default function choice behaviour is Auto, so the kernel runs the calls and asks again),
and pointed at stopbench check through the variables docs/check.md lists: OpenAI's Chat
Completions (OpenAIChatCompletion, whose AsyncOpenAI reads OPENAI_BASE_URL) or Anthropic's Messages
(AnthropicChatCompletion, whose AsyncAnthropic reads ANTHROPIC_BASE_URL) after STOPBENCH_DIALECT.
"""

import asyncio
import json
import os

from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.mcp import MCPStdioPlugin


def service():
    model = os.environ["STOPBENCH_MODEL"]
    if os.environ.get("STOPBENCH_DIALECT") == "anthropic":
        from semantic_kernel.connectors.ai.anthropic import AnthropicChatCompletion

        return AnthropicChatCompletion(ai_model_id=model)
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    return OpenAIChatCompletion(ai_model_id=model)


def report(ok, reason, final):
    path = os.environ.get("STOPBENCH_RESULT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"ok": ok, "reason": reason, "final": final}, f)


async def main():
    command, *args = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    async with MCPStdioPlugin(name="stopbench", description="The project's tools", command=command,
                              args=args) as tools:
        agent = ChatCompletionAgent(
            service=service(),
            name="Assistant",
            instructions="You are a helpful coding assistant. Use the tools when you need them.",
            plugins=[tools],
        )
        response = await agent.get_response(messages=os.environ["STOPBENCH_PROMPT"])
        print(f"# {response.name}: {response}")
        finish = response.message.finish_reason
        report(True, str(finish.value if finish is not None else "response"), str(response))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as exc:  # the run failed: say how, exit 1
        report(False, type(exc).__name__, str(exc))
        raise
