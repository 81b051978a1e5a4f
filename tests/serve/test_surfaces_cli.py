"""``stopbench serve chat-tool-rounds``, the command a user runs, answers each gateway's official client
through the sequence's tool rounds to its answer: one run per client, each observed to its end."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx
import openai
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from tests.serve.serving import serve_command
from tests.serve.surfaces import ANSWER, ROUNDS, calls_served
from tests.serve.test_surfaces_azure import chat_rounds
from tests.serve.test_surfaces_vertex import claude_rounds, gemini_rounds


def test_stopbench_serve_answers_every_gateways_client_to_the_end(tmp_path: Path) -> None:
    got = []
    with serve_command(tmp_path, ROUNDS.id) as served:
        root = served.url
        azure = openai.AzureOpenAI(azure_endpoint=root, api_version="2024-10-21", api_key="k", max_retries=0)
        got.append(chat_rounds(azure, "my-deployment", True)[:2])
        runs = [
            lambda: gemini_rounds(genai.Client(vertexai=True, project="p", location="us-central1",
                                               credentials=Credentials(token="k"),  # type: ignore[no-untyped-call]
                                               http_options=types.HttpOptions(base_url=root)), True),
            lambda: claude_rounds(anthropic.AnthropicVertex(region="us-east5", project_id="p", access_token="k",
                                                            base_url=root + "/v1", max_retries=0), "claude", True)[:2],
            lambda: claude_rounds(anthropic.AnthropicBedrock(aws_region="us-east-1", base_url=root, max_retries=0,
                                                             aws_access_key="AKIDSTOPBENCH", aws_secret_key="s"),
                                  "anthropic.claude", True)[:2],
        ]
        for run in runs:
            httpx.post(root + "/_stopbench/run", json={"sequence": ROUNDS.id}, timeout=10).raise_for_status()
            got.append(run())
    assert got == [(calls_served(), ANSWER)] * 4
    observed = json.loads(served.observed.read_text(encoding="utf-8"))
    assert [[s["action"] for s in run["steps"]] for run in observed] == [["continue"] * 3 + ["stop"]] * 4
    assert not any(run["running"] for run in observed)
