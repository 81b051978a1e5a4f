"""LangChain v1 create_agent (predicates/langchain.py) against the pinned release: PyPI langchain==1.5.0
(langchain/agents/factory.py), langchain-openai==1.7.4, langchain-anthropic==1.7.10, langchain-core==1.8.3,
langgraph==1.2.24, openai==3.57.0 / anthropic==2.14.0 for the client retries."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def lc() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "langchain.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def test_only_parsed_tool_calls_keep_the_graph_going(lc: Predicate) -> None:
    # factory.py L2017-2019: no tool_calls -> END, whatever the finish reason says
    dropped = run(lc, Turn(finish="tool_calls", finish_raw="tool_calls"), answer())
    assert (dropped.n_steps, dropped.reason, dropped.ok) == (1, "final", True)
    cell = run(lc, tools("read_file"), answer())
    assert (cell.n_steps, cell.tools_run, cell.reason) == (2, ("read_file",), "final")


def test_length_with_a_parsable_call_runs_it(lc: Predicate) -> None:
    # finish_reason is kept in generation_info only (langchain_openai base.py L2125-2136)
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("read_file", 0, '{"path": "a.py"}'),))
    cell = run(lc, cut, answer())
    assert cell.steps[0].decision.action == "continue" and cell.tools_run == ("read_file",)


def test_cut_json_alone_ends_the_run_and_beside_a_good_call_is_answered_as_an_error(lc: Predicate) -> None:
    # InvalidToolCall (core openai_tools.py L62-70) is not a tool_call: alone, the run ends (L2017-2019);
    # beside a parsed call, the model node's repair answers it before the next request (factory.py L679-710)
    bad = call("write_file", 1, '{"path": "a.py", "content": "x')
    alone = run(lc, Turn(finish="length", finish_raw="length", tool_calls=(bad,)), answer())
    assert (alone.n_steps, alone.reason, alone.tools_run) == (1, "final", ())
    both = run(lc, Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("read_file"), bad)), answer())
    assert (both.steps[0].tools_run, both.steps[0].tools_failed) == (("read_file",), ("write_file",))


def test_json_that_is_not_an_object_raises_out_of_the_model_call(lc: Predicate) -> None:
    # `args = function_args or {}` then AIMessage validation: a string is not a dict (a ValidationError)
    turn = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("read_file", 0, '"a.py"'),))
    cell = run(lc, turn, answer())
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "exception", False)


def test_empty_arguments_on_responses_are_invalid_but_on_chat_an_empty_object(lc: Predicate) -> None:
    # Chat: `elif not arguments: function_args = {}` (openai_tools.py L58-60); Responses: json.loads("") fails
    chat = run(lc, Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("run_tests", 0, ""),)), answer())
    resp_turn = Turn(finish="tool_calls", finish_raw="completed", tool_calls=(call("run_tests", 0, ""),))
    resp = run(lc, resp_turn, answer(), dialect="openai-responses")
    assert chat.steps[0].decision.action == "continue"
    assert (resp.n_steps, resp.reason) == (1, "final")


def test_a_blank_tool_name_is_answered_with_the_tool_node_error(lc: Predicate) -> None:
    # tool_node.py L1316-1330: INVALID_TOOL_NAME_ERROR_TEMPLATE, an error ToolMessage
    turn = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(ToolCall(id="c1", name="", arguments="{}"),))
    cell = run(lc, turn, answer())
    assert (cell.steps[0].decision.action, cell.steps[0].tools_failed) == ("continue", ("",))


def test_the_client_retries_twice_then_the_error_leaves_invoke(lc: Predicate) -> None:
    # openai/_constants.py L8 (2 retries) on 429/5xx; nothing in the graph catches the error
    err = Turn(finish="error", error=TurnError(kind="server_error", status=500))
    cell = run(lc, err, then="repeat")
    assert [s.decision.action for s in cell.steps] == ["resend", "resend", "stop"]
    assert (cell.reason, cell.ok) == ("api_error", False)
    bad = run(lc, Turn(finish="error", error=TurnError(kind="invalid_request", status=400)), then="repeat")
    assert (bad.n_steps, bad.reason) == (1, "api_error")


def test_a_failed_response_raises_without_a_retry(lc: Predicate) -> None:
    # base.py L5202-5203: `if response.error: raise ValueError(response.error)`, after the client returned
    failed = Turn(finish="error", finish_raw="failed", error=TurnError(kind="server_error"))
    cell = run(lc, failed, answer(), dialect="openai-responses")
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "exception", False)


def test_the_recursion_limit_is_five_thousand_model_calls(lc: Predicate) -> None:
    # create_agent's recursion_limit 9,999 (factory.py L1900-1902): ceil(9999 / 2) model calls
    assert lc.max_steps == 5000 and lc.cap.reason == "GraphRecursionError" and lc.cap.ok is False
    cell = replay(seq(tools("read_file"), then="repeat"), lc, safety_cap=5200)
    assert (cell.n_steps, cell.reason, cell.ok) == (5000, "GraphRecursionError", False)
