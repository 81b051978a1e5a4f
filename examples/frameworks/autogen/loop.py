"""AutoGen AgentChat's AssistantAgent with the bench's tools over MCP, as the AgentChat docs write it.

``McpWorkbench`` on the stdio server (``async with``), an ``AssistantAgent`` with the model client of
the sequence's wire (OpenAIChatCompletionClient, AnthropicChatCompletionClient: each reads its base
URL and key from the environment), ``reflect_on_tool_use=True`` as the MCP example has it, and
``max_tool_iterations=10`` (the default, 1, ends after one tool round: no loop to test), then
``await agent.run(task=prompt)``; everything else AutoGen's defaults.
"""

import asyncio
import json
import os
import traceback

from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import ModelFamily, ModelInfo
from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams


def model_client(dialect: str, model: str):  # each client imports its SDK: only the one needed
    if dialect == "openai-chat":
        from autogen_ext.models.openai import OpenAIChatCompletionClient
        return OpenAIChatCompletionClient(model=model)
    from autogen_ext.models.anthropic import AnthropicChatCompletionClient
    return AnthropicChatCompletionClient(
        model=model, model_info=ModelInfo(vision=False, function_calling=True, json_output=False,
                                          family=ModelFamily.CLAUDE_4_SONNET, structured_output=False))


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    client = model_client(os.environ["STOPBENCH_DIALECT"], os.environ["STOPBENCH_MODEL"])
    async with McpWorkbench(server_params=StdioServerParams(command=argv[0], args=argv[1:])) as workbench:
        agent = AssistantAgent("assistant", model_client=client, workbench=workbench, reflect_on_tool_use=True,
                               max_tool_iterations=10)
        result = await agent.run(task=os.environ["STOPBENCH_PROMPT"])
    await client.close()
    last = result.messages[-1]
    return True, result.stop_reason or type(last).__name__, str(getattr(last, "content", ""))


try:
    report(*asyncio.run(main()))
except Exception as exc:  # how the run ended, for the bench: AutoGen raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
