"""Run strands' Agent on its default model provider, ``BedrockModel``, against an endpoint; print how it
ended as one JSON line. Run by tests/wires/test_strands_bedrock.py with the interpreter of the venv
``make framework-install FRAMEWORK=strands_agents`` builds (strands-agents 1.62.0, boto3 1.44.8)."""

import json
import sys

from botocore.config import Config
from strands import Agent, tool
from strands.models.bedrock import BedrockModel


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
def edit_file(path: str, old: str, new: str) -> str:
    """Replace old with new in a file."""
    return "edited"


@tool
def search_files(query: str) -> str:
    """Search the files."""
    return "app/__main__.py:1"


@tool
def bash(command: str) -> str:
    """Run a shell command."""
    return "ok"


def main(endpoint: str) -> dict[str, object]:
    # strands' own defaults but for the endpoint, dummy credentials and one attempt per call (the
    # server answers request i with turn i: a retry by botocore is a request like any other)
    model = BedrockModel(model_id="us.anthropic.claude-sonnet-4-20250514-v1:0", region_name="us-east-1",
                         endpoint_url=endpoint, boto_client_config=Config(retries={"total_max_attempts": 1}))
    agent = Agent(model=model, tools=[read_file, edit_file, search_files, bash], callback_handler=None)
    try:
        result = agent("go")
    except Exception as exc:  # how the run ended: strands raised
        return {"raised": type(exc).__name__, "message": str(exc)[:300]}
    return {"stop_reason": str(result.stop_reason), "text": str(result).strip()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
