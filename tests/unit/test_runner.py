"""The run's isolation: a predicate that changes what it is handed crashes its own cell only."""

from __future__ import annotations

import copy

from bench import Continue, Decision, Stop, predicate
from bench.engine.model import Turn
from bench.engine.predicate import Predicate, State
from bench.golden.run import cells
from tests.helpers import answer, seq, tools


def _named(pred: Predicate, name: str) -> Predicate:
    return pred.named(name, "test")


@predicate()
def sees_names(turn: Turn, state: State) -> Decision:
    """Records the names it sees in its rule, so a changed turn shows in the cell."""
    if turn.tool_calls:
        return Continue("saw " + ",".join(c.name for c in turn.tool_calls))
    return Stop("done", ok=True, rule=f"saw {turn.finish}")


@predicate()
def renames_a_call(turn: Turn, state: State) -> Decision:
    for call in turn.tool_calls:
        object.__setattr__(call, "name", "rm_rf")
    return Continue("c") if turn.tool_calls else Stop("done", ok=True, rule="d")


def test_a_predicate_that_changes_a_tool_call_crashes_its_cell_naming_the_field_and_the_turns_are_put_back() -> None:
    sequence = seq(tools("read_file"), tools("grep"), answer())
    pristine = copy.deepcopy(sequence.turns)
    [row] = cells([sequence], [_named(sees_names, "before"), _named(renames_a_call, "culprit"),
                               _named(sees_names, "after")])
    before, culprit, after = row
    assert culprit.outcome == "crashed"
    assert culprit.error is not None and culprit.error.startswith(
        "changed what the bench handed it: turn 0 tool call 0 name: 'read_file' -> 'rm_rf'")
    assert [s.decision.rule for s in after.steps] == ["saw read_file", "saw grep", "saw stop"]
    assert after.steps == before.steps
    assert sequence.turns == pristine


def test_a_run_of_honest_predicates_is_not_replayed_twice() -> None:
    calls: list[int] = []

    @predicate()
    def counts(turn: Turn, state: State) -> Decision:
        calls.append(state.step)
        return Stop("done", ok=True, rule="d")

    [row] = cells([seq(answer())], [_named(counts, "a"), _named(counts, "b")])
    assert [c.outcome for c in row] == ["stopped", "stopped"]
    assert calls == [1, 1]
