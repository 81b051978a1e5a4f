"""The open-loop replay: turn consumption, then: repeat/end, caps, tool accounting, bad predicates."""

from __future__ import annotations

from bench import ALL, Cap, Continue, Decision, Remind, Resend, Stop, predicate, replay
from bench.model import Turn, Usage
from bench.predicate import State
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


def test_tokens_add_up_usage_of_consumed_turns() -> None:
    t = Turn(finish="stop", finish_raw="stop", content="x", usage=Usage(10, 5))
    cell = replay(seq(t), until_no_calls)
    assert cell.tokens == 15
