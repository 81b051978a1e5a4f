"""OpenAI Agents SDK Runner.run with defaults (predicates/openai_agents.py) against the pinned release:
PyPI openai-agents==0.24.0 (agents/run.py, run_internal/turn_resolution.py, models/*)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def oa() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "openai_agents.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def fresh(name: str, k: int) -> Turn:
    """A tool turn whose call has its own id (the SDK skips an id it already answered)."""
    return Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call(name, k),))


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def test_tool_calls_finish_without_calls_ends_with_empty_final_output(oa: Predicate) -> None:
    # non-streamed get_response has no tool_calls check; the stream handler's check
    # (chatcmpl_stream_handler.py L436-446) needs buffer_streamed_tool_calls=True
    cell = run(oa, Turn(finish="tool_calls", finish_raw="tool_calls"))
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "final_output", True)


def test_length_raises_only_when_nothing_came_back(oa: Predicate) -> None:
    # openai_chatcompletions.py L328-343: no content, no refusal, no tool calls
    empty = run(oa, Turn(finish="length", finish_raw="length", reasoning="thinking..."))
    text = run(oa, Turn(finish="length", finish_raw="length", content="The README says"))
    assert (empty.reason, empty.ok) == ("ModelBehaviorError", False)
    assert (text.reason, text.ok) == ("final_output", True)


def test_empty_content_filter_becomes_a_refusal_error(oa: Predicate) -> None:
    # openai_chatcompletions.py L315-326 synthesizes a refusal; turn_resolution.py L1186-1200 raises it
    cell = run(oa, Turn(finish="content_filter", finish_raw="content_filter", content=""))
    assert (cell.reason, cell.ok) == ("ModelRefusalError", False)


def test_incomplete_response_raises_whatever_its_output(oa: Predicate) -> None:
    # openai_responses.py L887-890: status failed/incomplete -> ModelBehaviorError
    cut = Turn(finish="length", finish_raw="incomplete/max_output_tokens", tool_calls=(call("apply_patch"),))
    cell = run(oa, cut, Turn(finish="stop", finish_raw="completed", content="ok"), dialect="openai-responses")
    assert (cell.n_steps, cell.reason, cell.tools_run) == (1, "ModelBehaviorError", ())


def test_tenth_tool_turn_raises_max_turns_after_its_tools_ran(oa: Predicate) -> None:
    # run_config.py L45 DEFAULT_MAX_TURNS = 10; run.py L1597-1622 raises before the 11th model call
    cell = run(oa, *(fresh("bash", k) for k in range(12)))
    assert (cell.n_steps, len(cell.tools_run), cell.reason, cell.ok) == (10, 10, "MaxTurnsExceeded", False)


def test_a_repeated_call_id_is_skipped_and_its_message_is_the_final_output(oa: Predicate) -> None:
    # tool_planning.py L444-452: an id that already has an output is not run again;
    # turn_resolution.py L1182-1186, L1300-1312: nothing to run and a message -> final output
    again = replace(tools("bash"), content="Let me run it.")
    cell = run(oa, again, again, answer())
    assert (cell.n_steps, cell.tools_run, cell.reason, cell.ok) == (2, ("bash",), "final_output", True)


def test_a_repeated_call_id_without_a_message_asks_again_until_max_turns(oa: Predicate) -> None:
    # turn_resolution.py L1318-1326: tool activity without a message -> NextStepRunAgain
    cell = run(oa, tools("bash"), then="repeat")
    assert [s.decision.action for s in cell.steps] == ["continue"] + ["resend"] * 8 + ["stop"]
    assert (cell.tools_run, cell.reason) == (("bash",), "MaxTurnsExceeded")


def test_a_call_id_reused_for_another_call_raises(oa: Predicate) -> None:
    # tool_planning.py L445-449
    other = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("bash", 0, '{"command": "ls"}'),))
    cell = run(oa, tools("bash"), other, answer())
    assert (cell.n_steps, cell.reason, cell.ok) == (2, "ModelBehaviorError", False)


def test_client_retries_do_not_count_as_turns(oa: Predicate) -> None:
    # the openai client's retries happen inside one get_response call (model_retry.py L574-686)
    limited = Turn(finish="error", error=TurnError("rate_limit", status=429, code="rate_limit_error"))
    turns = [t for k in range(10) for t in (limited, fresh("bash", k))]
    cell = run(oa, *turns, answer())
    assert (cell.resends, len(cell.tools_run), cell.reason) == (10, 10, "MaxTurnsExceeded")


def test_non_object_arguments_are_answered_with_an_error_and_empty_ones_run(oa: Predicate) -> None:
    # tool.py L1963-1984: '' -> {}; bad JSON or a non-object -> ModelBehaviorError -> default
    # failure_error_function result (L1997-2003)
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(call("a", 0, ""), call("b", 1, '{"x": '), call("c", 2, "[1]")))
    cell = run(oa, turn, answer())
    first = cell.steps[0].decision
    assert (first.run, first.failed) == ((0,), (1, 2))


def test_no_runner_retry_by_default_so_a_persistent_500_ends_after_three_requests(oa: Predicate) -> None:
    cell = run(oa, Turn(finish="error", error=TurnError("server_error", status=500)), then="repeat")
    assert (cell.n_steps, cell.reason, cell.ok) == (3, "APIError", False)


def test_a_call_with_an_empty_id_raises_before_any_tool_runs(oa: Predicate) -> None:
    # tool_planning.py L400-410: a tool invocation needs a non-empty call id
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(call("a", 0), replace(call("b", 1), id="")))
    cell = run(oa, turn, answer())
    assert (cell.n_steps, cell.tools_run, cell.reason, cell.ok) == (1, (), "ModelBehaviorError", False)


def test_a_blank_tool_name_raises_before_any_call_of_the_turn_runs(oa: Predicate) -> None:
    # turn_resolution.py L3804-3848: no function tool named "" -> ModelBehaviorError with the
    # default tool_not_found_behavior 'raise_error' (run_config.py L498)
    cell = run(oa, tools("read_file", ""), answer())
    last = cell.steps[-1].decision
    assert (cell.n_steps, cell.reason, cell.ok, last.rule) == (1, "ModelBehaviorError", False, "tool-not-found")
    assert cell.tools_run == ()


def test_a_refusal_with_finish_stop_raises_model_refusal_error_after_the_tools_of_its_turn(oa: Predicate) -> None:
    # turn_resolution.py L1176-1188: with nothing to run, a refusal in the last message raises,
    # whatever the finish says; calls beside it run first (has_tools_or_approvals_to_run)
    refused = Turn(finish="stop", finish_raw="stop", refusal="I can't help with that.")
    cell = run(oa, fresh("read_file", 1), refused)
    assert (cell.n_steps, cell.reason, cell.ok, cell.steps[-1].decision.rule) == (2, "ModelRefusalError", False,
                                                                                 "refusal")
    with_call = replace(refused, finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("grep", 2),))
    assert run(oa, with_call, answer()).steps[0].decision.action == "continue"
    responses = run(oa, replace(refused, finish_raw="completed"), dialect="openai-responses")
    assert (responses.reason, responses.ok) == ("ModelRefusalError", False)
