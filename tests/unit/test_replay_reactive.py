"""The replay follows a reactive sequence (``after``) and keeps a decision's request changes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench import Continue, Decision, Remind, RequestChanges, Resend, Stop, predicate, replay
from bench.engine.model import Turn
from bench.engine.predicate import State
from bench.engine.replay import following
from bench.engine.validate import InvalidDecision, check_decision
from tests.helpers import answer, seq, tools

DROPPED = Turn(finish="tool_calls", finish_raw="tool_calls", content=None,
               after=(("resend", 1), ("remind", 2)))
"""`tool_calls` without a call: a resend gets turn 1 (dropped again), a reminder turn 2."""


@predicate(reasons=["done"], rules={"calls": "", "empty": "", "done": ""})
def resend_empty(turn: Turn, state: State) -> Decision:
    if turn.tool_calls:
        return Continue("calls")
    if turn.finish == "tool_calls" and state.resends < 3:
        return Resend("empty")
    return Stop("done", ok=turn.finish == "stop", rule="done")


@predicate(reasons=["done"], rules={"calls": "", "empty": "", "done": ""})
def remind_empty(turn: Turn, state: State) -> Decision:
    if turn.tool_calls:
        return Continue("calls")
    if turn.finish == "tool_calls" and state.reminders < 3:
        return Remind("empty", "you sent no call", changes=RequestChanges(tool_choice="required"))
    return Stop("done", ok=turn.finish == "stop", rule="done")


def reactive() -> tuple[Turn, ...]:
    # 0: dropped (resend -> 1, remind -> 2); 1: dropped again, resend stays on 1; 2: the call; 3: the answer
    return (DROPPED, replace(DROPPED, after=(("resend", 1), ("remind", 2))), tools("read_file"), answer())


def test_a_resend_is_answered_by_the_turn_after_names_for_resend() -> None:
    cell = replay(seq(*reactive()), resend_empty)
    assert [s.turn for s in cell.steps] == [0, 1, 1, 1]
    assert (cell.outcome, cell.ok) == ("stopped", False)


def test_a_reminder_is_answered_by_the_turn_after_names_for_remind() -> None:
    cell = replay(seq(*reactive()), remind_empty)
    assert [s.turn for s in cell.steps] == [0, 2, 3]
    assert (cell.reason, cell.ok, cell.tools_run) == ("done", True, ("read_file",))


def test_an_action_after_leaves_out_gets_the_next_turn() -> None:
    first = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=tools("a").tool_calls,
                 after=(("remind", 2),))
    cell = replay(seq(first, answer("one"), answer("two")), resend_empty)
    assert [s.turn for s in cell.steps] == [0, 1]


def test_following_past_the_last_turn_repeats_or_ends_as_the_sequence_says() -> None:
    turns = (Turn("tool_calls", after=(("resend", 1),)), answer())
    assert following(seq(*turns), 1, "continue") is None
    assert following(seq(*turns, then="repeat"), 1, "continue") == 1
    assert following(seq(*turns), 0, "resend") == 1
    assert following(seq(*turns), 0, "remind") == 1


def test_after_can_send_the_loop_back_to_an_earlier_turn_until_the_safety_cap() -> None:
    back = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=tools("a").tool_calls,
                after=(("continue", 0),))
    cell = replay(seq(back), resend_empty, safety_cap=7)
    assert [s.turn for s in cell.steps] == [0] * 7
    assert cell.outcome == "capped"


def test_open_loop_sequences_replay_as_before() -> None:
    turns = (Turn("tool_calls", finish_raw="tool_calls"), Turn("tool_calls", finish_raw="tool_calls"),
             tools("read_file"), answer())
    cell = replay(seq(*turns), remind_empty)
    assert [s.turn for s in cell.steps] == [0, 1, 2, 3]


def test_a_decision_keeps_its_changes_in_the_step() -> None:
    cell = replay(seq(*reactive()), remind_empty)
    assert cell.steps[0].decision.changes == RequestChanges(tool_choice="required")
    assert cell.steps[1].decision.changes is None


@pytest.mark.parametrize(("decision", "message"), [
    (Decision("stop", "r", reason="x", ok=True, changes=RequestChanges(max_tokens=10)), "a stop sends no next request"),
    (Resend("r", changes=RequestChanges()), "changes nothing"),
    (Resend("r", changes=RequestChanges(max_tokens=0)), "changes.max_tokens must be a positive int"),
    (Resend("r", changes=RequestChanges(max_tokens=True)), "changes.max_tokens must be a positive int"),
    (Resend("r", changes=RequestChanges(model="")), "changes.model must be a non-empty string"),
    (Resend("r", changes=RequestChanges(compact=1)), "changes.compact must be a bool"),  # type: ignore[arg-type]
    (Resend("r", changes={"max_tokens": 5}), "changes must be a RequestChanges"),  # type: ignore[arg-type]
])
def test_the_validator_refuses_bad_changes(decision: Decision, message: str) -> None:
    with pytest.raises(InvalidDecision, match=message):
        check_decision(decision, 0, None, None)


def test_a_predicate_returning_bad_changes_crashes_its_cell() -> None:
    @predicate()
    def bad(turn: Turn, state: State) -> Decision:
        return Resend("r", changes=RequestChanges(max_tokens=-1))

    cell = replay(seq(answer()), bad)
    assert cell.outcome == "crashed"
    assert "changes.max_tokens" in (cell.error or "")
