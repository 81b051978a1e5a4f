"""The open-loop replay: turn consumption, then: repeat/end, caps, tool accounting, bad predicates."""

from __future__ import annotations

import contextlib
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import ALL, Cap, Continue, Decision, Remind, Resend, Stop, predicate, replay
from bench.engine.contain import decision_time_limit
from bench.engine.model import Turn, Usage
from bench.engine.predicate import State
from bench.engine.validate import InvalidDecision, check_decision
from tests.helpers import answer, seq, tools, truncated


@predicate(reasons=["done"], rules={"calls": "", "done": ""})
def until_no_calls(turn: Turn, state: State) -> Decision:
    if turn.tool_calls:
        return Continue("calls")
    return Stop("done", ok=True, rule="done")


@predicate(max_steps=4, cap=Cap(reason="too_many", ok=False, rule="limit"), rules={"again": ""})
def always_continue(turn: Turn, state: State) -> Decision:
    return Continue("again")


@predicate()
def always_resend(turn: Turn, state: State) -> Decision:
    return Resend("again")


def test_each_request_consumes_one_turn_in_order() -> None:
    cell = replay(seq(tools("a"), tools("b"), answer()), until_no_calls)
    assert [s.turn for s in cell.steps] == [0, 1, 2]
    assert cell.tools_run == ("a", "b")
    assert (cell.outcome, cell.reason, cell.ok) == ("stopped", "done", True)


def test_then_end_leaves_a_loop_that_asks_again_running() -> None:
    cell = replay(seq(tools("a"), then="end"), until_no_calls)
    assert cell.outcome == "running"
    assert cell.n_steps == 1
    assert cell.reason is None and cell.ok is None


def test_then_repeat_answers_with_the_last_turn_until_the_loop_cap() -> None:
    cell = replay(seq(truncated(), then="repeat"), always_continue)
    assert [s.turn for s in cell.steps] == [0, 0, 0, 0]
    assert (cell.outcome, cell.reason, cell.ok) == ("stopped", "too_many", False)
    assert cell.steps[-1].decision.rule == "limit"


def test_the_safety_cap_ends_a_loop_with_no_cap_as_capped() -> None:
    cell = replay(seq(truncated(), then="repeat"), always_resend, safety_cap=17)
    assert cell.outcome == "capped"
    assert cell.n_steps == 17
    assert cell.resends == 17


def test_tools_of_the_capped_step_are_still_run() -> None:
    cell = replay(seq(tools("x"), then="repeat"), always_continue)
    assert cell.tools_run == ("x",) * 4


def test_tools_run_in_the_step_that_stops() -> None:
    @predicate()
    def run_then_stop(turn: Turn, state: State) -> Decision:
        return Stop("content", ok=True, rule="r", run=ALL)

    cell = replay(seq(tools("read_file", "grep")), run_then_stop)
    assert cell.tools_run == ("read_file", "grep")
    assert cell.n_steps == 1


def test_failed_calls_are_counted_apart_from_run_ones() -> None:
    @predicate()
    def fail_first(turn: Turn, state: State) -> Decision:
        if state.step == 1:
            return Remind("fail", run=(1,), failed=(0,))
        return Stop("done", ok=True, rule="done")

    cell = replay(seq(tools("a", "b"), answer()), fail_first)
    assert cell.tools_run == ("b",)
    assert cell.tools_failed == ("a",)
    assert cell.reminders == 1


def test_a_predicate_that_raises_gives_a_crashed_cell_with_its_message() -> None:
    @predicate()
    def boom(turn: Turn, state: State) -> Decision:
        if state.step == 2:
            raise KeyError("tool_calls")
        return Continue("c")

    cell = replay(seq(tools("a"), tools("b")), boom)
    assert cell.outcome == "crashed"
    assert cell.n_steps == 1
    assert cell.error is not None and "step 2" in cell.error and "KeyError" in cell.error


def test_a_predicate_returning_a_non_decision_is_crashed() -> None:
    @predicate()
    def says_yes(turn: Turn, state: State) -> Decision:
        return "stop"  # type: ignore[return-value]

    cell = replay(seq(answer()), says_yes)
    assert cell.outcome == "crashed"
    assert cell.error is not None and "not a Decision" in cell.error


def test_undeclared_rules_and_reasons_are_rejected() -> None:
    @predicate(reasons=["done"], rules={"known": ""})
    def stray_rule(turn: Turn, state: State) -> Decision:
        return Stop("done", ok=True, rule="unknown-rule")

    @predicate(reasons=["done"], rules={"known": ""})
    def stray_reason(turn: Turn, state: State) -> Decision:
        return Stop("other", ok=True, rule="known")

    assert "rule 'unknown-rule'" in (replay(seq(answer()), stray_rule).error or "")
    assert "stop reason 'other'" in (replay(seq(answer()), stray_reason).error or "")


def test_running_a_call_the_turn_does_not_carry_is_rejected() -> None:
    @predicate()
    def phantom(turn: Turn, state: State) -> Decision:
        return Continue("c", run=(3,))

    cell = replay(seq(tools("a")), phantom)
    assert cell.outcome == "crashed"
    assert "carries 1 tool call" in (cell.error or "")


def test_state_shows_earlier_turns_and_decisions_but_not_the_current_one() -> None:
    seen: list[tuple[int, int, int]] = []

    @predicate()
    def spy(turn: Turn, state: State) -> Decision:
        seen.append((state.step, len(state.turns), len(state.decisions)))
        return Continue("c") if turn.tool_calls else Stop("d", ok=True, rule="d")

    replay(seq(tools("a"), tools("b"), answer()), spy)
    assert seen == [(1, 0, 0), (2, 1, 1), (3, 2, 2)]


