"""A refusal and a truncation hidden behind `stop`, served to the official clients as a provider sends them."""

from __future__ import annotations

from typing import Any

import pytest

from bench.catalogue.load import parse_sequence
from bench.engine.model import Sequence
from tests.serve.serving import make_sequence, serving
from tests.serve.test_official_clients import USER, claude, oai

REFUSAL = "I'm sorry, but I can't help with that."
REFUSAL_TURN: dict[str, Any] = {"finish": "stop", "content": None, "refusal": REFUSAL}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_refusal_arrives_as_message_refusal_with_finish_stop(stream: bool) -> None:
    with serving(make_sequence([REFUSAL_TURN])) as srv:
        client = oai(srv.base_url)
        if stream:
            with client.chat.completions.stream(model="m", messages=USER) as s:  # type: ignore[arg-type]
                completion = s.get_final_completion()
        else:
            completion = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    choice = completion.choices[0]
    assert (choice.finish_reason, choice.message.content, choice.message.refusal) == ("stop", None, REFUSAL)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_refusal_is_the_messages_only_part(stream: bool) -> None:
    turn = {"finish": "stop", "finish_raw": "completed", "content": None, "refusal": REFUSAL}
    with serving(make_sequence([turn], "openai-responses")) as srv:
        client = oai(srv.base_url)
        if stream:
            with client.responses.stream(model="m", input="hi") as s:
                response = s.get_final_response()
        else:
            response = client.responses.create(model="m", input="hi")
    parts = [p for item in response.output if item.type == "message" for p in item.content]
    assert [(p.type, getattr(p, "refusal", None)) for p in parts] == [("refusal", REFUSAL)]
    assert response.status == "completed"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_anthropic_refusal_is_stop_reason_refusal_whatever_the_chat_finish(stream: bool) -> None:
    with serving(make_sequence([REFUSAL_TURN])) as srv:
        client = claude(srv.url)
        args: dict[str, Any] = {"model": "m", "max_tokens": 100, "messages": USER}
        if stream:
            with client.messages.stream(**args) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**args)
    assert message.stop_reason == "refusal"
    assert [getattr(b, "text", None) for b in message.content] == [REFUSAL]


def hidden_cut(max_tokens: int | None, output_tokens: int = 1024) -> Sequence:
    data: dict[str, Any] = {"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "tests",
                            "turns": [{"finish": "stop", "content": "cut off in the mid",
                                       "usage": {"input_tokens": 50, "output_tokens": output_tokens}}]}
    if max_tokens is not None:
        data["max_tokens"] = max_tokens
    return parse_sequence(data, "hidden-cut")


def test_a_recorded_cut_at_the_limit_is_served_at_the_clients_own_limit() -> None:
    # the recording hit its request's max_tokens (1024); a client asking with 300 must see 300, so the
    # truncation stays visible as output_tokens == max_tokens
    with serving(hidden_cut(1024)) as srv:
        completion = oai(srv.base_url).chat.completions.create(model="m", messages=USER,  # type: ignore[arg-type]
                                                               max_tokens=300)
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens == 300


def test_usage_is_served_as_recorded_without_a_recorded_limit_or_a_requested_one_or_below_the_limit() -> None:
    with serving(hidden_cut(1024, output_tokens=500)) as srv:
        completion = oai(srv.base_url).chat.completions.create(model="m", messages=USER,  # type: ignore[arg-type]
                                                               max_tokens=300)
    assert completion.usage is not None and completion.usage.completion_tokens == 500
    with serving(hidden_cut(None)) as srv:
        completion = oai(srv.base_url).chat.completions.create(model="m", messages=USER,  # type: ignore[arg-type]
                                                               max_tokens=300)
    assert completion.usage is not None and completion.usage.completion_tokens == 1024
    with serving(hidden_cut(1024)) as srv:
        completion = oai(srv.base_url).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert completion.usage is not None and completion.usage.completion_tokens == 1024
