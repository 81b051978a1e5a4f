"""smolagents ToolCallingAgent (predicates/smolagents.py) against the pinned release: PyPI smolagents==1.26.0
(smolagents/agents.py, models.py, memory.py, tools.py, utils.py), openai==3.57.0 for the client retries."""

from __future__ import annotations

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, RequestChanges, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def smol() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "smolagents.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end") -> Cell:
    return replay(seq(*turns, then=then), pred)  # type: ignore[arg-type]


def calls(*made: ToolCall) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=made)


def actions(cell: Cell) -> list[tuple[str, str]]:
    return [(s.decision.action, s.decision.rule) for s in cell.steps]


def test_text_is_never_the_answer_it_is_a_parsing_error_sent_back(smol: Predicate) -> None:
    # agents.py L1327-1331: no tool_calls -> parse_tool_calls; no JSON blob -> AgentParsingError, the
    # step's error (L597-600): the loop asks again
    cell = run(smol, tools("read_file"), answer("All done."), Turn(finish="stop", finish_raw="stop", content=None))
    assert actions(cell) == [("continue", "tools"), ("remind", "no-tool-call"), ("remind", "no-tool-call")]
    assert cell.outcome == "running"


def test_only_final_answer_alone_ends_the_run_with_its_argument(smol: Predicate) -> None:
    # agents.py L1336-1358: final_answer alone is the answer; beside another call it is an AgentExecutionError
    final = call("final_answer", 0, '{"answer": "42"}')
    alone = run(smol, calls(final))
    assert (alone.outcome, alone.reason, alone.ok, alone.steps[0].decision.rule) == (
        "stopped", "final_answer", True, "final-answer")
    beside = run(smol, calls(call("read_file"), final), answer())
    assert actions(beside)[0] == ("remind", "tool-error")
    # a key final_answer does not have fails validation (tools.py L1385-1388)
    wrong = run(smol, calls(call("final_answer", 0, '{"answer": "x", "why": "y"}')), answer())
    assert actions(wrong)[0] == ("remind", "tool-error")


def test_a_json_tool_call_in_text_is_run(smol: Predicate) -> None:
    # models.py L583-594 + utils.py L166-186: the span from the first { to the last } with a "name" key
    said = 'I will call {"name": "read_file", "arguments": {"path": "a"}}'
    text = Turn(finish="stop", finish_raw="stop", content=said)
    assert actions(run(smol, text, answer()))[0] == ("continue", "text-call")
    done = Turn(finish="stop", finish_raw="stop", content='{"name": "final_answer", "arguments": {"answer": "ok"}}')
    cell = run(smol, done)
    assert (cell.reason, cell.ok) == ("final_answer", True)


def test_a_call_that_does_not_validate_fails_the_whole_step_and_no_result_is_sent(smol: Predicate) -> None:
    # agents.py L1453-1481: an unknown (blank) name raises; the step's results are never set (L1436-1442)
    blank = call("", 1, '{"path": "a"}')
    cell = run(smol, calls(call("read_file"), blank), answer())
    step = cell.steps[0]
    assert (step.decision.action, step.decision.rule, step.tools_run, step.tools_failed) == (
        "remind", "tool-error", (), ())
    # null arguments become {} (L1385): the tool's required parameter is missing
    assert actions(run(smol, calls(call("read_file", 0, "null")), answer()))[0] == ("remind", "tool-error")


def test_cut_off_json_arguments_run_the_tool_with_the_raw_string(smol: Predicate) -> None:
    # models.py L193-200 leaves unparsable arguments a string; tools.py L1409-1412 passes it as the first input
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", 0, '{"path": "a.py", "con'),))
    cell = run(smol, cut, answer())
    assert (cell.steps[0].decision.action, cell.steps[0].tools_run) == ("continue", ("write_file",))


def test_calls_sharing_an_id_run_once_the_last_one(smol: Predicate) -> None:
    # agents.py L1374-1380: parallel_calls is keyed by call id
    twice = calls(ToolCall("same", "read_file", '{"path": "a"}'), ToolCall("same", "edit_file", '{"path": "a"}'))
    step = run(smol, twice, answer()).steps[0]
    assert (step.decision.action, step.tools_run) == ("continue", ("edit_file",))


def test_after_twenty_steps_one_request_without_tools_and_its_reply_is_the_output(smol: Predicate) -> None:
    # agents.py L545, L606-608, L810-853: step 20 did not end the run -> provide_final_answer (no tools,
    # so no tool_choice: the request changes it to auto), whose reply ends the run as max_steps_error
    cell = run(smol, tools("read_file"), then="repeat")
    assert cell.n_steps == 21
    last_step, final = cell.steps[19], cell.steps[20]
    assert (last_step.decision.action, last_step.decision.rule, last_step.tools_run) == (
        "remind", "max-steps", ("read_file",))
    assert last_step.decision.changes == RequestChanges(tool_choice="auto")
    assert (cell.reason, cell.ok, final.decision.rule) == ("max_steps_error", False, "max-steps-answer")


def test_an_api_error_is_retried_by_the_client_then_raised_out_of_run(smol: Predicate) -> None:
    # openai _base_client.py L922-964: 500 retried twice; agents.py L1324-1325, L594-596: raised
    err = Turn(finish="error", error=TurnError("server_error", status=500))
    cell = run(smol, err, then="repeat")
    assert actions(cell) == [("resend", "client-retry")] * 2 + [("stop", "generation-error")]
    assert (cell.reason, cell.ok) == ("api_error", False)
    # a 400 is not retried
    bad = run(smol, Turn(finish="error", error=TurnError("invalid_request", status=400)), then="repeat")
    assert bad.n_steps == 1


def test_a_rate_limit_gets_three_attempts_each_with_the_client_retries(smol: Predicate) -> None:
    # models.py L1174-1184, L1194-1202: 3 attempts when the error reads as a rate limit; 3 requests each
    cell = run(smol, Turn(finish="error", error=TurnError("rate_limit", status=429)), then="repeat")
    assert cell.n_steps == 9
    assert [s.decision.rule for s in cell.steps].count("rate-limit-retry") == 2
    recovered = run(smol, Turn(finish="error", error=TurnError("rate_limit", status=429)), tools("read_file"),
                    answer())
    assert actions(recovered)[:2] == [("resend", "client-retry"), ("continue", "tools")]
