"""Mistral: the official mistralai client (``Mistral(server_url=...)``, its ``chat.complete`` and
``chat.stream``) runs chat-tool-rounds to its answer on ``/v1/chat/completions``, the tool calls parsed by
the client itself, each round sent back as Mistral's function-calling guide sends it (the assistant
message with its calls, then one ``tool`` message per call). Streamed, it gets each call whole in one
delta, as Mistral streams it (bench.serve.clients), a call cut off mid-arguments still cut off; any other
client gets OpenAI's framing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mistralai.client import Mistral

from tests.serve.serving import make_sequence, serving
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


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_mistral_client_runs_the_rounds_to_the_answer(stream: bool) -> None:
    with serving(ROUNDS) as srv:
        client = Mistral(api_key="k", server_url=srv.url, timeout_ms=10_000)
        rounds, answer, models = chat_rounds(client, stream)
        reached_the_end(srv, "/v1/chat/completions")
        sent = srv.session.records()[0].raw_headers
    assert (rounds, answer) == (calls_served(), ANSWER)
    assert set(models) == {MODEL}
    assert (b"authorization", b"Bearer k") in list(sent)
    assert dict(sent)[b"user-agent"].startswith(MISTRAL_AGENT.split("/")[0].encode() + b"/")


MISTRAL_AGENT = "mistral-client-python/3.7.0"
"""The user agent the mistralai client sends with every request (its custom_user_agent hook)."""
OPENAI_AGENT = "OpenAI/Python 3.60.0"
CUT = '{"path": "src/pa'
"""A call's arguments as far as they got before the connection broke."""


def call_deltas(frames: bytes) -> list[dict[str, Any]]:
    """The tool-call entries of a Chat stream's chunks, in order."""
    out: list[dict[str, Any]] = []
    for line in frames.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line.removeprefix("data: ")).get("choices", []):
                out += choice["delta"].get("tool_calls") or []
    return out


def streamed(srv: Any, agent: str) -> bytes:
    """The bytes of a streamed answer to a client sending user agent `agent`, up to where the connection ends."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "tools": TOOLS, "stream": True}
    got: list[bytes] = []
    try:
        with httpx.stream("POST", srv.url + "/v1/chat/completions", json=body, headers={"user-agent": agent},
                          timeout=10) as response:
            got.extend(response.iter_raw())
    except httpx.RemoteProtocolError:  # the connection cut: what arrived before it
        pass
    return b"".join(got)


def test_mistral_client_gets_each_streamed_call_whole_in_one_delta() -> None:
    with serving(ROUNDS) as srv:
        deltas = call_deltas(streamed(srv, MISTRAL_AGENT))
    call = ROUNDS.turns[0].tool_calls[0]
    assert deltas == [{"index": 0, "id": call.id, "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments}}]


OTHER_AGENTS = [OPENAI_AGENT, "python-httpx/0.28.1", "speakeasy-sdk/python 3.7.0 2.935.1 1.0.0 mistralai"]
"""OpenAI's client, a bare HTTP client, and the user agent the Mistral SDK's hook replaces."""


@pytest.mark.parametrize("agent", OTHER_AGENTS)
def test_any_other_client_gets_the_name_then_the_arguments_in_pieces(agent: str) -> None:
    with serving(ROUNDS) as srv:
        deltas = call_deltas(streamed(srv, agent))
    call = ROUNDS.turns[0].tool_calls[0]
    head, *rest = deltas
    assert head == {"index": 0, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
    assert rest and all(set(d) == {"index", "function"} and set(d["function"]) == {"arguments"} for d in rest)
    assert "".join(d["function"]["arguments"] for d in rest) == call.arguments


def test_an_openai_client_stream_is_the_same_bytes_as_a_client_that_names_no_gateway() -> None:
    with serving(ROUNDS) as srv:
        openai_bytes = streamed(srv, OPENAI_AGENT)
        srv.session.start(ROUNDS)
        plain = streamed(srv, "")
        srv.session.start(ROUNDS)
        mistral = streamed(srv, MISTRAL_AGENT)
    assert openai_bytes.replace(b"stopbench-1-", b"stopbench-N-") == plain.replace(b"stopbench-2-", b"stopbench-N-")
    assert mistral.replace(b"stopbench-3-", b"stopbench-N-") != plain.replace(b"stopbench-2-", b"stopbench-N-")


def test_a_call_cut_off_mid_arguments_reaches_the_mistral_client_cut_off() -> None:
    cut = make_sequence([{"finish": "error", "content": None,
                          "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": CUT}],
                          "error": {"kind": "connection_reset", "message": "the connection broke"}}])
    with serving(cut) as srv:
        got = streamed(srv, MISTRAL_AGENT)
    assert call_deltas(got) == [{"index": 0, "id": "call_1", "type": "function",
                                 "function": {"name": "read_file", "arguments": CUT}}]
    assert b"[DONE]" not in got and b'"finish_reason":"tool_calls"' not in got
