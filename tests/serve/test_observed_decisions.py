"""The server infers continue / resend / remind / stop from what a scripted client sends next."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import anthropic
import httpx
import openai

from bench.engine.model import Sequence
from bench.serve.observe import Conversation, Item, infer, observed_cell
from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, make_sequence, serving

CALLS = [{"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
         {"id": "call_2", "name": "grep", "arguments": '{"pattern": "x"}'}]


def chat_script() -> Sequence:
    return make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": CALLS},
                          {"finish": "length", "content": None},
                          {"finish": "length", "content": None},
                          {"finish": "stop", "content": "done"}], "openai-chat")


def test_chat_client_continue_resend_remind_stop_are_inferred() -> None:
    seq = chat_script()
    msgs: list[Any] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "go"}]
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        first = client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS, stream=True)
        calls: dict[int, dict[str, str]] = {}
        for chunk in first:
            for d in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
                entry = calls.setdefault(d.index, {"id": "", "arguments": ""})
                entry["id"] = d.id or entry["id"]
                entry["arguments"] += (d.function.arguments or "") if d.function else ""
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": "f", "arguments": c["arguments"]}}
            for c in calls.values()]})
        # call_1 runs, call_2 is answered with an error result
        msgs.append({"role": "tool", "tool_call_id": "call_1", "content": "print('a')"})
        msgs.append({"role": "tool", "tool_call_id": "call_2", "content": "Error: grep is not allowed"})
        # turn 1: length -> resend it unchanged
        client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS)
        client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS)  # turn 2: length -> remind
        msgs.append({"role": "user", "content": "Your reply was cut off; please continue."})
        client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS)  # turn 3: stop -> no more requests
        observed = srv.session.observed()
    assert [(o.step, o.turn, o.action) for o in observed] == [
        (1, 0, "continue"), (2, 1, "resend"), (3, 2, "remind"), (4, 3, "stop")]
    assert (observed[0].run, observed[0].failed) == ((0,), (1,))
    assert observed[2].message == "Your reply was cut off; please continue."
    cell = observed_cell(seq, "observed", observed, ok=True, reason="done")
    assert cell.outcome == "stopped" and cell.ok is True
    assert (cell.tools_run, cell.tools_failed) == (("read_file",), ("grep",))
    assert (cell.resends, cell.reminders) == (1, 1)
    assert all(s.decision.rule == "observed" for s in cell.steps)


def test_anthropic_is_error_flag_marks_a_failed_call_and_extra_text_is_a_remind() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": "looking", "tool_calls": CALLS},
                         {"finish": "stop", "content": "done"}], "anthropic")
    with serving(seq) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        msgs: list[Any] = [{"role": "user", "content": "go"}]
        with client.messages.stream(model="m", max_tokens=50, messages=msgs, tools=CLAUDE_TOOLS) as s:
            reply = s.get_final_message()
        msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "denied", "is_error": True},
            {"type": "text", "text": "Note: one tool was denied."}]})
        client.messages.create(model="m", max_tokens=50, messages=msgs, tools=CLAUDE_TOOLS)
        observed = srv.session.observed()
    assert [(o.action, o.run, o.failed, o.message) for o in observed] == [
        ("remind", (0,), (1,), "Note: one tool was denied."), ("stop", (), (), None)]


def test_responses_client_continue_is_inferred_from_function_call_outputs() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "completed", "content": None, "tool_calls": CALLS[:1]},
                         {"finish": "stop", "finish_raw": "completed", "content": "done"}], "openai-responses")
    with serving(seq, ok_marker="STUB-OK") as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        items: list[Any] = [{"role": "user", "content": "go"}]
        first = client.responses.create(model="m", input=items, tools=RESPONSES_TOOLS, instructions="be brief")
        items += [o.model_dump(exclude_none=True) for o in first.output]
        items.append({"type": "function_call_output", "call_id": "call_1", "output": "STUB-OK a.py"})
        client.responses.create(model="m", input=items, tools=RESPONSES_TOOLS, instructions="be brief")
        observed = srv.session.observed()
    assert [(o.action, o.run, o.failed) for o in observed] == [("continue", (0,), ()), ("stop", (), ())]


def test_ok_marker_decides_failed_when_the_wire_has_no_error_flag() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": CALLS},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    tool_calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                  for c in CALLS]
    base: list[Any] = [{"role": "user", "content": "go"}]
    with serving(seq, ok_marker="STUB-OK") as srv:
        post = lambda msgs: httpx.post(srv.base_url + "/chat/completions",  # noqa: E731
                                       json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS})
        post(base)
        post([*base, {"role": "assistant", "content": None, "tool_calls": tool_calls},
              {"role": "tool", "tool_call_id": "call_1", "content": "STUB-OK contents"},
              {"role": "tool", "tool_call_id": "call_2", "content": "tool execution was aborted"}])
        observed = srv.session.observed()
    assert (observed[0].action, observed[0].run, observed[0].failed) == ("continue", (0,), (1,))


def test_a_request_past_the_end_still_tells_the_last_decision_and_the_cell_is_running() -> None:
    seq = make_sequence([{"finish": "length", "content": None}], "openai-chat", then="end")
    msgs: list[Any] = [{"role": "user", "content": "go"}]
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS)  # type: ignore[arg-type]
        with contextlib.suppress(openai.APIStatusError):
            client.chat.completions.create(model="m", messages=msgs, tools=CHAT_TOOLS)  # type: ignore[arg-type]
        observed = srv.session.observed()
    assert [(o.turn, o.action) for o in observed] == [(0, "resend")]
    assert observed_cell(seq, "observed", observed, ok=None).outcome == "running"


# ---------------------------------------------------------------- the inference on its own


def conv(*items: Item, system: str = "sys") -> Conversation:
    return Conversation(system, items)


def test_rewritten_history_is_unknown_not_guessed() -> None:
    turn = chat_script().turns[0]
    before = conv(Item("user", "go"), Item("assistant", calls=("x",)), Item("tool", "r", call_id="x"))
    after = conv(Item("user", "summary of the conversation so far"))
    got = infer(before, turn, "id", after)
    assert got.action == "unknown"
    assert "history differs at item 0" in got.detail
    assert got.compact  # fewer items: a compaction, whatever else was sent


def test_a_changed_system_prompt_is_a_remind() -> None:
    turn = chat_script().turns[1]
    got = infer(conv(Item("user", "go")), turn, "id", conv(Item("user", "go"), system="sys, and hurry"))
    assert (got.action, got.message) == ("remind", "sys, and hurry")


def test_an_assistant_echo_with_nothing_else_is_a_continue_without_calls() -> None:
    turn = chat_script().turns[1]
    got = infer(conv(Item("user", "go")), turn, "id", conv(Item("user", "go"), Item("assistant", "partial")))
    assert (got.action, got.run, got.failed) == ("continue", (), ())
    assert "echo" in got.detail


def test_unanswered_calls_are_neither_run_nor_failed_and_are_noted() -> None:
    turn = chat_script().turns[0]
    after = conv(Item("user", "go"), Item("assistant", calls=("call_1", "call_2")),
                 Item("tool", "fine", call_id="call_1"))
    got = infer(conv(Item("user", "go")), turn, "id", after)
    assert (got.action, got.run, got.failed) == ("continue", (0,), ())
    assert "no result for call_2" in got.detail


def test_previous_response_id_makes_the_whole_input_the_new_part() -> None:
    turn = chat_script().turns[0]
    after = Conversation("sys", (Item("tool", "ok", call_id="call_2"),), previous_id="resp_1")
    got = infer(conv(Item("user", "go")), turn, "resp_1", after)
    assert (got.action, got.run) == ("continue", (1,))


def test_observed_records_serialise_to_json() -> None:
    seq = make_sequence([{"finish": "stop", "content": "x"}])
    with serving(seq) as srv:
        httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": [{"role": "user",
                                                                                         "content": "q"}]})
        got = httpx.get(srv.url + "/_stopbench/observed").json()
    assert json.loads(json.dumps(got))["steps"] == [
        {"step": 1, "turn": 0, "action": "stop", "rule": "observed", "run": [], "failed": [], "message": None,
         "detail": ""}]
