"""An OpenAI Agents SDK agent on a non-OpenAI model through LiteLLM, with MCP tools, as the SDK's LiteLLM
page writes one, for ``stopbench check``.

Followed: https://openai.github.io/openai-agents-python/models/litellm/ (``Agent(model=LitellmModel(
model="<provider>/<model>", base_url=..., api_key=...))``, the ``agents[litellm]`` extra) and the SDK's MCP
guide (``MCPServerStdio``, as the openai_agents row). The model is the sequence's wire as LiteLLM names
it, with the replay server as its base URL: ``anthropic/<id>`` (ANTHROPIC_BASE_URL), ``gemini/<id>``
(GOOGLE_GEMINI_BASE_URL's ``/v1beta``), ``bedrock/converse/<id>`` (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the
dummy AWS keys ``check`` sets). The agent is run once on STOPBENCH_PROMPT with ``Runner.run`` and its
defaults (max_turns 10). How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}``; the
SDK exposes no finish word, so reason is ``final_output``; an exception is ok=false with its class name.
No retries or guards beyond the SDK's and LiteLLM's defaults.
"""

import asyncio
import json
import os

from agents import Agent, Runner
from agents.extensions.models.litellm_model import LitellmModel
from agents.mcp import MCPServerStdio

ROUTES = {
    "anthropic": ("anthropic", lambda env: env["ANTHROPIC_BASE_URL"], "ANTHROPIC_API_KEY"),
    "gemini": ("gemini", lambda env: env["GOOGLE_GEMINI_BASE_URL"].rstrip("/") + "/v1beta", "GEMINI_API_KEY"),
    "bedrock-converse": ("bedrock/converse", lambda env: env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"], None),
}
"""The sequence's wire: (LiteLLM's model prefix, the base URL on the replay server, the key's variable)."""


def model() -> LitellmModel:
    prefix, base, key = ROUTES[os.environ.get("STOPBENCH_DIALECT", "anthropic")]
    return LitellmModel(model=f"{prefix}/{os.environ.get('STOPBENCH_MODEL', 'claude-sonnet-4-5')}",
                        base_url=base(os.environ), api_key=os.environ.get(key) if key else None)


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    params = {"command": argv[0], "args": argv[1:]}
    try:
        async with MCPServerStdio(name="stopbench tools", params=params) as server:
            agent = Agent(name="Assistant", instructions="Use the tools to complete the task.",
                          mcp_servers=[server], model=model())
            result = await Runner.run(agent, os.environ.get("STOPBENCH_PROMPT", "Say hello."))
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    return {"ok": True, "reason": "final_output", "final": str(result.final_output)}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
