"""Tool results sent as user text, and user messages merged by the client, are read for what they are.

Shape (smolagents' ToolCallingAgent, memory.py ActionStep.to_messages with models.py
tool_role_conversions): the calls go back as assistant text ("Calling tools: [...]", no
`tool_calls` field) and the results as one user message ("Observation:" then each result); an
error in a step is a user message too, which the client merges into the user message before it
(get_clean_message_list joins consecutive same-role messages with a newline). Each request below is
scripted by hand on the Chat wire, as the client sends it.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.serve.serving import CHAT_TOOLS, make_sequence, serving

MARK = "STUB-OK"
READ = {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'}
EDIT = {"id": "call_2", "name": "edit_file", "arguments": '{"path": "a.py"}'}
SYSTEM = {"role": "system", "content": [{"type": "text", "text": "You are an agent."}]}
TASK = {"role": "user", "content": [{"type": "text", "text": "New task:\ngo"}]}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _post(srv: Any, messages: list[dict[str, Any]]) -> None:
    httpx.post(srv.base_url + "/chat/completions",
               json={"model": "m", "messages": messages, "tool_choice": "required",
                     "tools": CHAT_TOOLS}).raise_for_status()


def _observed(srv: Any) -> list[tuple[int, str, tuple[int, ...], tuple[int, ...]]]:
    return [(o.turn, o.action, o.run, o.failed) for o in srv.session.observed()]


def test_a_user_message_carrying_stub_results_is_a_continue_with_those_calls_not_a_reminder() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [READ, EDIT]},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    calling = _text("assistant", "Calling tools:\n[{'id': 'call_1', ...}, {'id': 'call_2', ...}]")
    # results in the order the client sorts them, not the turn's: both calls are still answered
    observation = _text("user", f"Observation:\n{MARK} edit_file\n{MARK} read_file")
    with serving(seq, ok_marker=MARK) as srv:
        _post(srv, [SYSTEM, TASK])
        _post(srv, [SYSTEM, TASK, calling, observation])
        assert _observed(srv) == [(0, "continue", (0, 1), ()), (1, "stop", (), ())]


def test_a_user_message_without_stub_results_stays_a_reminder() -> None:
    seq = make_sequence([{"finish": "stop", "content": "I am done."},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    error = _text("user", "Error:\nError while parsing tool call from model output\nNow let's retry")
    with serving(seq, ok_marker=MARK) as srv:
        _post(srv, [SYSTEM, TASK])
        _post(srv, [SYSTEM, TASK, _text("assistant", "I am done."), error])
        observed = srv.session.observed()
        assert [(o.action, o.run) for o in observed] == [("remind", ()), ("stop", ())]
        assert observed[0].message is not None and observed[0].message.startswith("Error:")


def test_a_user_message_merged_into_the_previous_user_message_is_a_reminder_not_unknown() -> None:
    # turn 1 is empty (no text, no call): nothing to echo, and the client's error message joins the
    # observation message before it
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [READ]},
                         {"finish": "stop", "content": None},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    calling = _text("assistant", "Calling tools:\n[{'id': 'call_1', ...}]")
    observation = f"Observation:\n{MARK} read_file"
    error = "Error:\nMessage contains no content and no tool calls\nNow let's retry"
    with serving(seq, ok_marker=MARK) as srv:
        _post(srv, [SYSTEM, TASK])
        _post(srv, [SYSTEM, TASK, calling, _text("user", observation)])
        _post(srv, [SYSTEM, TASK, calling, _text("user", observation + "\n" + error)])
        observed = srv.session.observed()
        assert [(o.turn, o.action, o.run) for o in observed] == [(0, "continue", (0,)), (1, "remind", ()),
                                                                 (2, "stop", ())]
        assert observed[1].message == error


def test_without_an_ok_marker_user_text_is_never_read_as_results() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [READ]},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    with serving(seq) as srv:
        _post(srv, [SYSTEM, TASK])
        _post(srv, [SYSTEM, TASK, _text("assistant", "Calling tools: ..."),
                    _text("user", f"Observation:\n{MARK} read_file")])
        assert _observed(srv)[0] == (0, "remind", (), ())
