"""Requirement kinds added for the constructed catalogue: how `answer_on` is parsed and judged."""

from __future__ import annotations

import pytest

from bench import Continue, Decision, Remind, Resend, Stop, predicate, replay
from bench.catalogue.load import SequenceError, parse_sequence
from bench.engine.model import Requirement, Sequence, ToolCall, Turn
from bench.engine.predicate import State
from tests.helpers import answer, call, seq, tools


@predicate()
def stop_on_first_stop(turn: Turn, state: State) -> Decision:
    if turn.tool_calls:
        return Continue("calls")
    return Stop("done", ok=True, rule="done")


@predicate()
def remind_empty_once(turn: Turn, state: State) -> Decision:
    if turn.tool_calls:
        return Continue("calls")
    if not turn.content and not state.reminders:
        return Remind("empty", "say something")
    return Stop("done", ok=True, rule="done")


def test_success_on_a_turn_outside_answer_on_is_a_violation() -> None:
    sequence = seq(tools("read"), answer(""), answer("real answer"), require=Requirement(answer_on=(2,)))
    cell = replay(sequence, stop_on_first_stop)
    assert cell.ok is True and cell.steps[-1].turn == 1
    assert [v.requirement for v in cell.violations] == ["answer_on: [2]"]
    assert cell.violations[0].step == 2


def test_success_on_a_turn_in_answer_on_is_not_a_violation() -> None:
    sequence = seq(tools("read"), answer(""), answer("real answer"), require=Requirement(answer_on=(2,)))
    cell = replay(sequence, remind_empty_once)
    assert cell.steps[-1].turn == 2
    assert cell.violations == ()


def test_answer_on_says_nothing_about_a_loop_that_fails() -> None:
    @predicate()
    def give_up(turn: Turn, state: State) -> Decision:
        return Stop("error", ok=False, rule="give-up")

    cell = replay(seq(answer(""), require=Requirement(answer_on=(0,))), give_up)
    assert cell.violations == ()


def _data(**require: object) -> dict[str, object]:
    return {"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "test",
            "require": require, "turns": [{"finish": "stop", "content": "a"}, {"finish": "stop", "content": "b"}]}


def test_answer_on_is_read_from_the_require_block() -> None:
    assert parse_sequence(_data(answer_on=[1]), "x").require.answer_on == (1,)
    assert parse_sequence(_data(), "x").require.answer_on is None


def test_answer_on_naming_a_turn_that_does_not_exist_is_refused() -> None:
    with pytest.raises(SequenceError, match=r"require.answer_on: turn 2 does not exist"):
        parse_sequence(_data(answer_on=[2]), "x")


def _malformed_then_answer() -> Sequence:
    cut = Turn(finish="tool_calls", finish_raw="tool_calls",
               tool_calls=(ToolCall("c1", "write_file", '{"path": "a.txt", "content": "ab'),
                           ToolCall("c2", "read_file", '{"path": "b.txt"}')))
    return seq(cut, answer(), require=Requirement(no_malformed_runs=True))


def test_running_a_call_whose_arguments_are_not_json_is_a_violation() -> None:
    cell = replay(_malformed_then_answer(), stop_on_first_stop)
    assert [(v.requirement, v.step) for v in cell.violations] == [("no_malformed_runs", 1)]
    assert "write_file" in cell.violations[0].detail and "read_file" not in cell.violations[0].detail


def test_failing_the_malformed_call_and_running_the_others_is_not_a_violation() -> None:
    @predicate()
    def fail_bad(turn: Turn, state: State) -> Decision:
        if turn.tool_calls:
            return Continue("calls", run=(1,), failed=(0,))
        return Stop("done", ok=True, rule="done")

    cell = replay(_malformed_then_answer(), fail_bad)
    assert cell.tools_failed == ("write_file",)
    assert cell.violations == ()


def test_no_malformed_runs_is_read_from_the_require_block() -> None:
    assert parse_sequence(_data(no_malformed_runs=True), "x").require.no_malformed_runs is True
    assert parse_sequence(_data(), "x").require.no_malformed_runs is False


def test_resending_an_unusable_turn_is_not_dropping_its_calls_but_resending_a_usable_one_is() -> None:
    @predicate()
    def resend_calls_once(turn: Turn, state: State) -> Decision:
        if turn.tool_calls and not state.resends:
            return Resend("again")
        if turn.tool_calls:
            return Continue("calls")
        return Stop("done", ok=True, rule="done")

    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", 0, '{"path": "a'),))
    truncated_first = seq(cut, tools("write_file"), answer(), require=Requirement(no_dropped_calls=True))
    cell = replay(truncated_first, resend_calls_once)
    assert [s.decision.action for s in cell.steps] == ["resend", "continue", "stop"]
    assert cell.violations == ()

    usable_first = seq(tools("write_file"), tools("write_file"), answer(), require=Requirement(no_dropped_calls=True))
    cell = replay(usable_first, resend_calls_once)
    assert [v.requirement for v in cell.violations] == ["no_dropped_calls"]
    assert cell.violations[0].step == 1


def test_giving_up_openly_is_not_dropping_calls_but_a_successful_stop_is() -> None:
    @predicate()
    def give_up_on_calls(turn: Turn, state: State) -> Decision:
        return Stop("error", ok=False, rule="give-up")

    @predicate()
    def done_on_calls(turn: Turn, state: State) -> Decision:
        return Stop("done", ok=True, rule="done")

    sequence = seq(tools("write_file"), answer(), require=Requirement(no_dropped_calls=True))
    assert replay(sequence, give_up_on_calls).violations == ()
    assert [v.requirement for v in replay(sequence, done_on_calls).violations] == ["no_dropped_calls"]
