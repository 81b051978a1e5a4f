"""The server follows a reactive sequence (``after``) from the action it infers, and records what
each follow-up request changes (max_tokens, model, tool_choice, a compacted history)."""

from __future__ import annotations

from typing import Any

import httpx

from bench.engine.model import RequestChanges
from bench.serve.observe import Conversation, Item, infer, request_changes, tool_choice
from tests.helpers import answer
from tests.serve.serving import make_sequence, serving

DROPPED = {"finish": "tool_calls", "content": None, "after": {"resend": 1, "remind": 2}}
SCRIPT = [DROPPED, dict(DROPPED), {"finish": "stop", "content": "recovered after the reminder"}]


def post(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(f"{url}/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def content(reply: dict[str, Any]) -> Any:
    return reply["choices"][0]["message"]["content"]


def test_a_resend_gets_the_turn_after_names_for_resend_and_a_reminder_the_one_for_remind() -> None:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    with serving(make_sequence(SCRIPT)) as srv, httpx.Client() as client:
        post(client, srv.base_url, {"model": "m", "messages": msgs})          # turn 0: dropped calls
        post(client, srv.base_url, {"model": "m", "messages": msgs})          # resend -> turn 1
        post(client, srv.base_url, {"model": "m", "messages": msgs})          # resend again -> turn 1
        msgs = [*msgs, {"role": "user", "content": "You said tool_calls but sent none."}]
        last = post(client, srv.base_url, {"model": "m", "messages": msgs})   # remind -> turn 2
        observed = srv.session.observed()
    assert content(last) == "recovered after the reminder"
    assert [(o.turn, o.action) for o in observed] == [(0, "resend"), (1, "resend"), (1, "remind"), (2, "stop")]


def test_an_open_loop_sequence_is_served_in_order_whatever_the_client_does() -> None:
    script = [{"finish": "tool_calls", "content": None}, {"finish": "tool_calls", "content": None},
              {"finish": "stop", "content": "third"}]
    msgs = [{"role": "user", "content": "go"}]
    with serving(make_sequence(script)) as srv, httpx.Client() as client:
        for _ in range(2):
            post(client, srv.base_url, {"model": "m", "messages": msgs})
        last = post(client, srv.base_url, {"model": "m", "messages": msgs})
        assert [r.turn for r in srv.session.records()] == [0, 1, 2]
    assert content(last) == "third"


def test_the_server_records_a_raised_max_tokens_a_fallback_model_and_a_forced_tool_choice() -> None:
    script = [{"finish": "length", "content": "cut"}, {"finish": "length", "content": "cut"},
              {"finish": "stop", "content": "done"}]
    msgs = [{"role": "user", "content": "go"}]
    with serving(make_sequence(script)) as srv, httpx.Client() as client:
        post(client, srv.base_url, {"model": "m", "messages": msgs, "max_tokens": 4096})
        post(client, srv.base_url, {"model": "m", "messages": msgs, "max_tokens": 8192})
        post(client, srv.base_url, {"model": "backup", "messages": msgs, "max_tokens": 8192,
                                    "tool_choice": "required"})
        observed = srv.session.observed()
    assert [o.changes for o in observed] == [RequestChanges(max_tokens=8192),
                                             RequestChanges(model="backup", tool_choice="required"), None]
    assert observed[0].as_json()["changes"] == {"max_tokens": 8192}


def test_a_history_rewritten_into_fewer_items_is_a_compaction() -> None:
    before = Conversation("sys", (Item("user", "go"), Item("assistant", calls=("c1",)), Item("tool", "r", "c1"),
                                  Item("assistant", "long"), Item("user", "summarise")))
    remind = Conversation("sys", (Item("user", "summary of the work"), Item("user", "Continue if you have next steps")))
    got = infer(before, answer("the summary"), "", remind)
    assert (got.action, got.compact, got.message) == ("remind", True, "Continue if you have next steps")
    resend = Conversation("sys", (Item("user", "summary of the work"), Item("user", "summarise")))
    assert (infer(before, answer(), "", resend).action, infer(before, answer(), "", resend).compact) == ("resend", True)
    assert request_changes("openai-chat", {}, {}, compact=True) == RequestChanges(compact=True)
    other = Conversation("sys", (Item("user", "another"), Item("user", "conversation"),
                                 Item("assistant", "x"), Item("user", "y"), Item("user", "z"), Item("user", "w")))
    assert infer(before, answer(), "", other).action == "unknown"


def test_tool_choice_is_read_in_each_wire_s_shape() -> None:
    assert tool_choice({}) == "auto"
    assert tool_choice({"tool_choice": "required"}) == "required"
    assert tool_choice({"tool_choice": {"type": "any"}}) == "required"  # Anthropic
    assert tool_choice({"tool_choice": {"type": "tool", "name": "read_file"}}) == "read_file"
    assert tool_choice({"tool_choice": {"type": "function", "function": {"name": "grep"}}}) == "grep"
    assert tool_choice({"tool_choice": {"type": "function", "name": "grep"}}) == "grep"  # Responses
    assert request_changes("anthropic", {"max_tokens": 100}, {"max_tokens": 100}) is None
    assert request_changes("openai-responses", {}, {"max_output_tokens": 9}) == RequestChanges(max_tokens=9)
