"""A live record re-judged by `stopbench run` gives the violations `stopbench check` gave when it wrote it.

The cells are built from observations (what the server notes) with the server's own
`observed_cell` and judged with `bench.engine.judge`, then written with check's writer and read back with
`live_columns`, as `stopbench run` does: the record must keep what the judge reads (the indices of
the calls run, the request changes), not only the tools' names.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.check.report import load_live, table, write_live
from bench.check.runner import LiveRun
from bench.engine.judge import judge
from bench.engine.model import Cell, RequestChanges, Sequence
from bench.report.live import live_columns
from bench.serve.observe import Observed, observed_cell
from tests.check.conftest import ANSWER, CALL, small_sequence

CUT = {"finish": "tool_calls", "content": None,
       "tool_calls": [{"id": "call_1", "name": "write_file", "arguments": '{"path": "a.md", "content": "# Gu'}]}


def _judged(seq: Sequence, observed: list[Observed], ok: bool | None, reason: str | None) -> LiveRun:
    cell = observed_cell(seq, "mine@live", observed, ok, reason)
    return LiveRun(seq, cell.with_violations(judge(seq, cell)), None, 0, tuple(observed), 0.0)


def _rejudged(tmp_path: Path, runs: list[LiveRun]) -> dict[str, tuple[object, ...]]:
    write_live(tmp_path, "mine", ["python", "mine.py"], runs)
    live = live_columns(tmp_path, [r.sequence for r in runs])
    return {r.cell.sequence: r.cell.violations for r in live.results}


def test_a_malformed_call_run_live_still_breaks_no_malformed_runs_when_rejudged(tmp_path: Path) -> None:
    seq = small_sequence("cut-call", [CUT, ANSWER], require={"no_malformed_runs": True})
    run = _judged(seq, [Observed(1, 0, "continue", run=(0,)), Observed(2, 1, "stop")], True, "done")
    assert [v.requirement for v in run.cell.violations] == ["no_malformed_runs"]  # the cell as check judged it
    assert _rejudged(tmp_path, [run]) == {"cut-call": run.cell.violations}


def test_a_round_that_changes_its_request_is_still_progress_when_rejudged(tmp_path: Path) -> None:
    seq = small_sequence("same-round", [CALL, CALL, CALL, ANSWER], require={"progress": 1})
    raised = RequestChanges(max_tokens=4096)
    observed = [Observed(1, 0, "continue", run=(0,)), Observed(2, 1, "continue", run=(0,), changes=raised),
                Observed(3, 2, "continue", run=(0,)), Observed(4, 3, "stop")]
    run = _judged(seq, observed, True, "done")
    assert run.cell.violations == ()  # the changed request broke the streak
    assert _rejudged(tmp_path, [run]) == {"same-round": ()}


def test_the_record_keeps_each_steps_call_indices_and_changes(tmp_path: Path) -> None:
    seq = small_sequence("two-calls", [{"finish": "tool_calls", "content": None, "tool_calls": [
        {"id": "a", "name": "read_file", "arguments": "{}"}, {"id": "b", "name": "read_file", "arguments": "{"}]},
        ANSWER])
    run = _judged(seq, [Observed(1, 0, "continue", run=(1,), failed=(0,), changes=RequestChanges(compact=True)),
                        Observed(2, 1, "stop")], True, "done")
    write_live(tmp_path, "mine", ["python", "mine.py"], [run])
    (cell,) = load_live(tmp_path)["mine@live"]
    assert cell.steps[0].decision.run == (1,) and cell.steps[0].decision.failed == (0,)
    assert cell.steps[0].decision.changes == RequestChanges(compact=True)
    assert cell.steps == run.cell.steps


def test_an_older_record_without_call_indices_is_judged_by_its_tool_names(tmp_path: Path) -> None:
    seq = small_sequence("cut-call", [CUT, ANSWER], require={"no_malformed_runs": True})
    run = _judged(seq, [Observed(1, 0, "continue", run=(0,)), Observed(2, 1, "stop")], True, "done")
    path = write_live(tmp_path, "mine", ["python", "mine.py"], [run])
    record = json.loads(path.read_text(encoding="utf-8"))
    for d in record["cells"][0]["decisions"]:
        del d["calls_run"], d["calls_failed"]
    path.write_text(json.dumps(record), encoding="utf-8")
    live = live_columns(tmp_path, [seq])
    assert [r.cell.violations for r in live.results] == [run.cell.violations]


def test_the_record_and_the_table_hold_no_port_and_no_temporary_path(tmp_path: Path) -> None:
    """A program's last stderr line often names the server's address or its result file: both change on
    every run, so the record (and the printed row) write them as PORT and <tmp>."""
    seq = small_sequence("hang", [ANSWER])
    error = ("made no model request and exited 1: ConnectError: http://127.0.0.1:41234/v1/chat/completions; "
             "wrote /tmp/stopbench-check-k3j_x9q2/result.json")
    cell = Cell("hang", "mine@live", "crashed", (), error=error)
    path = write_live(tmp_path, "mine", ["python", "mine.py"], [LiveRun(seq, cell, None, 1, (), 0.0)])
    want = "ConnectError: http://127.0.0.1:PORT/v1/chat/completions; wrote <tmp>/result.json"
    assert json.loads(path.read_text(encoding="utf-8"))["cells"][0]["error"].endswith(want)
    assert "41234" not in table(["mine"], {"mine": [LiveRun(seq, cell, None, 1, (), 0.0)]})
