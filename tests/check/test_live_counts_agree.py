"""`stopbench run` counts a live column's failing cells as `stopbench check` does: a cell breaks
requirements or has no verdict (crashed), so the two never give different totals for one record."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.check.report import write_live
from bench.check.runner import LiveRun
from bench.cli import cli
from bench.engine.model import Cell, Decision, Step
from tests.check.conftest import ANSWER, small_sequence
from tests.helpers import ROOT


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "sequences" / "seed000", tmp_path / "sequences" / "seed000")
    (tmp_path / "predicates").mkdir()
    (tmp_path / "expected").mkdir()
    shutil.copy(ROOT / "predicates" / "seed000_fixed.py", tmp_path / "predicates")
    shutil.copy(ROOT / "expected" / "seed000_fixed.yaml", tmp_path / "expected")
    monkeypatch.chdir(tmp_path)
    stop = Step(1, 0, Decision("stop", "observed", reason="exit 0", ok=True))
    cells = [Cell("seed000-talk-only", "mine@live", "stopped", (stop,), reason="exit 0", ok=True),
             Cell("seed000-tool-call-with-text", "mine@live", "stopped", (stop,), reason="exit 0", ok=True),
             Cell("seed000-tool-tool-answer", "mine@live", "crashed", (), error="still running after 2 s; killed")]
    write_live(tmp_path / "reports", "mine", ["python", "mine.py"],
               [LiveRun(small_sequence(c.sequence, [ANSWER]), c, None, None, (), 0.0) for c in cells])
    return tmp_path


def test_run_counts_a_crashed_live_cell_as_check_does(project: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "--no-entry-points"])
    assert result.exit_code == 0, result.stderr
    assert "mine@live: 3 cell(s) observed live, 1 breaking requirements, 1 crashed (no verdict)" in result.stderr
    table = (project / "reports" / "decision-table.md").read_text(encoding="utf-8")
    assert "`mine@live` 3 cells, 1 with violations, 1 crashed (no verdict)" in table
