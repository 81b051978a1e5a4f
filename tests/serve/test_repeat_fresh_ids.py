"""A turn served again under ``then: repeat`` carries fresh call ids, as a real provider's every
response does (``Session(fresh_repeat_ids=True)``; off, the ids as written, what the ports see); and
a round whose history cannot be followed counts the calls it ran on the tool endpoint.

Mastra 1.71.0 keeps its history keyed by call id: served the same ``call_1`` on every repeat, it
merged the rounds, so the history stopped growing, the steps were ``unknown`` and their calls
judged dropped although the tool endpoint ran every one."""

from __future__ import annotations

import json
from typing import Any

import httpx

from bench.catalogue.load import parse_sequence
from bench.engine.model import Sequence
from tests.serve.serving import CHAT_TOOLS, serving

USER = [{"role": "user", "content": "go"}]
CALL = {"id": "call_1", "name": "bash", "arguments": '{"command": "ls"}'}


def repeating(tags: list[str] | None = None, dialect: str = "openai-chat") -> Sequence:
    return parse_sequence({"title": "the same call forever", "kind": "constructed", "dialect": dialect,
                           "source": "tests/serve", "then": "repeat", "tags": tags or [],
                           "turns": [{"finish": "tool_calls", "content": None, "tool_calls": [CALL]}]}, "repeat-ids")


def ask(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    got = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": messages, "tools": CHAT_TOOLS},
                     timeout=10)
    assert got.status_code == 200, got.text
    return got.json()["choices"][0]["message"]  # type: ignore[no-any-return]


def run_tool(url: str, call: dict[str, Any]) -> str:
    got = httpx.post(f"{url}/_stopbench/tools/{call['function']['name']}",
                     json=json.loads(call["function"]["arguments"]), timeout=10)
    return str(got.json()["content"])


def test_each_repeat_of_the_last_turn_has_fresh_call_ids_and_every_round_is_followed() -> None:
    with serving(repeating(), fresh_repeat_ids=True) as srv:
        msgs = list(USER)
        ids = []
        for _ in range(3):
            echo = ask(srv.url, msgs)
            ids.append([c["id"] for c in echo["tool_calls"]])
            msgs.append(echo)
            msgs += [{"role": "tool", "tool_call_id": c["id"], "content": run_tool(srv.url, c)}
                     for c in echo["tool_calls"]]
        ask(srv.url, msgs)
        steps = srv.session.observed()
    assert ids == [["call_1"], ["call_1-r1"], ["call_1-r2"]]
    assert [(s.action, s.run, s.known) for s in steps[:3]] == [("continue", (0,), ((0, "executed"),))] * 3


def test_the_official_client_reads_the_fresh_ids_on_a_stream_and_on_anthropic() -> None:
    import anthropic

    with serving(repeating(dialect="anthropic"), fresh_repeat_ids=True) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=10)
        tools: Any = [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}]
        msgs: list[Any] = [{"role": "user", "content": "go"}]
        ids = []
        for _ in range(2):
            with client.messages.stream(model="m", max_tokens=100, messages=msgs, tools=tools) as s:
                got = s.get_final_message()
            uses = [b for b in got.content if b.type == "tool_use"]
            ids.append([b.id for b in uses])
            msgs.append({"role": "assistant", "content": [b.model_dump() for b in uses]})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": "ok"}
                                                     for b in uses]})
        client.messages.create(model="m", max_tokens=100, messages=msgs, tools=tools)
        steps = srv.session.observed()
    assert ids == [["call_1"], ["call_1-r1"]]
    assert [(s.action, s.run) for s in steps[:2]] == [("continue", (0,))] * 2


def served_ids(sequence: Sequence, **options: Any) -> list[list[str]]:
    with serving(sequence, **options) as srv:
        msgs = list(USER)
        ids = []
        for _ in range(2):
            echo = ask(srv.url, msgs)
            ids.append([c["id"] for c in echo["tool_calls"]])
            msgs.append(echo)
            msgs += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in echo["tool_calls"]]
    return ids


def test_a_sequence_about_call_ids_keeps_its_ids_on_every_repeat() -> None:
    assert served_ids(repeating(tags=["tool-call-id"]), fresh_repeat_ids=True) == [["call_1"], ["call_1"]]


def test_by_default_the_ids_are_served_as_written_as_the_ports_replay_sees_them() -> None:
    assert served_ids(repeating()) == [["call_1"], ["call_1"]]


def test_a_round_whose_history_cannot_be_followed_counts_what_ran_on_the_tool_endpoint() -> None:
    """A client that merges its rounds (keyed by a reused id): request 3 has request 2's length."""
    with serving(repeating(tags=["tool-call-id"])) as srv:
        first = ask(srv.url, USER)
        result1 = {"role": "tool", "tool_call_id": "call_1", "content": run_tool(srv.url, first["tool_calls"][0])}
        ask(srv.url, [*USER, first, result1])
        result2 = {"role": "tool", "tool_call_id": "call_1", "content": run_tool(srv.url, first["tool_calls"][0])}
        ask(srv.url, [*USER, first, result2])  # the newest result in place of the first: merged
        steps = srv.session.observed()
    assert steps[1].action == "unknown"
    assert (steps[1].run, steps[1].known) == ((0,), ((0, "executed"),))
    assert "history differs" in steps[1].detail
