"""A smolagents ToolCallingAgent with MCP tools, as the smolagents tools tutorial writes one, for
``stopbench check``.

The tools are the sequence's, loaded with ``ToolCollection.from_mcp`` from the MCP stdio server whose
argv is STOPBENCH_MCP_COMMAND (a JSON list). The agent is built once on ``OpenAIModel`` (Chat
Completions on the official ``openai`` client, which reads OPENAI_BASE_URL and OPENAI_API_KEY) and run
once on STOPBENCH_PROMPT. How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}``
with smolagents' own run state (``success`` or ``max_steps_error``); an exception is ok=false with its
class name. No retries or guards beyond the framework's defaults (max_steps 20).
"""

import json
import os

from mcp import StdioServerParameters
from smolagents import OpenAIModel, ToolCallingAgent, ToolCollection


def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    try:
        with ToolCollection.from_mcp(server, trust_remote_code=True) as tool_collection:
            agent = ToolCallingAgent(tools=[*tool_collection.tools],
                                     model=OpenAIModel(model_id=os.environ.get("STOPBENCH_MODEL", "gpt-4o")))
            result = agent.run(os.environ.get("STOPBENCH_PROMPT", "Say hello."), return_full_result=True)
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    return {"ok": True, "reason": str(result.state), "final": str(result.output)}


if __name__ == "__main__":
    outcome = main()
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
