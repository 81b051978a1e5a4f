"""Strands Agents' Agent with the bench's tools over MCP, as the Strands MCP docs write it.

``MCPClient`` on the stdio server, used as a context manager; its tools listed with
``list_tools_sync()`` and given to an ``Agent`` whose model provider is the one of the sequence's
wire (OpenAIModel, OpenAIResponsesModel, AnthropicModel, GeminiModel: each client reads its base URL
and key from the environment); ``agent(prompt)``; everything else Strands' defaults.
"""

import json
import os
import traceback

from mcp import StdioServerParameters, stdio_client
from strands import Agent
from strands.tools.mcp import MCPClient


def model(dialect: str, model_id: str):  # the provider classes import their SDKs: only the one needed
    if dialect == "openai-chat":
        from strands.models.openai import OpenAIModel
        return OpenAIModel(model_id=model_id)
    if dialect == "openai-responses":
        from strands.models.openai_responses import OpenAIResponsesModel
        return OpenAIResponsesModel(model_id=model_id)
    if dialect == "anthropic":
        from strands.models.anthropic import AnthropicModel
        return AnthropicModel(model_id=model_id, max_tokens=1024)
    from strands.models.gemini import GeminiModel
    return GeminiModel(model_id=model_id)


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    mcp_client = MCPClient(lambda: stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])))
    with mcp_client:
        agent = Agent(model=model(os.environ["STOPBENCH_DIALECT"], os.environ["STOPBENCH_MODEL"]),
                      tools=mcp_client.list_tools_sync(), callback_handler=None)
        result = agent(os.environ["STOPBENCH_PROMPT"])
    return True, str(result.stop_reason), str(result)


try:
    report(*main())
except Exception as exc:  # how the run ended, for the bench: Strands raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
