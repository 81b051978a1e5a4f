"""Azure OpenAI: the official openai client built as Azure's docs build it (``AzureOpenAI`` on a
deployment, the v1 API through ``OpenAI``) runs chat-tool-rounds to its answer, JSON and streamed,
Chat Completions and Responses; the deployment is the model; Azure's content-filter additions arrive."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from bench.catalogue.load import load_sequence
from tests.serve.serving import serving
from tests.serve.surfaces import ANSWER, NAMES, PROMPT, RESULT, ROOT, ROUNDS, SCHEMA, calls_served, reached_the_end

DEPLOYMENT = "my-gpt-4o"
API_VERSION = "2024-10-21"
CHAT_TOOLS: list[Any] = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in NAMES]
RESPONSES_TOOLS: list[Any] = [{"type": "function", "name": n, "parameters": SCHEMA} for n in NAMES]


def azure(url: str, auth: str) -> openai.AzureOpenAI:
    key: dict[str, Any] = {"api_key": "k"} if auth == "api-key" else {"azure_ad_token": "entra-token"}
    return openai.AzureOpenAI(azure_endpoint=url, api_version=API_VERSION, max_retries=0, timeout=10, **key)


def chat_rounds(client: openai.OpenAI, model: str, stream: bool) -> tuple[list[list[str]], str | None, list[str]]:
    """A chat loop: (the calls of each round as the client parsed them, the answer, the models answered)."""
    messages: list[Any] = [{"role": "user", "content": PROMPT}]
    rounds: list[list[str]] = []
    models: list[str] = []
    while True:
        if stream:
            with client.chat.completions.stream(model=model, messages=messages, tools=CHAT_TOOLS) as s:
                done = s.get_final_completion()
        else:
            done = client.chat.completions.create(model=model, messages=messages, tools=CHAT_TOOLS)
        models.append(done.model)
        message = done.choices[0].message
        if not message.tool_calls:
            return rounds, message.content, models
        rounds.append([c.function.name for c in message.tool_calls if c.type == "function"])
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        messages += [{"role": "tool", "tool_call_id": c.id, "content": RESULT} for c in message.tool_calls]


@pytest.mark.parametrize("auth", ["api-key", "entra"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_azure_openai_client_on_a_deployment_runs_the_rounds_to_the_answer(stream: bool, auth: str) -> None:
    with serving(ROUNDS) as srv:
        rounds, answer, models = chat_rounds(azure(srv.url, auth), DEPLOYMENT, stream)
        reached_the_end(srv, f"/openai/deployments/{DEPLOYMENT}/chat/completions")
        sent = srv.session.records()[0].raw_headers
    assert (rounds, answer) == (calls_served(), ANSWER)
    assert set(models) == {DEPLOYMENT}
    header = (b"api-key", b"k") if auth == "api-key" else (b"authorization", b"Bearer entra-token")
    assert header in list(sent)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_client_on_azure_v1_runs_the_rounds_to_the_answer(stream: bool) -> None:
    with serving(ROUNDS) as srv:
        client = openai.OpenAI(base_url=srv.url + "/openai/v1", api_key="k", max_retries=0, timeout=10)
        rounds, answer, models = chat_rounds(client, DEPLOYMENT, stream)
        reached_the_end(srv, "/openai/v1/chat/completions")
    assert (rounds, answer, set(models)) == (calls_served(), ANSWER, {DEPLOYMENT})


def responses_rounds(client: openai.OpenAI, stream: bool) -> tuple[list[list[str]], str]:
    """A Responses loop over the whole history: (the calls of each round, the answer)."""
    items: list[Any] = [{"role": "user", "content": PROMPT}]
    rounds: list[list[str]] = []
    while True:
        if stream:
            with client.responses.stream(model=DEPLOYMENT, input=items, tools=RESPONSES_TOOLS) as s:
                done = s.get_final_response()
        else:
            done = client.responses.create(model=DEPLOYMENT, input=items, tools=RESPONSES_TOOLS)
        calls = [o for o in done.output if o.type == "function_call"]
        if not calls:
            return rounds, done.output_text
        rounds.append([c.name for c in calls])
        items += [o.model_dump(exclude_none=True) for o in done.output]
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": RESULT} for c in calls]


@pytest.mark.parametrize("client_of", ["azure", "v1"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_on_azure_run_the_rounds_to_the_answer(stream: bool, client_of: str) -> None:
    with serving(ROUNDS) as srv:
        client = azure(srv.url, "api-key") if client_of == "azure" else openai.OpenAI(
            base_url=srv.url + "/openai/v1", api_key="k", max_retries=0, timeout=10)
        rounds, answer = responses_rounds(client, stream)
        reached_the_end(srv, "/openai/responses" if client_of == "azure" else "/openai/v1/responses")
    assert (rounds, answer) == (calls_served(), ANSWER)


def test_a_recorded_content_filter_finish_carries_its_filter_results_on_azure_only() -> None:
    seq = load_sequence(ROOT / "sequences" / "recorded" / "rec-azure-content-filter-hate.yaml")
    ask: dict[str, Any] = {"model": DEPLOYMENT, "messages": [{"role": "user", "content": PROMPT}]}
    with serving(seq) as srv:
        on_azure = httpx.post(f"{srv.url}/openai/deployments/{DEPLOYMENT}/chat/completions",
                              params={"api-version": API_VERSION}, json=ask, timeout=10).json()
        srv.session.start(seq)
        on_openai = httpx.post(srv.base_url + "/chat/completions", json=ask, timeout=10).json()
        srv.session.start(seq)
        streamed = httpx.post(f"{srv.url}/openai/v1/chat/completions", json={**ask, "stream": True}, timeout=10).text
    filters = on_azure["choices"][0]["content_filter_results"]
    assert filters["hate"] == {"filtered": True, "severity": "high"}
    assert "content_filter_results" not in on_openai["choices"][0]
    assert '"content_filter_results":{"hate":{"filtered":true' in streamed


def test_a_recorded_prompt_filter_refusal_is_azures_400_with_its_innererror() -> None:
    seq = load_sequence(ROOT / "sequences" / "recorded" / "rec-azure-prompt-filter-error.yaml")
    with serving(seq) as srv, pytest.raises(openai.BadRequestError) as caught:
        azure(srv.url, "api-key").chat.completions.create(model=DEPLOYMENT,
                                                          messages=[{"role": "user", "content": PROMPT}])
    body = caught.value.body
    assert isinstance(body, dict) and body["code"] == "content_filter" and body["param"] == "prompt"
    assert body["innererror"]["code"] == "ResponsibleAIPolicyViolation"
    assert body["innererror"]["content_filter_result"]["violence"] == {"filtered": True, "severity": "medium"}
