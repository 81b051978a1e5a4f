"""What ``check`` says while it runs: on a terminal one line, rewritten as each run ends, with the runs
done and an estimate of the time left; off a terminal (CI, a pipe) nothing, its stderr being a log.
``-j`` defaults to the cores this process may run on."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from bench.check.report import ProgressLine
from bench.check.runner import LiveRun
from bench.cli import cli
from bench.engine.model import Cell
from tests.check.conftest import ANSWER, fake, small_sequence


def run_of(sid: str) -> LiveRun:
    seq = small_sequence(sid, [ANSWER])
    return LiveRun(seq, Cell(sid, "x@live", "stopped", ()), None, 0, (), 1.0)


def test_the_line_counts_the_runs_and_estimates_the_time_left_from_the_mean_so_far() -> None:
    written: list[str] = []
    line = ProgressLine(4, written.append, started=100.0, width=80)
    line("mine", run_of("a"), now=110.0)
    line("mine", run_of("b"), now=120.0)
    line.end()
    assert written[0].startswith("\r[1/4] 10 s, about 30 s left; mine@live a: stopped")
    assert written[1].startswith("\r[2/4] 20 s, about 20 s left; mine@live b: stopped")
    assert all(len(w) == 80 for w in written[:2]) and written[2] == "\n"


def test_off_a_terminal_check_prints_no_progress_and_runs_on_every_core(catalogue: Path) -> None:
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "--", *fake("answer")],
                           catch_exceptions=False)
    assert "[1/" not in r.stderr and "\r" not in r.stderr
    assert f"(-j {len(os.sched_getaffinity(0))})" in r.stderr
