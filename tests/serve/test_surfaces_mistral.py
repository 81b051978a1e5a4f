"""Mistral: the official mistralai client (``Mistral(server_url=...)``, its ``chat.complete`` and
``chat.stream``) runs chat-tool-rounds to its answer on ``/v1/chat/completions``, the tool calls parsed by
the client itself, each round sent back as Mistral's function-calling guide sends it (the assistant
message with its calls, then one ``tool`` message per call)."""

from __future__ import annotations

from typing import Any

import pytest
from mistralai.client import Mistral
from mistralai.client.errors import ResponseValidationError

from tests.serve.serving import serving
from tests.serve.surfaces import ANSWER, NAMES, PROMPT, RESULT, ROUNDS, SCHEMA, calls_served, reached_the_end

MODEL = "mistral-large-latest"
TOOLS: list[Any] = [{"type": "function", "function": {"name": n, "description": n, "parameters": SCHEMA}}
                    for n in NAMES]


def streamed_message(client: Mistral, messages: list[Any]) -> tuple[dict[str, Any], str]:
    """One streamed reply, its deltas joined as a loop joins them: (the assistant message, the model)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    model = ""
    with client.chat.stream(model=MODEL, messages=messages, tools=TOOLS) as events:
        for event in events:
            model = event.data.model
            delta = event.data.choices[0].delta
            if isinstance(delta.content, str):
                text.append(delta.content)
            for c in delta.tool_calls or []:
                call = calls.setdefault(c.index or 0, {"id": c.id, "name": c.function.name, "arguments": ""})
                args = c.function.arguments
                call["arguments"] += args if isinstance(args, str) else ""
    tool_calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                  for _, c in sorted(calls.items())]
    return {"role": "assistant", "content": "".join(text), "tool_calls": tool_calls}, model


def chat_rounds(client: Mistral, stream: bool) -> tuple[list[list[str]], Any, list[str]]:
    """A chat loop: (the calls of each round as the client parsed them, the answer, the models answered)."""
    messages: list[Any] = [{"role": "user", "content": PROMPT}]
    rounds: list[list[str]] = []
    models: list[str] = []
    while True:
        message: Any
        if stream:
            message, model = streamed_message(client, messages)
            calls = [(c["id"], c["function"]["name"]) for c in message["tool_calls"]]
            content: Any = message["content"]
        else:
            done = client.chat.complete(model=MODEL, messages=messages, tools=TOOLS)
            model, reply = done.model, done.choices[0].message
            assert reply is not None
            calls = [(c.id, c.function.name) for c in reply.tool_calls or []]
            content, message = reply.content, reply
        models.append(model)
        if not calls:
            return rounds, content, models
        rounds.append([name for _, name in calls])
        messages.append(message)
        messages += [{"role": "tool", "name": name, "tool_call_id": cid, "content": RESULT} for cid, name in calls]


# The server streams a call as OpenAI does, its name in one chunk and its arguments in the next; mistralai
# 3.7.0 requires a name on every streamed call (FunctionCall.name: str in
# src/mistralai/client/models/functioncall.py, lines 20-23), so it rejects the arguments chunk.
SPLIT_CALL = pytest.mark.xfail(raises=ResponseValidationError, strict=True,
                               reason="a streamed call's arguments chunk carries no function.name")


@pytest.mark.parametrize("stream", [False, pytest.param(True, marks=SPLIT_CALL)], ids=["json", "stream"])
def test_mistral_client_runs_the_rounds_to_the_answer(stream: bool) -> None:
    with serving(ROUNDS) as srv:
        client = Mistral(api_key="k", server_url=srv.url, timeout_ms=10_000)
        rounds, answer, models = chat_rounds(client, stream)
        reached_the_end(srv, "/v1/chat/completions")
        sent = srv.session.records()[0].raw_headers
    assert (rounds, answer) == (calls_served(), ANSWER)
    assert set(models) == {MODEL}
    assert (b"authorization", b"Bearer k") in list(sent)