def test_memo_is_fresh_for_every_cell() -> None:
    @predicate()
    def counts(turn: Turn, state: State) -> Decision:
        state.memo["n"] = state.memo.get("n", 0) + 1
        if state.memo["n"] > 2:
            return Stop("d", ok=True, rule="d")
        return Resend("r")

    first = replay(seq(answer(), then="repeat"), counts)
    second = replay(seq(answer(), then="repeat"), counts)
    assert first.n_steps == second.n_steps == 3


@pytest.mark.parametrize("then", ["end", "repeat"])
def test_a_sequence_without_turns_ends_running_before_any_request(then: str) -> None:
    cell = replay(seq(then=then), until_no_calls)
    assert (cell.outcome, cell.steps, cell.error) == ("running", (), None)


def test_tokens_add_up_usage_of_consumed_turns() -> None:
    t = Turn(finish="stop", finish_raw="stop", content="x", usage=Usage(10, 5))
    cell = replay(seq(t), until_no_calls)
    assert cell.tokens == 15


def test_a_bool_is_not_a_call_index_and_replay_and_validator_agree() -> None:
    @predicate()
    def runs_true(turn: Turn, state: State) -> Decision:
        return Continue("c", run=(True,))

    cell = replay(seq(tools("a")), runs_true)
    assert cell.outcome == "crashed"
    assert cell.error == "step 1: run must be 'all' or a tuple of call indices (ints), not (True,)"
    with pytest.raises(InvalidDecision) as raised:
        check_decision(Continue("c", run=(True,)), 1, None, None)
    assert f"step 1: {raised.value}" == cell.error


def test_a_stop_without_a_reason_is_refused_even_when_no_reasons_are_declared() -> None:
    @predicate()
    def no_reason(turn: Turn, state: State) -> Decision:
        return Decision("stop", "r", reason=None, ok=True)

    assert "a stop needs a reason" in (replay(seq(answer()), no_reason).error or "")


_SELECTIONS = st.one_of(st.just("all"), st.just(()), st.tuples(st.integers(-1, 3)),
                        st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.booleans()),
                        st.just([0]), st.none())
_DECISIONS = st.builds(Decision, action=st.sampled_from(["continue", "resend", "remind", "stop", "halt"]),
                       rule=st.sampled_from(["r", "other", ""]), reason=st.sampled_from([None, "done", "", "x"]),
                       ok=st.sampled_from([None, True, False, 1]), run=_SELECTIONS, failed=_SELECTIONS)


@given(decision=_DECISIONS, n_calls=st.integers(0, 3), declared=st.booleans())
def test_the_replay_accepts_exactly_the_decisions_the_validator_accepts(
        decision: Decision, n_calls: int, declared: bool) -> None:
    rules, reasons = ({"r": ""}, ["done"]) if declared else (None, ())
    pred = predicate(rules=rules, reasons=reasons)(lambda turn, state: decision)
    cell = replay(seq(tools(*["t"] * n_calls) if n_calls else answer()), pred, safety_cap=1)
    try:
        run, failed = check_decision(decision, n_calls, set(rules) if rules else None, set(reasons) or None)
    except InvalidDecision as exc:
        assert (cell.outcome, cell.error) == ("crashed", f"step 1: {exc}")
    else:
        assert cell.outcome != "crashed", cell.error
        assert len(cell.steps[0].tools_run) == len(run) and len(cell.steps[0].tools_failed) == len(failed)


@pytest.mark.parametrize("body", ["spin", "sleep", "swallow"])
def test_a_decision_that_never_comes_is_a_crashed_cell_naming_the_limit_and_the_step(body: str) -> None:
    @predicate()
    def hangs(turn: Turn, state: State) -> Decision:
        if state.step < 2:
            return Continue("c")
        while True:
            if body == "sleep":
                time.sleep(30)
            elif body == "swallow":
                with contextlib.suppress(Exception):  # a predicate's catch-all does not swallow the limit
                    time.sleep(30)

    with decision_time_limit(0.3):
        cell = replay(seq(tools("a"), tools("b"), answer()), hangs)
    assert cell.outcome == "crashed"
    assert cell.error == "no decision after 0.3 s at step 2"
    assert cell.n_steps == 1


def test_slow_decisions_under_the_limit_are_not_cut_short_however_long_the_cell() -> None:
    @predicate()
    def slow(turn: Turn, state: State) -> Decision:
        time.sleep(0.1)
        return Continue("c") if state.step < 6 else Stop("d", ok=True, rule="d")

    with decision_time_limit(0.3):
        cell = replay(seq(tools("a"), then="repeat"), slow)
    assert (cell.outcome, cell.n_steps) == ("stopped", 6)


def test_sys_exit_and_keyboard_interrupt_in_decide_are_crashed_cells_under_a_limit() -> None:
    @predicate()
    def exits(turn: Turn, state: State) -> Decision:
        sys.exit(3)

    @predicate()
    def interrupts(turn: Turn, state: State) -> Decision:
        raise KeyboardInterrupt

    with decision_time_limit(5):
        assert replay(seq(answer()), exits).error == ("step 1: called sys.exit(3) (a predicate cannot end "
                                                      "the bench)")
        assert replay(seq(answer()), interrupts).error == "step 1: raised KeyboardInterrupt"
    with pytest.raises(KeyboardInterrupt):  # without a limit in force it is taken as the user's
        replay(seq(answer()), interrupts)
