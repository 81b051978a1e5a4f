"""AG2's ``Agent`` with the bench's tools over MCP, as AG2's docs write an agent with an MCP server.

Followed: https://docs.ag2.ai/docs/user-guide/tools/mcp_servers/ ("Client-side: ``MCPToolkit``",
remote servers: ``Agent(name, tools=[MCPToolkit(url)])``, the toolkit lists the server's tools and
runs each call on it) and the README's first agent (``Agent(name, prompt=..., config=...)``, then
``reply = await agent.ask(task)``, the text in ``reply.body``). The tools are the bench's MCP server
over streamable HTTP (STOPBENCH_MCP_URL); the model config is the one of the sequence's wire, each
reading its base URL from the environment as its SDK does: ``OpenAIConfig`` (Chat Completions),
``OpenAIResponsesConfig``, ``AnthropicConfig``, ``GeminiConfig`` (google-genai reads
GOOGLE_GEMINI_BASE_URL) and ``BedrockConfig`` (aiobotocore reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
signed with the dummy AWS keys ``check`` sets). Everything else is AG2's defaults: ``ask`` runs the
tool calls of each reply and asks again until a reply carries none, with no round limit (the bench's
safety cap ends a loop that never stops).

How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}``, reason the
``finish_reason`` AG2 keeps on the reply it returned (the provider's finish as its client reads it),
final its body; an exception is ok=false with its class name.
"""

import asyncio
import json
import os
import traceback

from ag2 import Agent
from ag2.config import AnthropicConfig, BedrockConfig, GeminiConfig, OpenAIConfig, OpenAIResponsesConfig
from ag2.tools import MCPToolkit

CONFIGS = {"openai-chat": OpenAIConfig, "openai-responses": OpenAIResponsesConfig, "anthropic": AnthropicConfig,
           "gemini": GeminiConfig, "bedrock-converse": BedrockConfig}
"""The AG2 model config of each wire (``ag2.config`` imports every provider SDK installed)."""


async def main() -> dict:
    agent = Agent("assistant", prompt="You are a helpful assistant.",
                  config=CONFIGS[os.environ["STOPBENCH_DIALECT"]](model=os.environ["STOPBENCH_MODEL"]),
                  tools=[MCPToolkit(os.environ["STOPBENCH_MCP_URL"])])
    reply = await agent.ask(os.environ["STOPBENCH_PROMPT"])
    return {"ok": True, "reason": str(reply.response.finish_reason), "final": reply.body or ""}


if __name__ == "__main__":
    try:
        outcome = asyncio.run(main())
    except Exception as exc:  # how the run ended, for the bench: AG2 raised
        traceback.print_exc()
        outcome = {"ok": False, "reason": type(exc).__name__, "final": str(exc)[:500]}
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
