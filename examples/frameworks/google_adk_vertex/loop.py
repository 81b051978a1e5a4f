"""Google ADK's LlmAgent on Vertex AI, with the bench's tools over MCP, for ``stopbench check``.

Vertex AI is chosen as ADK's express-mode page writes it
(https://google.github.io/adk-docs/integrations/express-mode/): GOOGLE_GENAI_USE_VERTEXAI=TRUE and
an API key (GOOGLE_API_KEY, which ``check`` sets), nothing in the program; google-genai then sends
each request to express mode's ``/v1beta1/publishers/google/models/<model>:generateContent``
(``framework.json`` sets the variable, which ``check`` removes). The base URL is GOOGLE_GEMINI_BASE_URL,
the server's root: ADK leaves Vertex to the variable, and google-genai 2.34.0 picks the base URL
(``client.py`` line 415) before it reads it, so it reads the Gemini API's variable. The rest is
the Google ADK row's program (``examples/frameworks/google_adk/loop.py``): an ``LlmAgent`` with
``McpToolset`` on the stdio server, run by an ``InMemoryRunner`` on one user message, the events read
until the end, the final response kept; ok false when the final event carries ADK's ``error_code``.
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


def report(ok: bool, reason: str, final: str = "") -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


async def main() -> tuple[bool, str, str]:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    toolset = McpToolset(connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command=argv[0], args=argv[1:])))
    agent = LlmAgent(model=os.environ["STOPBENCH_MODEL"], name="stopbench_agent",
                     instruction="Do the user's task with the tools you have.", tools=[toolset])
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
