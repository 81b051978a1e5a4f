"""Vertex AI: google-genai with ``vertexai=True`` (a project's paths, ``v1`` and ``v1beta1``, and express
mode with an API key) and Anthropic's ``AnthropicVertex`` (``rawPredict``, ``streamRawPredict``) run
chat-tool-rounds to its answer, JSON and streamed, the model read from the path."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from tests.serve.serving import serving
from tests.serve.surfaces import ANSWER, NAMES, PROMPT, RESULT, ROUNDS, SCHEMA, calls_served, reached_the_end

PROJECT, LOCATION = "my-project", "us-central1"
GEMINI = "gemini-2.5-flash"
CLAUDE = "claude-sonnet-4-5@20250929"
OFFERED = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
    types.FunctionDeclaration(name=n, description=n) for n in NAMES])])


def vertex(url: str, mode: str, version: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, api_version=version, timeout=10_000)
    if mode == "express":
        return genai.Client(vertexai=True, api_key="k", http_options=options)
    return genai.Client(vertexai=True, project=PROJECT, location=LOCATION, http_options=options,
                        credentials=Credentials(token="fake-token"))  # type: ignore[no-untyped-call]


def gemini_rounds(client: genai.Client, stream: bool) -> tuple[list[list[str]], str]:
    """A Gemini loop: (the calls of each round as the client parsed them, the answer)."""
    contents: list[Any] = [types.Content(role="user", parts=[types.Part.from_text(text=PROMPT)])]
    rounds: list[list[str]] = []
    while True:
        if stream:
            chunks = list(client.models.generate_content_stream(model=GEMINI, contents=contents, config=OFFERED))
        else:
            chunks = [client.models.generate_content(model=GEMINI, contents=contents, config=OFFERED)]
        parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])  # type: ignore[index,union-attr]
                 if p.function_call is not None or p.text]
        calls = [p.function_call for p in parts if p.function_call is not None]
        if not calls:
            return rounds, "".join(p.text or "" for p in parts)
        rounds.append([str(c.name) for c in calls])
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=str(c.name), response={"output": RESULT}) for c in calls]))


@pytest.mark.parametrize(("mode", "version"), [("project", "v1"), ("project", "v1beta1"), ("express", "v1")])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_google_genai_on_vertex_runs_the_rounds_to_the_answer(stream: bool, mode: str, version: str) -> None:
    scope = f"/projects/{PROJECT}/locations/{LOCATION}" if mode == "project" else ""
    with serving(ROUNDS) as srv:
        rounds, answer = gemini_rounds(vertex(srv.url, mode, version), stream)
        reached_the_end(srv, f"/{version}{scope}/publishers/google/models/{GEMINI}:")
    assert (rounds, answer) == (calls_served(), ANSWER)


def claude_rounds(client: anthropic.Anthropic | anthropic.AnthropicVertex | anthropic.AnthropicBedrock,
                  model: str, stream: bool) -> tuple[list[list[str]], str, list[str]]:
    """A Messages loop: (the calls of each round as the client parsed them, the answer, the models answered)."""
    tools: list[Any] = [{"name": n, "input_schema": SCHEMA} for n in NAMES]
    messages: list[Any] = [{"role": "user", "content": PROMPT}]
    rounds: list[list[str]] = []
    models: list[str] = []
    while True:
        if stream:
            with client.messages.stream(model=model, max_tokens=512, messages=messages, tools=tools) as s:
                done = s.get_final_message()
        else:
            done = client.messages.create(model=model, max_tokens=512, messages=messages, tools=tools)
        models.append(done.model)
        calls = [b for b in done.content if b.type == "tool_use"]
        if not calls:
            return rounds, "".join(b.text for b in done.content if b.type == "text"), models
        rounds.append([c.name for c in calls])
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in done.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c.id, "content": RESULT} for c in calls]})


@pytest.mark.parametrize("version", ["/v1", ""], ids=["v1", "root"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_vertex_runs_the_rounds_to_the_answer(stream: bool, version: str) -> None:
    with serving(ROUNDS) as srv:
        client = anthropic.AnthropicVertex(region="us-east5", project_id=PROJECT, base_url=srv.url + version,
                                           access_token="fake-token", max_retries=0, timeout=10)
        rounds, answer, models = claude_rounds(client, CLAUDE, stream)
        method = "streamRawPredict" if stream else "rawPredict"
        at = f"{version}/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/{CLAUDE}"
        reached_the_end(srv, f"{at}:{method}")
        first = srv.session.records()[0].body
    assert (rounds, answer, set(models)) == (calls_served(), ANSWER, {CLAUDE})
    assert "anthropic_version" in first and "model" not in first  # the version: the client's (module docstring)


def test_anthropic_vertex_counts_tokens_on_the_side() -> None:
    with serving(ROUNDS) as srv:
        client = anthropic.AnthropicVertex(region="us-east5", project_id=PROJECT, base_url=srv.url + "/v1",
                                           access_token="fake-token", max_retries=0, timeout=10)
        counted = client.messages.count_tokens(model=CLAUDE, messages=[{"role": "user", "content": PROMPT}])
        assert srv.session.run.answered == 0
    assert counted.input_tokens > 0
