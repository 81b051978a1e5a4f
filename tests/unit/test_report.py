"""Report formatting: cell labels stay short and readable."""

from __future__ import annotations

from bench import Continue, Stop, predicate, replay
from bench.model import Decision, Turn
from bench.predicate import State
from bench.report import label, tool_list
from tests.helpers import answer, seq, tools


def test_a_run_of_the_same_tool_is_written_once_with_its_count() -> None:
    assert tool_list(("read_file", "write_file", "write_file", "write_file", "read_file")) == \
        "[read_file,write_file x3,read_file]"
    assert tool_list(()) == "[]"


def test_a_stopped_cell_reads_reason_steps_verdict_and_tools() -> None:
    @predicate()
    def simple(turn: Turn, state: State) -> Decision:
        return Continue("calls") if turn.tool_calls else Stop("no_tool_calls", ok=True, rule="done")

    cell = replay(seq(tools("read_file"), tools("count_lines"), answer()), simple)
    assert label(cell) == "stop:no_tool_calls@3 ok [read_file,count_lines]"
