"""A live record of a run with faults, re-judged by ``stopbench run`` and ``show --live``, gives the
verdict ``check`` gave: the record keeps what was injected and the re-judging reads it."""

from __future__ import annotations

from pathlib import Path

from bench.check.faulted import judge_faulted
from bench.check.report import read_live_cell, write_live
from bench.check.runner import LiveRun
from bench.faults import Injected, StepFault
from bench.report.live import live_columns
from bench.serve.observe import Observed, observed_cell
from tests.check.conftest import small_sequence

CUT = StepFault(1, Injected(("cut after 3 frames (stream ended without a finish)",), "stream_cut"))


def _faulted_naive_run() -> LiveRun:
    seq = small_sequence("long-answer", [{"finish": "stop", "content": "The answer is 42."}],
                         require={"stops_within": 2})
    cell = observed_cell(seq, "naive@live", [Observed(1, 0, "stop")], True, "no_tool_calls")
    return LiveRun(seq, cell.with_violations(judge_faulted(seq, cell, [CUT])), None, 0, (Observed(1, 0, "stop"),),
                   0.0, faults=(CUT,))


def test_stopbench_run_rejudges_a_faulted_cell_with_what_was_injected(tmp_path: Path) -> None:
    run = _faulted_naive_run()
    assert [v.requirement for v in run.cell.violations] == ["no_success_on_fault"]
    write_live(tmp_path, "naive", ["python", "naive.py"], [run])
    live = live_columns(tmp_path, [run.sequence])
    assert [r.cell.violations for r in live.results] == [run.cell.violations]


def test_show_live_rejudges_a_faulted_cell_with_what_was_injected(tmp_path: Path) -> None:
    run = _faulted_naive_run()
    write_live(tmp_path, "naive", ["python", "naive.py"], [run])
    assert read_live_cell(tmp_path, "naive", run.sequence).cell.violations == run.cell.violations
