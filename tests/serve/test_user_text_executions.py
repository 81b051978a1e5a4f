"""Results sent back as user text are read by their execution tokens when the program ran the
bench's tools.

smolagents 1.26.0's ToolCallingAgent writes the calls it ran as assistant text and each result as a
user message ("Observation:\\nSTOPBENCH-OK read_file #1"): the call ran on the tool endpoint, but the
user message read as a reminder and the call as dropped."""

from __future__ import annotations

from typing import Any

import httpx

from tests.serve.serving import CHAT_TOOLS, make_sequence, serving

CALLS: dict[str, Any] = {"finish": "tool_calls", "content": None, "tool_calls": [
    {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
    {"id": "call_2", "name": "grep", "arguments": '{"pattern": "def"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}
USER = {"role": "user", "content": "go"}
CALLED = {"role": "assistant", "content": "Calling tools:\n[{'id': 'call_1', 'type': 'function', ...}]"}


def ask(url: str, messages: list[dict[str, Any]]) -> None:
    got = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": messages, "tools": CHAT_TOOLS},
                     timeout=10)
    assert got.status_code == 200, got.text


def run_tool(url: str, name: str, args: dict[str, Any]) -> str:
    return str(httpx.post(f"{url}/_stopbench/tools/{name}", json=args, timeout=10).json()["content"])


def test_results_in_user_text_with_execution_tokens_are_the_calls_run() -> None:
    with serving(make_sequence([CALLS, ANSWER])) as srv:
        ask(srv.url, [USER])
        first = run_tool(srv.url, "read_file", {"path": "a.py"})
        second = run_tool(srv.url, "grep", {"pattern": "def"})
        ask(srv.url, [USER, CALLED, {"role": "user", "content": f"Observation:\n{first}\n{second}"}])
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].message) == ("continue", (0, 1), None)
    assert steps[0].known == ((0, "executed"), (1, "executed"))


def test_user_text_without_a_token_is_still_a_reminder() -> None:
    with serving(make_sequence([CALLS, ANSWER])) as srv:
        ask(srv.url, [USER])
        run_tool(srv.url, "read_file", {"path": "a.py"})
        ask(srv.url, [USER, CALLED, {"role": "user", "content": "Please go on."}])
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].message) == ("remind", (), "Please go on.")


SCRIPTED: dict[str, Any] = {"finish": "tool_calls", "content": None, "tool_calls": [
    {"id": "call_1", "name": "check_build", "arguments": '{"build_id": "b1"}', "result": "running: 10% (compiling)"}]}


def test_a_scripted_result_in_user_text_is_its_execution_of_the_round() -> None:
    """A scripted result (`result:`) carries no token: smolagents' "Observation:\\nrunning: 10%
    (compiling)" after check_build ran on the endpoint in that round is the call run (it read as a
    reminder and the call as dropped: chat-polling-stalls, chat-polling-progress)."""
    with serving(make_sequence([SCRIPTED, ANSWER])) as srv:
        ask(srv.url, [USER])
        text = run_tool(srv.url, "check_build", {"build_id": "b1"})
        assert text == "running: 10% (compiling)"
        ask(srv.url, [USER, CALLED, {"role": "user", "content": f"Observation:\n{text}"}])
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].message) == ("continue", (0,), None)
    assert steps[0].known == ((0, "executed"),)


def test_a_scripted_result_of_another_round_does_not_answer_the_call() -> None:
    with serving(make_sequence([SCRIPTED, ANSWER])) as srv:
        ask(srv.url, [USER])
        ask(srv.url, [USER, CALLED, {"role": "user", "content": "Observation:\nrunning: 10% (compiling)"}])
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].failed) == ("remind", (), ())


def test_a_call_the_loop_refused_in_its_own_words_is_failed() -> None:
    """smolagents does not run a call whose arguments it cannot use and tells the model so in a user
    message naming the tool ("Error executing tool 'bash' with arguments ..."): with the bench's
    tools in use and no execution of the call in its round, the call failed (it read as dropped)."""
    with serving(make_sequence([CALLS, CALLS, ANSWER])) as srv:
        ask(srv.url, [USER])
        refused = {"role": "user", "content": "Error:\nError executing tool 'read_file' with arguments {}: ValueError"}
        ask(srv.url, [USER, refused])
        run_tool(srv.url, "read_file", {"path": "a.py"})  # a later round used the bench's tools
        ask(srv.url, [USER, refused, CALLED, {"role": "user", "content": "Observation:\nnothing"}])
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].failed) == ("continue", (), (0,))
    assert steps[0].known == ((0, "executed"),)


def test_words_that_name_no_open_call_stay_a_reminder() -> None:
    with serving(make_sequence([CALLS, CALLS, ANSWER])) as srv:
        ask(srv.url, [USER])
        ask(srv.url, [USER, {"role": "user", "content": "Error: the model output does not contain any JSON blob."}])
        run_tool(srv.url, "read_file", {"path": "a.py"})
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].failed) == ("remind", (), ())
