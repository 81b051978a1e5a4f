"""A loop that appends two consecutive assistant messages is seen continuing, not 'unknown'.

Shape (OpenCode on a text turn that does not end the run, Codex on `end_turn: false`): turn 0 is
text only and the loop carries on, so request 2 ends with turn 0's echo; turn 1 calls a tool and
request 3 puts turn 1's echo right after turn 0's, then the tool result. The server's reduction
merges consecutive assistant items, so the inference has to recognise request 2's last item grown
by the echo. Each request below is scripted by hand on the API's own wire shape.
"""

from __future__ import annotations

from typing import Any

import httpx

from bench.serve.observe import Conversation, Item, infer
from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, make_sequence, serving

CALL = {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'}


def _observed(srv: Any) -> list[tuple[int, str, tuple[int, ...], tuple[int, ...]]]:
    return [(o.turn, o.action, o.run, o.failed) for o in srv.session.observed()]


CONTINUE_THEN_CALL_THEN_STOP = [(0, "continue", (), ()), (1, "continue", (0,), ()), (2, "stop", (), ())]


def test_chat_two_consecutive_assistant_messages_are_an_echo_then_a_continue_with_the_call() -> None:
    seq = make_sequence([{"finish": "unknown", "finish_raw": None, "content": "I will read a.py."},
                         {"finish": "tool_calls", "content": None, "tool_calls": [CALL]},
                         {"finish": "stop", "content": "done"}], "openai-chat")
    user = {"role": "user", "content": "go"}
    text = {"role": "assistant", "content": "I will read a.py."}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": CALL["arguments"]}}]}
    result = {"role": "tool", "tool_call_id": "call_1", "content": "STUB-OK print('a')"}
    with serving(seq, ok_marker="STUB-OK") as srv:
        for msgs in ([user], [user, text], [user, text, call, result]):
            httpx.post(srv.base_url + "/chat/completions",
                       json={"model": "m", "messages": msgs, "tools": CHAT_TOOLS}).raise_for_status()
        assert _observed(srv) == CONTINUE_THEN_CALL_THEN_STOP


def test_anthropic_echo_merged_by_the_client_into_the_previous_assistant_message_is_a_continue() -> None:
    # the AI SDK's converter merges the two assistant turns itself: one message, text then tool_use
    seq = make_sequence([{"finish": "stop", "finish_raw": "end_turn", "content": "I will read a.py."},
                         {"finish": "tool_calls", "finish_raw": "tool_use", "content": None, "tool_calls": [CALL]},
                         {"finish": "stop", "finish_raw": "end_turn", "content": "done"}], "anthropic")
    user = {"role": "user", "content": "go"}
    text_block = {"type": "text", "text": "I will read a.py."}
    tool_use = {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.py"}}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "STUB-OK a"}]}
    requests = ([user], [user, {"role": "assistant", "content": [text_block]}],
                [user, {"role": "assistant", "content": [text_block, tool_use]}, result])
    with serving(seq, ok_marker="STUB-OK") as srv:
        for msgs in requests:
            httpx.post(srv.url + "/v1/messages", json={"model": "m", "max_tokens": 50, "tools": CLAUDE_TOOLS,
                                                       "messages": msgs}).raise_for_status()
        assert _observed(srv) == CONTINUE_THEN_CALL_THEN_STOP


def test_anthropic_two_separate_assistant_messages_are_a_continue() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "end_turn", "content": "I will read a.py."},
                         {"finish": "tool_calls", "finish_raw": "tool_use", "content": None, "tool_calls": [CALL]},
                         {"finish": "stop", "finish_raw": "end_turn", "content": "done"}], "anthropic")
    user = {"role": "user", "content": "go"}
    text = {"role": "assistant", "content": "I will read a.py."}
    call = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.py"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "STUB-OK a"}]}
    with serving(seq, ok_marker="STUB-OK") as srv:
        for msgs in ([user], [user, text], [user, text, call, result]):
            httpx.post(srv.url + "/v1/messages", json={"model": "m", "max_tokens": 50, "tools": CLAUDE_TOOLS,
                                                       "messages": msgs}).raise_for_status()
        assert _observed(srv) == CONTINUE_THEN_CALL_THEN_STOP


def test_responses_message_then_function_call_items_are_a_continue_with_the_call() -> None:
    # Codex on end_turn false: turn 0's message item, then turn 1's function_call item, consecutive
    seq = make_sequence([{"finish": "stop", "finish_raw": "completed", "content": "I will read a.py.",
                          "end_turn": False},
                         {"finish": "stop", "finish_raw": "completed", "content": None, "tool_calls": [CALL]},
                         {"finish": "stop", "finish_raw": "completed", "content": "done"}], "openai-responses")
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    message = {"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "I will read a.py."}]}
    call = {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": CALL["arguments"]}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "STUB-OK a"}
    with serving(seq, ok_marker="STUB-OK") as srv:
        for items in ([user], [user, message], [user, message, call, output]):
            httpx.post(srv.base_url + "/responses", json={"model": "m", "input": items, "tools": RESPONSES_TOOLS,
                                                          "instructions": "be brief"}).raise_for_status()
        assert _observed(srv) == CONTINUE_THEN_CALL_THEN_STOP


def test_two_text_turns_in_a_row_are_a_continue_without_calls() -> None:
    turn = make_sequence([{"finish": "stop", "content": "and more"}]).turns[0]
    before = Conversation("sys", (Item("user", "go"), Item("assistant", "first part")))
    after = Conversation("sys", (Item("user", "go"), Item("assistant", "first partand more")))
    got = infer(before, turn, "id", after)
    assert (got.action, got.run, got.failed) == ("continue", (), ())
    assert "merged" in got.detail


def test_the_same_request_after_an_assistant_message_is_still_a_resend() -> None:
    turn = make_sequence([{"finish": "length", "content": None}]).turns[0]
    items = (Item("user", "go"), Item("assistant", "first part"))
    assert infer(Conversation("sys", items), turn, "id", Conversation("sys", items)).action == "resend"


def test_a_changed_earlier_item_before_the_assistant_message_is_still_unknown() -> None:
    turn = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [CALL]}]).turns[0]
    before = Conversation("sys", (Item("user", "go"), Item("assistant", "first")))
    after = Conversation("sys", (Item("user", "summary"), Item("assistant", "first", calls=("call_1",)),
                                 Item("tool", "ok", call_id="call_1")))
    got = infer(before, turn, "id", after)
    assert got.action == "unknown"
    assert "history differs at item 0" in got.detail
