"""Conversations carried by reference are followed: the Anthropic SDK's tool runner (message threads,
its default in anthropic 2.15.0) and Responses previous_response_id; a reference to an id the server
never gave is refused with the provider's error, and the official client falls back."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
from anthropic import beta_tool

from tests.serve.serving import RESPONSES_TOOLS, make_sequence, serving

ROUND: dict[str, Any] = {"finish": "tool_calls", "content": "looking", "tool_calls": [
    {"id": "toolu_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
    {"id": "toolu_2", "name": "read_file", "arguments": '{"path": "b.py"}'}]}
ROUND_2: dict[str, Any] = {"finish": "tool_calls", "content": None, "tool_calls": [
    {"id": "toolu_3", "name": "read_file", "arguments": '{"path": "c.py"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}


@beta_tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file
    """
    return f"contents of {path}"


def test_the_anthropic_tool_runner_thread_is_followed() -> None:
    seq = make_sequence([ROUND, ROUND_2, ANSWER], "anthropic")
    with serving(seq) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=10)
        final = client.beta.messages.tool_runner(model="m", max_tokens=100, tools=[read_file],
                                                 messages=[{"role": "user", "content": "go"}]).until_done()
        records = srv.session.records()
        steps = srv.session.observed()
    threads = [r.body.get("thread") for r in records]
    # the runner does thread by default: a create, then continues that send only the new messages
    assert threads[0] == {"type": "create"}
    assert [t["type"] for t in threads[1:]] == ["continue", "continue"]
    assert threads[1]["previous_message_id"] == records[0].response_id
    assert [len(r.body["messages"]) for r in records] == [1, 1, 1]
    assert "tools" not in records[1].body
    assert [(s.action, s.run, s.failed) for s in steps] == [
        ("continue", (0, 1), ()), ("continue", (0,), ()), ("stop", (), ())]
    assert [r.note for r in records] == ["", "", ""]  # the thread's tools count: no call withheld
    assert final.content[0].text == "done"  # type: ignore[union-attr]


def test_a_thread_the_server_never_started_is_refused_and_the_runner_replays_the_history() -> None:
    seq = make_sequence([ROUND, ANSWER], "anthropic")
    with serving(seq) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=10)
        runner = client.beta.messages.tool_runner(model="m", max_tokens=100, tools=[read_file],
                                                  messages=[{"role": "user", "content": "go"}])
        first = next(iter(runner))
        assert first.stop_reason == "tool_use"
        srv.session.start(seq)  # a new run: the thread of the old one is unknown to it
        runner.until_done()
        run = srv.session.runs[-1]
        records = list(run.records)
        steps = srv.session.observed(run)
    assert [(r.kind, r.status) for r in records] == [("refused", 404), ("model", 200), ("model", 200)]
    assert records[1].body["thread"] == {"type": "create"} and len(records[1].body["messages"]) == 3
    assert [s.action for s in steps] == ["continue", "stop"]


def test_the_refusal_is_the_sdk_thread_not_found_error() -> None:
    seq = make_sequence([ANSWER], "anthropic")
    with serving(seq) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=10)
        try:
            client.beta.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}],
                                        thread={"type": "continue", "previous_message_id": "msg_nobody"})
        except anthropic.NotFoundError as exc:
            error = exc
        assert srv.session.run.answered == 0
    assert type(error).__name__ == "ThreadNotFoundError"


def test_responses_previous_response_id_is_followed() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "completed", "content": None,
                          "tool_calls": ROUND["tool_calls"]}, ANSWER], "openai-responses")
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=10)
        first = client.responses.create(model="m", input="go", tools=RESPONSES_TOOLS)
        client.responses.create(model="m", previous_response_id=first.id, tools=RESPONSES_TOOLS, input=[
            {"type": "function_call_output", "call_id": "toolu_1", "output": "x"},
            {"type": "function_call_output", "call_id": "toolu_2", "output": "Error: no such file"}])
        steps = srv.session.observed()
    assert [(s.action, s.run, s.failed) for s in steps] == [("continue", (0,), (1,)), ("stop", (), ())]


def test_a_previous_response_id_the_server_never_gave_is_refused_with_openais_error() -> None:
    seq = make_sequence([ANSWER], "openai-responses")
    with serving(seq) as srv:
        got = httpx.post(srv.base_url + "/responses", json={"model": "m", "input": "go",
                                                            "previous_response_id": "resp_elsewhere"})
        answered = srv.session.run.answered
    assert got.status_code == 400
    assert got.json()["error"]["code"] == "previous_response_not_found"
    assert answered == 0


def test_a_responses_conversation_is_one_the_server_never_gave() -> None:
    seq = make_sequence([ANSWER], "openai-responses")
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=10)
        try:
            client.responses.create(model="m", input="go", conversation="conv_elsewhere")
        except openai.NotFoundError as exc:
            error = exc
        answered = srv.session.run.answered
    assert error.code == "conversation_not_found" and answered == 0
