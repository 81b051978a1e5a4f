"""`require: {progress: N}` and the fields it reads (ToolCall.result), with refusal and max_tokens:
parsed, written back, seen by the replay's State, and judged."""

from __future__ import annotations

from typing import Any

import pytest

from bench.catalogue.document import sequence_data, sequence_to_yaml
from bench.catalogue.load import SequenceError, parse_sequence
from bench.catalogue.yaml_read import parse_yaml
from bench.engine.judge import judge
from bench.engine.model import Cell, Decision, RequestChanges, Requirement, Step, ToolCall, Turn
from bench.engine.predicate import State, predicate
from bench.engine.replay import replay
from tests.helpers import seq


def poll(result: str | None, i: int = 0) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(ToolCall(f"c{i}", "check_build", '{"id": 42}', result),))


def cell_of(*actions: str, changes: RequestChanges | None = None) -> Cell:
    steps = []
    for i, a in enumerate(actions):
        d = Decision(a, "r", changes=changes if a == "continue" else None)  # type: ignore[arg-type]
        steps.append(Step(i + 1, i, d, ("check_build",) if a == "continue" else ()))
    return Cell("s", "p", "running", tuple(steps))


def test_a_fourth_plain_run_of_a_round_that_gave_the_same_results_three_times_breaks_progress() -> None:
    s = seq(*[poll("running") for _ in range(5)], require=Requirement(progress=3))
    assert judge(s, cell_of("continue", "continue", "continue")) == ()
    (v,) = judge(s, cell_of("continue", "continue", "continue", "continue"))
    assert (v.requirement, v.step) == ("progress: 3", 4)


def test_results_that_change_are_progress_even_when_the_calls_are_the_same() -> None:
    s = seq(*[poll(f"running {10 * i}%") for i in range(6)], require=Requirement(progress=3))
    assert judge(s, cell_of(*["continue"] * 6)) == ()


def test_a_reminder_or_a_changed_request_restarts_the_streak_a_resend_does_not() -> None:
    s = seq(*[poll("same") for _ in range(6)], require=Requirement(progress=3))
    assert judge(s, cell_of("continue", "continue", "remind", "continue", "continue", "continue")) == ()
    assert judge(s, cell_of(*["continue"] * 6, changes=RequestChanges(tool_choice="none"))) == ()
    (v,) = judge(s, cell_of("continue", "continue", "resend", "continue", "continue"))
    assert v.step == 5


def test_none_results_are_the_default_stub_result_and_equal_each_other() -> None:
    s = seq(*[poll(None) for _ in range(4)], require=Requirement(progress=2))
    (v,) = judge(s, cell_of("continue", "continue", "continue"))
    assert v.step == 3


BASE: dict[str, Any] = {"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "tests"}


def test_refusal_max_tokens_result_and_progress_round_trip_through_the_one_writer() -> None:
    data = {**BASE, "max_tokens": 1024, "require": {"progress": 3},
            "turns": [{"finish": "tool_calls", "content": None,
                       "tool_calls": [{"id": "c", "name": "n", "arguments": "{}", "result": "out"}]},
                      {"finish": "stop", "content": None, "refusal": "no."}]}
    s = parse_sequence(data, "x")
    assert (s.max_tokens, s.require.progress, s.turns[0].tool_calls[0].result, s.turns[1].refusal) == (
        1024, 3, "out", "no.")
    assert parse_sequence(parse_yaml(sequence_to_yaml(s)), "x") == s
    assert sequence_data(s)["max_tokens"] == 1024


@pytest.mark.parametrize(("patch", "field"), [({"max_tokens": 0}, "max_tokens"),
                                               ({"require": {"progress": 0}}, "require.progress")])
def test_a_limit_below_one_is_one_line_naming_the_field(patch: dict[str, Any], field: str) -> None:
    with pytest.raises(SequenceError) as exc:
        parse_sequence({**BASE, **patch, "turns": [{"finish": "stop", "content": "x"}]}, "x")
    assert str(exc.value).startswith(field)


def test_the_replay_gives_a_predicate_the_requests_max_tokens() -> None:
    seen: list[int | None] = []

    @predicate(reasons=["done"], rules={"done": "records what it sees"})
    def look(turn: Turn, state: State) -> Decision:
        seen.append(state.max_tokens)
        return Decision("stop", "done", reason="done", ok=True)

    s = parse_sequence({**BASE, "max_tokens": 512, "turns": [{"finish": "stop", "content": "x"}]}, "x")
    replay(s, look)
    replay(seq(Turn(finish="stop", finish_raw="stop", content="x")), look)
    assert seen == [512, None]
