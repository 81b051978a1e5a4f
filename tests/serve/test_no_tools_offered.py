"""A request that offers no tools is never served tool calls: the turn's text, the wire's normal end,
and the step marked (AutoGen's final reflection request sends the history without tools)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from bench.serve import observed_cell
from bench.wires.withhold import WITHHELD
from tests.serve.serving import make_sequence, serving

CALLS: dict[str, Any] = {"finish": "tool_calls", "content": "let me look", "tool_calls": [
    {"id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}
TOOL = {"name": "read_file", "description": "read", "parameters": {"type": "object", "properties": {}}}
TOOLS: dict[str, Any] = {
    "openai-chat": [{"type": "function", "function": TOOL}],
    "anthropic": [{"name": "read_file", "description": "read", "input_schema": TOOL["parameters"]}],
    "openai-responses": [{"type": "function", **TOOL}],
    "gemini": [{"functionDeclarations": [TOOL]}],
}


def ask(url: str, wire: str, tools: bool) -> tuple[str, list[Any], Any]:
    """(text, calls, finish) of one JSON request on `wire`, with or without the tools."""
    offered = {"tools": TOOLS[wire]} if tools else {}
    if wire == "openai-chat":
        got = httpx.post(url + "/v1/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "go"}], **offered}, timeout=10).json()
        choice = got["choices"][0]
        return choice["message"]["content"], choice["message"].get("tool_calls") or [], choice["finish_reason"]
    if wire == "anthropic":
        got = httpx.post(url + "/v1/messages", json={
            "model": "m", "max_tokens": 99, "messages": [{"role": "user", "content": "go"}], **offered},
            timeout=10).json()
        blocks = got["content"]
        return ("".join(b["text"] for b in blocks if b["type"] == "text"),
                [b for b in blocks if b["type"] == "tool_use"], got["stop_reason"])
    if wire == "openai-responses":
        got = httpx.post(url + "/v1/responses", json={"model": "m", "input": "go", **offered}, timeout=10).json()
        text = "".join(p["text"] for o in got["output"] if o["type"] == "message" for p in o["content"])
        return text, [o for o in got["output"] if o["type"] == "function_call"], got["status"]
    got = httpx.post(url + "/v1beta/models/m:generateContent", json={
        "contents": [{"role": "user", "parts": [{"text": "go"}]}], **offered}, timeout=10).json()
    parts = got["candidates"][0]["content"]["parts"]
    return ("".join(p.get("text", "") for p in parts), [p for p in parts if "functionCall" in p],
            got["candidates"][0]["finishReason"])


NORMAL_END = {"openai-chat": "stop", "anthropic": "end_turn", "openai-responses": "completed", "gemini": "STOP"}


@pytest.mark.parametrize("wire", list(TOOLS))
def test_a_request_without_tools_gets_the_text_and_the_normal_end(wire: str) -> None:
    seq = make_sequence([CALLS], dialect="openai-chat", then="repeat")
    with serving(seq) as srv:
        offered = ask(srv.url, wire, tools=True)
        bare = ask(srv.url, wire, tools=False)
        notes = [r.note for r in srv.session.records()]
    assert len(offered[1]) == 1  # the same turn, tools offered: its call
    assert bare == ("let me look", [], NORMAL_END[wire])
    assert notes == ["", WITHHELD]


def test_a_streamed_request_without_tools_gets_no_call_either() -> None:
    seq = make_sequence([CALLS], dialect="anthropic")
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=10)
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "go"}]) as s:
            done = s.get_final_completion()
    assert done.choices[0].message.tool_calls in (None, [])
    assert (done.choices[0].message.content, done.choices[0].finish_reason) == ("let me look", "stop")


def test_the_reflection_request_is_marked_on_its_step_and_in_the_cell() -> None:
    # an AutoGen-like loop: a tool round, then a reflection request with the history and no tools
    seq = make_sequence([CALLS, CALLS])
    with serving(seq) as srv:
        url = srv.url + "/v1/chat/completions"
        msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        first = httpx.post(url, json={"model": "m", "messages": msgs, "tools": TOOLS["openai-chat"]}).json()
        msgs += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": "call_a", "content": "x = 1"}]
        reflection = httpx.post(url, json={"model": "m", "messages": msgs}).json()
        steps = srv.session.observed()
    assert reflection["choices"][0]["message"].get("tool_calls") is None
    assert [(s.action, s.note) for s in steps] == [("continue", ""), ("stop", WITHHELD)]
    cell = observed_cell(seq, "p", steps, True, "done")
    assert [s.note for s in cell.steps] == ["", WITHHELD]
    assert steps[1].as_json()["note"] == WITHHELD


def test_a_call_with_a_blank_name_names_no_tool_and_is_served_as_recorded() -> None:
    # a sequence whose calls all have blank names gives a program no tools to offer; the call is a
    # glitch of the stream, not a tool the model chose, so a request without tools still gets it
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [
        {"id": "call_1", "name": "", "arguments": "{}"}]}])
    with serving(seq) as srv:
        _, calls, finish = ask(srv.url, "openai-chat", tools=False)
        notes = [r.note for r in srv.session.records()]
    assert ([c["function"]["name"] for c in calls], finish, notes) == ([""], "tool_calls", [""])
