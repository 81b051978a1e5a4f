"""stopbench's reference loop: it meets every requirement of the catalogue, and each of its rules
does what its docstring says (bounded remedies, tool calls always handled, no success on odd turns).

Expectations are written from the rules in predicates/reference.py and the requirement blocks of the
sequences, not from the bench's output.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.catalogue.load import load_catalogue
from bench.engine.discovery import load_file
from bench.engine.model import Cell, Requirement, ToolCall, Turn, TurnError, Usage
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools

CATALOGUE = load_catalogue(ROOT / "sequences")


def _load(name: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


REFERENCE = _load("reference")
FINISH_ONLY = _load("finish_only")


def run(*turns: Turn, then: str = "end", require: Requirement | None = None) -> Cell:
    return replay(seq(*turns, then=then, require=require), REFERENCE)


def dropped() -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls")


def path(cell: Cell) -> list[str]:
    return [f"{s.decision.action} {s.decision.rule}" for s in cell.steps]


# ---------------------------------------------------------------- the whole catalogue


def test_the_catalogue_loads_without_problems() -> None:
    assert CATALOGUE.problems == []
    assert len([s for s in CATALOGUE.sequences if s.kind == "constructed"]) >= 30


@pytest.mark.parametrize("sequence", CATALOGUE.sequences, ids=lambda s: s.id)
def test_reference_meets_every_requirement_of_the_sequence(sequence) -> None:  # type: ignore[no-untyped-def]
    cell = replay(sequence, REFERENCE)
    assert cell.outcome != "crashed", cell.error
    assert cell.violations == ()


def test_the_naive_finish_only_predicate_breaks_requirements_the_reference_meets() -> None:
    broken = {s.id for s in CATALOGUE.sequences if replay(s, FINISH_ONLY).violations}
    # seed 002: it drops the calls of a stop turn, and it never gives up on an empty tool_calls turn
    assert {"chat-stop-with-tool-calls", "chat-dropped-calls-x3", "gemini-function-call-stop"} <= broken


def test_stop_reasons_are_enumerable_name_every_way_to_end_and_the_cap_is_an_error() -> None:
    assert {"no_tool_calls", "max_steps", "length", "content_filter", "dropped_tool_call", "model_error",
            "unknown_finish"} <= REFERENCE.all_reasons
    assert REFERENCE.cap.ok is False


# ---------------------------------------------------------------- rules, one at a time


def test_tool_calls_run_whatever_the_finish_says() -> None:
    for finish, raw in [("stop", "stop"), ("unknown", None), ("unknown", "tool_call")]:
        turn = Turn(finish=finish, finish_raw=raw, tool_calls=(call("read_file"),))  # type: ignore[arg-type]
        cell = run(turn, answer())
        assert cell.tools_run == ("read_file",), finish
        assert (cell.reason, cell.ok) == ("no_tool_calls", True)


def test_truncated_calls_are_failed_never_run_and_the_retry_is_bounded() -> None:
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", arguments='{"path": "a'),))
    cell = run(cut, then="repeat")
    assert cell.tools_run == ()
    assert cell.tools_failed == ("write_file",) * 3
    assert (cell.reason, cell.ok, cell.n_steps) == ("length", False, 3)


def test_a_truncated_text_is_never_an_answer() -> None:
    cell = run(Turn(finish="length", finish_raw="length", content="half a sent"))
    assert (cell.reason, cell.ok, cell.n_steps) == ("length", False, 1)


def test_arguments_that_are_not_json_are_failed_even_under_a_tool_calls_finish() -> None:
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(ToolCall("c1", "write_file", '{"content": "ab'), ToolCall("c2", "read_file", "{}")))
    cell = run(turn, answer())
    assert cell.tools_run == ("read_file",)
    assert cell.tools_failed == ("write_file",)


def test_dropped_calls_get_two_reminders_then_stop_dropped_tool_call() -> None:
    cell = run(tools("read_file"), dropped(), dropped(), dropped(), answer())
    assert path(cell) == ["continue calls", "remind dropped-remind", "remind dropped-remind", "stop dropped-stop"]
    assert (cell.reason, cell.ok, cell.reminders) == ("dropped_tool_call", False, 2)


def test_reminder_budget_is_per_streak_a_productive_turn_resets_it() -> None:
    cell = run(dropped(), dropped(), tools("a"), dropped(), dropped(), tools("b"), answer())
    assert (cell.reason, cell.ok) == ("no_tool_calls", True)
    assert cell.reminders == 4


def test_a_tool_call_left_as_text_is_reminded_not_answered() -> None:
    text = Turn(finish="stop", finish_raw="stop", content='<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>')
    cell = run(text, tools("ls"), answer())
    assert path(cell)[0] == "remind text-call-remind"
    assert (cell.ok, cell.steps[-1].turn) == (True, 2)


def test_an_empty_stop_is_reminded_at_most_twice() -> None:
    cell = run(Turn(finish="stop", finish_raw="stop", content=" "), then="repeat")
    assert (cell.reason, cell.ok, cell.n_steps, cell.reminders) == ("empty_response", False, 3, 2)


def test_transient_errors_are_resent_at_most_three_times() -> None:
    err = Turn(finish="error", error=TurnError("overloaded", "overloaded", 503))
    cell = run(err, then="repeat")
    assert (cell.reason, cell.ok, cell.resends, cell.n_steps) == ("model_error", False, 3, 4)


def test_a_client_error_is_not_resent() -> None:
    err = Turn(finish="error", error=TurnError("context_overflow", "context length exceeded", 400,
                                               "context_length_exceeded"))
    cell = run(err, then="repeat")
    assert (cell.reason, cell.ok, cell.resends, cell.n_steps) == ("model_error", False, 0, 1)


def test_an_unknown_finish_without_calls_is_not_success() -> None:
    for raw in ("other", None, "insufficient_system_resource"):
        cell = run(Turn(finish="unknown", finish_raw=raw, content="looks like an answer"))
        assert (cell.reason, cell.ok) == ("unknown_finish", False), raw


def test_pause_turn_and_end_turn_false_ask_again() -> None:
    pause = Turn(finish="unknown", finish_raw="pause_turn", content="searching")
    not_done = Turn(finish="stop", finish_raw="completed", content="next I will", end_turn=False)
    for turn in (pause, not_done):
        cell = run(turn, answer())
        assert path(cell) == ["continue paused", "stop done"]
    stuck = run(pause, then="repeat")
    assert (stuck.reason, stuck.ok, stuck.n_steps) == ("unfinished_turn", False, 4)


def test_a_steer_on_the_answer_is_sent_as_a_reminder_with_the_users_words() -> None:
    steered = Turn(finish="stop", finish_raw="stop", content="done", steer="also update the README")
    cell = run(steered, tools("edit_file"), answer())
    assert cell.steps[0].decision.action == "remind"
    assert cell.steps[0].decision.message == "also update the README"
    assert cell.ok is True and cell.steps[-1].turn == 2


def test_the_same_call_with_the_same_result_runs_three_times_is_failed_the_fourth_and_stops_the_fifth() -> None:
    cell = run(tools("bash"), then="repeat")
    assert path(cell) == ["continue calls"] * 3 + ["remind repeat-remind", "stop repeat-stop"]
    assert (cell.reason, cell.ok) == ("repeated_tool_call", False)


def _round(name: str, arguments: str, result: str, i: int) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(ToolCall(f"c{i}", name, arguments, result),))


def test_a_retry_that_succeeds_on_the_third_try_is_run_two_identical_failures_are_not_a_loop() -> None:
    tries = [_round("http_get", '{"url": "u"}', r, i) for i, r in enumerate(["503", "503", "200 OK"])]
    cell = run(*tries, answer())
    assert path(cell) == ["continue calls"] * 3 + ["stop done"]
    assert cell.ok is True


def test_a_cycle_of_two_rounds_with_the_same_results_is_failed_when_it_starts_a_fourth_time_then_stopped() -> None:
    a = _round("read_file", '{"path": "c"}', "port: 1", 0)
    b = replace(_round("run_bash", '{"command": "make"}', "error", 1), after=(("continue", 0), ("remind", 0)))
    cell = run(a, b, then="repeat")
    assert path(cell) == ["continue calls"] * 6 + ["remind repeat-remind", "stop repeat-stop"]
    assert [s.turn for s in cell.steps] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert (cell.reason, cell.ok) == ("repeated_tool_call", False)


def test_a_poll_whose_result_flips_between_two_values_is_a_cycle_not_progress() -> None:
    x = _round("check", '{"id": 1}', "retrying", 0)
    y = replace(_round("check", '{"id": 1}', "waiting", 1), after=(("continue", 0), ("remind", 0)))
    cell = run(x, y, then="repeat")
    assert path(cell) == ["continue calls"] * 6 + ["remind repeat-remind", "stop repeat-stop"]


def test_the_same_tool_with_other_arguments_and_the_same_result_is_new_work() -> None:
    rounds = [_round("run_tests", f'{{"k": "t{i}"}}', "1 passed", i) for i in range(8)]
    assert path(run(*rounds, answer())) == ["continue calls"] * 8 + ["stop done"]


def test_after_the_reminder_a_call_outside_the_cycle_runs_and_lifts_the_warning() -> None:
    same = [_round("bash", "{}", "same", i) for i in range(4)]
    other = _round("read_file", '{"path": "x"}', "text", 9)
    cell = run(*same, other, same[0], same[0], same[0], answer())
    assert path(cell) == (["continue calls"] * 3 + ["remind repeat-remind"] + ["continue calls"] * 4
                          + ["stop done"])


def test_the_cap_is_an_error_not_an_answer() -> None:
    endless = [Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("read", i, f'{{"n": {i}}}'),))
               for i in range(60)]
    cell = run(*endless)
    assert (cell.reason, cell.ok, cell.n_steps) == ("max_steps", False, 50)
    assert cell.steps[-1].decision.rule == "cap"


def test_a_refusal_with_finish_stop_is_refused_not_answered() -> None:
    refused = Turn(finish="stop", finish_raw="stop", content=None, refusal="I can't help with that.")
    cell = run(tools("read_file"), refused)
    assert path(cell) == ["continue calls", "stop refusal"]
    assert (cell.reason, cell.ok) == ("content_filter", False)


def test_a_stop_whose_output_reaches_the_requests_max_tokens_is_a_cut_text() -> None:
    cut = Turn(finish="stop", finish_raw="stop", content="1. Rename the table and", usage=Usage(10, 1024))
    s = replace(seq(tools("read_file"), cut), max_tokens=1024)
    assert path(replay(s, REFERENCE)) == ["continue calls", "stop length-hidden"]
    assert path(replay(replace(s, max_tokens=2048), REFERENCE)) == ["continue calls", "stop done"]


def test_the_same_call_whose_results_keep_changing_is_progress_not_a_repeat() -> None:
    polls = [Turn(finish="tool_calls", finish_raw="tool_calls",
                  tool_calls=(ToolCall(f"c{i}", "check", '{"id": 1}', f"running {i * 20}%"),)) for i in range(5)]
    cell = run(*polls, answer())
    assert path(cell) == ["continue calls"] * 5 + ["stop done"]
    same = [replace(t, tool_calls=tuple(replace(c, result="running") for c in t.tool_calls)) for t in polls]
    assert path(run(*same, then="repeat"))[:5] == ["continue calls"] * 3 + ["remind repeat-remind", "stop repeat-stop"]
