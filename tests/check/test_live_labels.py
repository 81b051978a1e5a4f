"""What `stopbench check` prints for a cell: repeated tool names counted (`bash ×200`), blank names
visible, a long mixed list as totals, and a crashed cell with the requests served before it."""

from __future__ import annotations

from bench.check.report import BLANK, table, tool_names
from bench.check.runner import LiveRun
from bench.engine.model import Cell, Decision, Step
from bench.serve.observe import Observed
from tests.check.conftest import ANSWER, small_sequence

CALL_TURN = {"finish": "tool_calls", "content": None, "tool_calls": [{"id": "c", "name": "bash", "arguments": "{}"}]}


def test_a_run_of_one_tool_is_written_once_with_its_count() -> None:
    assert tool_names(["bash"] * 200) == "[bash ×200]"
    assert tool_names(["read_file", "bash", "bash"]) == "[read_file, bash ×2]"
    assert tool_names(["read_file", "edit_file"]) == "[read_file,edit_file]"


def test_a_blank_tool_name_is_visible() -> None:
    assert tool_names(["", "read_file", " "]) == f"[{BLANK},read_file,{BLANK}]"


def test_a_long_mixed_list_is_written_as_totals_in_order_of_first_use() -> None:
    shown = tool_names(["bash", "read_file"] * 100)
    assert shown == "[bash ×100, read_file ×100]"


def test_a_200_call_row_stays_short() -> None:
    seq = small_sequence("loop", [ANSWER])
    steps = tuple(Step(i, 0, Decision("continue", "observed"), ("bash", "grep")) for i in range(1, 101))
    names = tuple(n for s in steps for n in s.tools_run)
    cell = Cell("loop", "mine@live", "capped", steps, tools_run=names)
    row = table(["mine"], {"mine": [LiveRun(seq, cell, None, None, (), 0.0)]}).splitlines()[-1]
    assert len(names) == 200 and len(row) < 80, row


def test_a_crashed_cell_says_how_many_requests_were_served_before_it() -> None:
    seq = small_sequence("hang", [ANSWER])
    cell = Cell("hang", "mine@live", "crashed", (), error="still running after 2 s; killed")
    run = LiveRun(seq, cell, None, None, (Observed(1, 0, "stop"),), 2.0)
    row = table(["mine"], {"mine": [run]}).splitlines()[-1]
    assert row.startswith("| hang | crashed@0 after 1 request served [] (still running after 2 s; killed)"), row


def test_an_explanation_says_what_the_loop_did_and_how_each_answered_call_was_known() -> None:
    from bench.check.explain import step_text
    step = Step(1, 0, Decision("continue", "observed", run=(0, 1)), ("bash",) * 2, (), known=((0, "executed"),
                                                                                               (1, "wording")))
    assert step_text(step) == "continue, ran bash ×2 (call 0 executed, call 1 by its wording)"


def test_a_blank_tool_name_is_visible_in_the_turn_an_explanation_shows() -> None:
    from bench.check.explain import turn_text
    from bench.cli.show import describe_turn
    turn = small_sequence("blank", [{"finish": "tool_calls", "content": None, "tool_calls": [
        {"id": "call_1", "name": "", "arguments": "{}"}]}]).turns[0]
    assert f"calls {BLANK}('{{}}')" in turn_text(turn, 0)
    assert f"tool_calls=[{BLANK}({{}})]" in describe_turn(turn)


def test_an_explanation_writes_a_long_path_with_its_repeats_counted() -> None:
    from bench.check.explain import explain
    from bench.engine.model import Violation
    seq = small_sequence("loop", [CALL_TURN], then="repeat", require={"stops_within": 3})
    steps = tuple(Step(i, 0, Decision("continue", "observed", run=(0,)), ("bash",)) for i in range(1, 201))
    cell = Cell("loop", "mine@live", "capped", steps, tools_run=("bash",) * 200,
                violations=(Violation("stops_within: 3", 200, "the loop never stopped (capped)"),))
    why = explain(seq, cell)
    assert why is not None and "  path: continue ×200; capped after 200 step(s)" in why, why


def test_a_step_the_server_served_unasked_shows_in_the_row_and_below_the_table() -> None:
    from bench.check.report import note_lines
    seq = small_sequence("reflect", [CALL_TURN, ANSWER])
    note = "tool calls withheld: the request offered no tools"
    steps = (Step(1, 0, Decision("continue", "observed", run=(0,)), ("bash",)),
             Step(2, 1, Decision("stop", "observed", reason="done", ok=True), note=note))
    run = LiveRun(seq, Cell("reflect", "mine@live", "stopped", steps, "done", True, ("bash",)), None, 0, (), 0.0)
    row = table(["mine"], {"mine": [run]}).splitlines()[-1]
    assert row == "| reflect | stop:done@2 ok [bash] (step 2: tool calls withheld) |"
    assert note_lines("mine", [run]) == [f"mine@live reflect: step 2: {note}"]
