"""Google ADK's LlmAgent with the bench's tools over MCP, as the ADK MCP-tools and runtime docs write it.

An ``LlmAgent`` with ``McpToolset`` on the stdio server, run by an ``InMemoryRunner``: one user
message, the events read until the end, the final response's text kept. Gemini sequences go out on
ADK's native Gemini path (google-genai, whose base URL comes from the environment); Chat sequences
through ADK's ``LiteLlm`` wrapper (``openai/<model>``), as the ADK models docs write it for OpenAI.
Everything else ADK's defaults.
"""

import asyncio
import json
import os
import traceback

from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters


def model(dialect: str, name: str):
    if dialect == "gemini":
        return name
    from google.adk.models.lite_llm import LiteLlm
    return LiteLlm(model=f"openai/{name}")


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    toolset = McpToolset(connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command=argv[0], args=argv[1:])))
    agent = LlmAgent(model=model(os.environ["STOPBENCH_DIALECT"], os.environ["STOPBENCH_MODEL"]),
                     name="stopbench_agent", instruction="Do the user's task with the tools you have.",
                     tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="stopbench")
    session = await runner.session_service.create_session(app_name="stopbench", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=os.environ["STOPBENCH_PROMPT"])])
    final = None
    try:
        async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            if event.is_final_response():
                final = event
    finally:
        await toolset.close()
    if final is None:
        return False, "no final response", ""
    text = "".join(p.text or "" for p in (final.content.parts if final.content else []) or [])
    if final.error_code:  # ADK's own word that the response is an error
        code = getattr(final.error_code, "name", final.error_code)
        return False, str(code), final.error_message or text
    reason = final.finish_reason.name if final.finish_reason is not None else "final_response"
    return True, reason, text


try:
    report(*asyncio.run(main()))
except Exception as exc:  # how the run ended, for the bench: ADK raised
    traceback.print_exc()
    report(False, type(exc).__name__, str(exc)[:500])
