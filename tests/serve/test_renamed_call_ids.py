"""A client that renames call ids consistently (agno replaces every call id by its own before sending
the history back): its results are matched to the served calls by position, name and arguments."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, make_sequence, serving

ROUND_1: dict[str, Any] = {"finish": "tool_calls", "tool_calls": [
    {"id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'},
    {"id": "call_b", "name": "read_file", "arguments": '{"path": "b.py"}'}]}
ROUND_2: dict[str, Any] = {"finish": "tool_calls", "tool_calls": [
    {"id": "call_c", "name": "grep", "arguments": '{"pattern": "x"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}


def chat_loop(url: str, *, swap: bool = False, change_args: bool = False) -> None:
    """A Chat loop that gives every call an id of its own (agent-1, agent-2, ...) in the history it
    sends back; `swap` lists the calls in the other order, `change_args` echoes other arguments."""
    own = itertools.count(1)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS},
                           timeout=10)
        if reply.status_code != 200:
            break
        message = reply.json()["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if not calls:
            break
        mine = [{"id": f"agent-{next(own)}", "type": "function",
                 "function": {"name": c["function"]["name"],
                              "arguments": '{"path": "other"}' if change_args else c["function"]["arguments"]}}
                for c in calls]
        if swap:
            mine.reverse()
        msgs.append({"role": "assistant", "content": None, "tool_calls": mine})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": f"ran {c['function']['arguments']}"}
                 for c in mine]



def anthropic_loop(url: str) -> None:
    own = itertools.count(1)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = httpx.post(url + "/v1/messages", timeout=10,
                           json={"model": "m", "max_tokens": 100, "messages": msgs, "tools": CLAUDE_TOOLS})
        if reply.status_code != 200:
            return
        uses = [b for b in reply.json()["content"] if b["type"] == "tool_use"]
        if not uses:
            return
        mine = [{**b, "id": f"toolu_mine_{next(own)}"} for b in uses]
        msgs.append({"role": "assistant", "content": mine})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": f"ran {json.dumps(b['input'])}"}
            for b in mine]})


def test_renamed_ids_on_chat_are_matched_by_position_and_content() -> None:
    seq = make_sequence([ROUND_1, ROUND_2, ANSWER])
    with serving(seq) as srv:
        chat_loop(srv.url)
        steps = srv.session.observed()
    assert [(s.action, s.run, s.failed) for s in steps] == [
        ("continue", (0, 1), ()), ("continue", (0,), ()), ("stop", (), ())]
    assert "renamed" in steps[0].detail and "unknown call id" not in steps[0].detail


def test_renamed_ids_listed_in_another_order_are_matched_by_name_and_arguments() -> None:
    seq = make_sequence([ROUND_1, ROUND_2, ANSWER])
    with serving(seq) as srv:
        chat_loop(srv.url, swap=True)
        steps = srv.session.observed()
    assert (steps[0].action, sorted(steps[0].run)) == ("continue", [0, 1])


def test_an_echo_with_other_arguments_is_not_a_served_call() -> None:
    seq = make_sequence([ROUND_1, ANSWER])
    with serving(seq) as srv:
        chat_loop(srv.url, change_args=True)
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run) == ("continue", ())
    assert "unknown call id 'agent-1'" in steps[0].detail


def test_renamed_ids_on_anthropic_are_matched_too() -> None:
    seq = make_sequence([ROUND_1, ROUND_2, ANSWER], dialect="anthropic")
    with serving(seq) as srv:
        anthropic_loop(srv.url)
        steps = srv.session.observed()
    assert [(s.action, s.run) for s in steps] == [("continue", (0, 1)), ("continue", (0,)), ("stop", ())]
