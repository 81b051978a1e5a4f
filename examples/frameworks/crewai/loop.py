"""A CrewAI agent with MCP tools in a one-task Crew, as CrewAI's MCP stdio page writes one, for
``stopbench check``.

The tools are the sequence's, from crewai-tools' ``MCPServerAdapter`` over the MCP stdio server whose
argv is STOPBENCH_MCP_COMMAND (a JSON list). The agent and its crew are built once (``LLM`` on CrewAI's
native OpenAI provider, Chat Completions on the official ``openai`` client: OPENAI_BASE_URL,
OPENAI_API_KEY; on an Anthropic sequence its native Anthropic provider, ``anthropic/<model>``:
ANTHROPIC_BASE_URL; model STOPBENCH_MODEL) and kicked off once with STOPBENCH_PROMPT as the task. How the
run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}`` (CrewAI reports no finish word:
``kickoff`` returned); an exception is ok=false with its class name. No retries or guards beyond the
framework's defaults (max_iter 20, max_retry_limit 2).
"""

import json
import os

from crewai import LLM, Agent, Crew, Task
from crewai_tools import MCPServerAdapter
from mcp import StdioServerParameters


def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    model = os.environ.get("STOPBENCH_MODEL", "gpt-4o")
    if os.environ.get("STOPBENCH_DIALECT") == "anthropic":
        model = f"anthropic/{model}"  # CrewAI's native Anthropic provider
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    try:
        with MCPServerAdapter(server) as tools:
            agent = Agent(role="Software engineer", goal="Complete the task with the tools you have.",
                          backstory="You fix code by reading files, editing them and running the tests.",
                          tools=tools, llm=LLM(model=model))
            task = Task(description=os.environ.get("STOPBENCH_PROMPT", "Say hello."),
                        expected_output="A short report of what was done.", agent=agent)
            output = Crew(agents=[agent], tasks=[task]).kickoff()
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    return {"ok": True, "reason": "kickoff", "final": output.raw}


if __name__ == "__main__":
    outcome = main()
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
