"""learn-claude-code s01, both versions (predicates/learn_claude_code_s01*.py), against the pinned
files: agents/s01_agent_loop.py @0f691a09 and agents/openai_code/s01_agent_loop_openai.py @f8671fcb."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


def _load(stem: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{stem}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


@pytest.fixture(scope="module")
def anthropic() -> Predicate:
    return _load("learn_claude_code_s01")


@pytest.fixture(scope="module")
def openai() -> Predicate:
    return _load("learn_claude_code_s01_openai")


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "anthropic") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def end_turn(text: str = "done", *calls: str) -> Turn:
    return Turn(finish="stop", finish_raw="end_turn", content=text,
                tool_calls=tuple(call(n, i) for i, n in enumerate(calls)))


def tool_use(*calls: str) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_use", tool_calls=tuple(call(n, i) for i, n in enumerate(calls)))


def test_anthropic_end_turn_with_tool_use_blocks_returns_without_running_them(anthropic: Predicate) -> None:
    # s01_agent_loop.py L83-84: the test is on stop_reason, not on the content
    cell = run(anthropic, end_turn("Let me look.", "bash"), answer())
    assert (cell.n_steps, cell.reason, cell.ok, cell.tools_run) == (1, "return", True, ())


def test_anthropic_tool_use_without_blocks_asks_again_with_nothing_run(anthropic: Predicate) -> None:
    # L85-94: results == [] and a user message with content [] is appended; the loop goes on
    cell = run(anthropic, tool_use(), tool_use("bash"), end_turn())
    assert [s.decision.rule for s in cell.steps] == ["tool-use-no-blocks", "tool-use", "return"]
    assert cell.tools_run == ("bash",)


def test_anthropic_max_tokens_and_pause_turn_both_return(anthropic: Predicate) -> None:
    # L83: anything but "tool_use" returns
    for raw, finish in (("max_tokens", "length"), ("pause_turn", "unknown"), ("refusal", "content_filter")):
        cell = run(anthropic, Turn(finish=finish, finish_raw=raw, tool_calls=(call("bash"),)))  # type: ignore[arg-type]
        assert (cell.n_steps, cell.reason, cell.tools_run) == (1, "return", ())


def test_anthropic_loop_has_no_cap(anthropic: Predicate) -> None:
    # `while True:` (L75) with no counter
    cell = run(anthropic, tool_use("bash"), then="repeat")
    assert cell.outcome == "capped" and len(cell.tools_run) == cell.n_steps


def test_both_versions_retry_twice_in_the_client_then_raise(anthropic: Predicate, openai: Predicate) -> None:
    # no try/except in agent_loop or __main__; the SDK clients retry 408/409/429/5xx twice
    overloaded = Turn(finish="error", error=TurnError("overloaded", status=529, code="overloaded_error"))
    for pred in (anthropic, openai):
        cell = run(pred, overloaded, then="repeat")
        assert (cell.n_steps, cell.resends, cell.reason, cell.ok) == (3, 2, "api_error", False)


def test_openai_version_tests_the_message_body_not_finish_reason(openai: Predicate) -> None:
    # s01_agent_loop_openai.py L129-131: `if not assistant_message.tool_calls: return`
    stop_with_call = Turn(finish="stop", finish_raw="stop", tool_calls=(call("bash"),))
    dropped = Turn(finish="tool_calls", finish_raw="tool_calls")
    cell = run(openai, stop_with_call, dropped, answer(), dialect="openai-chat")
    assert [s.decision.action for s in cell.steps] == ["continue", "stop"]
    assert (cell.reason, cell.tools_run) == ("return", ("bash",))


def test_openai_version_fails_unparsable_arguments_and_crashes_on_non_objects(openai: Predicate) -> None:
    # L153-159: JSONDecodeError -> 'Error parsing command arguments'; L138: list.get -> AttributeError
    bad = Turn(finish="tool_calls", finish_raw="tool_calls",
               tool_calls=(call("bash", 0, '{"command": "ls'), call("bash", 1), call("bash", 2, '["ls"]'),
                           call("bash", 3)))
    cell = run(openai, bad, answer(), dialect="openai-chat")
    last = cell.steps[-1].decision
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "exception", False)
    assert (last.run, last.failed) == ((1,), (0,))


def test_openai_version_loop_has_no_cap(openai: Predicate) -> None:
    cell = run(openai, tools("bash"), then="repeat", dialect="openai-chat")
    assert cell.outcome == "capped"


def test_openai_version_drops_a_call_not_named_bash_and_goes_on(openai: Predicate) -> None:
    # L133-134: `if tool_call.function.name == "bash":` has no else: a blank name gets no result
    turn = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("", 0, '["ls"]'), call("bash", 1)))
    cell = run(openai, turn, answer(), dialect="openai-chat")
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.run, first.failed) == ("continue", "not-bash", (1,), ())
    assert (cell.reason, cell.ok) == ("return", True)
