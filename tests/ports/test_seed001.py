"""Seed 001's loop (predicates/seed001.py) against the article (循环终止条件：模型什么时候"想好了"):
three gates, the order "tool calls first; no calls and length: degrade; otherwise done", MAX_ITERS = 10."""

from __future__ import annotations

import pytest

from bench.engine.model import Cell, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import answer, seq, tools, truncated
from tests.ports.test_learn_claude_code_s01 import _load


@pytest.fixture(scope="module")
def seed001() -> Predicate:
    return _load("seed001")


def run(pred: Predicate, *turns: Turn, then: str = "end") -> Cell:
    return replay(seq(*turns, then=then), pred)


def error(kind: str, status: int | None = None) -> Turn:
    return Turn(finish="error", error=TurnError(kind, "message text no rule reads", status))  # type: ignore[arg-type]


def test_no_tool_calls_is_the_answer_natural_stop(seed001: Predicate) -> None:
    # section 自然终止 item 2: no tool_calls and a normal finish: done, content is the answer
    cell = run(seed001, tools("read_file"), answer())
    assert (cell.n_steps, cell.reason, cell.ok, cell.tools_run) == (2, "no_tool_calls", True, ("read_file",))


def test_tool_calls_come_first_even_on_a_length_turn(seed001: Predicate) -> None:
    # item 1 '工具优先' and the code's `if has_tool_calls:` before `elif finish_reason=="length"`
    cut = Turn(finish="length", finish_raw="length", tool_calls=(ToolCall("c1", "edit_file", '{"path": "a.py"}'),))
    cell = run(seed001, cut, answer())
    assert [s.decision.rule for s in cell.steps] == ["calls", "natural"]
    assert cell.tools_run == ("edit_file",)


def test_length_without_calls_is_not_an_answer(seed001: Predicate) -> None:
    # item 3: '没有 tool_calls 但 finish_reason == length → ... 走异常/降级'; '至少不能直接当答案'
    cell = run(seed001, tools("read_file"), truncated())
    assert (cell.reason, cell.ok, cell.steps[-1].decision.rule) == ("truncated", False, "length")


def test_content_filter_without_calls_falls_in_the_else_branch_as_done(seed001: Predicate) -> None:
    # the code's `else: # 模型想好了`: every finish but length, content_filter included
    cell = run(seed001, Turn(finish="content_filter", finish_raw="content_filter"))
    assert (cell.reason, cell.ok) == ("no_tool_calls", True)


def test_max_iters_runs_the_tenth_rounds_calls_then_stops_not_success(seed001: Predicate) -> None:
    # max_iters_demo.py: MAX_ITERS=10; the 10th round's tools run, then `iters > MAX_ITERS` breaks
    cell = run(seed001, tools("read_file"), then="repeat")
    assert (cell.n_steps, cell.reason, cell.ok) == (10, "max_iters", False)
    assert cell.tools_run == ("read_file",) * 10


def test_a_retried_error_is_a_resend_that_does_not_count_as_a_round(seed001: Predicate) -> None:
    # ASSUMED (第 19 节): 网络抖动、API 限流、超时 are retried, inside the round
    turns = [error("rate_limit", 429), *[tools("read_file")] * 9, error("timeout"), tools("read_file")]
    cell = run(seed001, *turns, then="repeat")
    assert [s.decision.action for s in cell.steps].count("resend") == 2
    assert (cell.n_steps, cell.reason, cell.ok) == (12, "max_iters", False)


def test_retries_are_bounded_at_three_in_a_row(seed001: Predicate) -> None:
    cell = run(seed001, error("connection_reset"), then="repeat")
    assert [s.decision.rule for s in cell.steps] == ["error-retry"] * 3 + ["error-stop"]
    assert (cell.reason, cell.ok) == ("api_error", False)


@pytest.mark.parametrize("kind", ["context_overflow", "server_error", "authentication", "invalid_request"])
def test_other_error_kinds_stop_at_once(seed001: Predicate, kind: str) -> None:
    # '...还是直接停机'; the article's own crash: context too long, refused by the API
    cell = run(seed001, tools("read_file"), error(kind, 400), then="repeat")
    assert [s.decision.rule for s in cell.steps] == ["calls", "error-stop"]
    assert (cell.reason, cell.ok) == ("api_error", False)


def test_arguments_that_fail_validation_are_answered_with_an_error_and_the_loop_goes_on(seed001: Predicate) -> None:
    # '参数校验不过' under the exceptional gate; ASSUMED: the error goes back to the model
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(ToolCall("c1", "read_file", '{"path": "a.py"}'), ToolCall("c2", "edit_file", '{"path": ')))
    cell = run(seed001, turn, answer())
    assert (cell.steps[0].tools_run, cell.steps[0].tools_failed) == (("read_file",), ("edit_file",))
    assert (cell.reason, cell.ok) == ("no_tool_calls", True)
