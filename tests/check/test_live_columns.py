"""`stopbench run` shows the live records of reports/live/ (`stopbench check`) as `<name>@live` columns.

The records are written with bench.check's own writer from cells built here, not copied from any
output: a loop that answers seed000-talk-only at once (clean) and stops on the tool round of
seed000-tool-call-with-text without running its call (which drops the call its sequence requires
to be run), plus a cell for a sequence the catalogue no longer has.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from bench.check.report import write_live
from bench.check.runner import LiveRun
from bench.cli import cli
from bench.engine.model import Cell, Decision, Step, Violation
from bench.report.page.data import unfold
from tests.check.conftest import ANSWER, small_sequence
from tests.helpers import ROOT

PREDICATES = ("seed000_fixed", "seed000_finish")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seed 000 catalogue, two of its predicates with their golden files, and a live record."""
    shutil.copytree(ROOT / "sequences" / "seed000", tmp_path / "sequences" / "seed000")
    (tmp_path / "predicates").mkdir()
    (tmp_path / "expected").mkdir()
    for name in PREDICATES:
        shutil.copy(ROOT / "predicates" / f"{name}.py", tmp_path / "predicates")
        shutil.copy(ROOT / "expected" / f"{name}.yaml", tmp_path / "expected")
    monkeypatch.chdir(tmp_path)
    write_live(tmp_path / "reports", "mine", ["python", "mine.py"], [live_run(c) for c in cells()])
    return tmp_path


def stop_at_once(sequence: str, *, stored: tuple[Violation, ...] = ()) -> Cell:
    step = Step(1, 0, Decision("stop", "observed", reason="exit 0", ok=True))
    return Cell(sequence, "mine@live", "stopped", (step,), reason="exit 0", ok=True, violations=stored)


def cells() -> list[Cell]:
    # the stored violation is stale on purpose: run judges each cell again against require:
    return [stop_at_once("seed000-talk-only", stored=(Violation("ok", None, "stale"),)),
            stop_at_once("seed000-tool-call-with-text"), stop_at_once("a-sequence-since-removed")]


def live_run(cell: Cell) -> LiveRun:
    return LiveRun(small_sequence(cell.sequence, [ANSWER]), cell, None, 0, (), 0.0)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["run", "--no-entry-points", *args])


def table_cells(markdown: str, seq: str) -> dict[str, str]:
    lines = markdown.splitlines()
    header = [c.strip() for c in next(x for x in lines if x.startswith("| sequence")).strip("|").split("|")]
    row = [c.strip() for c in next(x for x in lines if x.startswith(f"| {seq} ")).strip("|").split("|")]
    return dict(zip(header, row, strict=True))


def test_a_live_record_is_a_column_after_the_predicates_in_the_decision_table(project: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.stderr  # live violations are stopbench check's verdict, not run's
    table = (project / "reports" / "decision-table.md").read_text(encoding="utf-8")
    header = next(x for x in table.splitlines() if x.startswith("| sequence"))
    assert [c.strip() for c in header.strip("|").split("|")][-1] == "mine@live"
    # dropped the call of turn 0: a requirement broken; no golden mark (never compared)
    assert table_cells(table, "seed000-tool-call-with-text")["mine@live"] == "✓stop@1 ⚠"
    assert table_cells(table, "seed000-talk-only")["mine@live"] == "✓stop@1"
    assert table_cells(table, "seed000-tool-tool-answer")["mine@live"] == ""
    golden = table.split("## Golden status", 1)[1].split("\n## ", 1)[0]
    assert "| mine@live" not in golden
    assert "`mine@live` 2 cells, 1 with violations" in golden
    assert "observed live" in table.split("## Requirement violations", 1)[0]
    assert "a-sequence-since-removed" in result.stderr and "left out" in result.stderr
    assert "mine@live: 2 cell(s) observed live, 1 breaking requirements" in result.stderr


def test_a_live_column_is_in_cells_csv_and_the_json_lines_with_golden_live(project: Path) -> None:
    result = run("--json")
    assert result.exit_code == 0, result.stderr
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    live = [r for r in records if r["predicate"] == "mine@live"]
    assert records[-2:] == live  # after every replayed cell
    assert [(r["sequence"], r["golden"]) for r in live] == [("seed000-talk-only", "live"),
                                                          ("seed000-tool-call-with-text", "live")]
    assert live[0]["violations"] == []  # judged again: the stale stored violation is gone
    assert "no_dropped_calls" in {v["requirement"] for v in live[1]["violations"]}
    with (project / "reports" / "cells.csv").open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["predicate"] == "mine@live"]
    assert [(r["sequence"], r["golden"]) for r in rows] == [("seed000-talk-only", "live"),
                                                           ("seed000-tool-call-with-text", "live")]
    assert "no_dropped_calls@1" in rows[1]["violations"]


def test_a_live_column_is_on_the_page_marked_live_without_a_golden_status(project: Path) -> None:
    assert run().exit_code == 0
    html = (project / "reports" / "index.html").read_text(encoding="utf-8")
    raw = html.split('<script type="application/json" id="stopbench-data">', 1)[1].split("</script>", 1)[0]
    data = unfold(json.loads(raw))
    assert [p["name"] for p in data["predicates"]] == [*sorted(PREDICATES), "mine@live"]
    assert data["predicates"][-1]["live"] is True
    cell = data["cells"]["seed000-tool-call-with-text\tmine@live"]
    assert cell["golden"] == "live" and cell["violations"]
    assert "seed000-tool-tool-answer\tmine@live" not in data["cells"]
    assert 'id="cell-seed000-tool-call-with-text--mine@live"' in html
    assert data["summary"]["rows"][-1]["live"] is True
    assert "— (observed live)" in html


def test_reports_with_a_live_column_are_byte_identical_across_runs(project: Path) -> None:
    run()
    first = {p.name: p.read_bytes() for p in (project / "reports").iterdir() if p.is_file()}
    run()
    assert first == {p.name: p.read_bytes() for p in (project / "reports").iterdir() if p.is_file()}


def test_a_live_cell_that_does_not_fit_its_sequence_as_it_is_now_is_left_out_and_noted(project: Path) -> None:
    # read_file run on seed000-tool-tool-answer's final answer turn (2), which calls no tool: the
    # sequence changed since the check
    turn2 = Step(1, 2, Decision("continue", "observed"), ("read_file",))
    stale = Cell("seed000-tool-tool-answer", "old@live", "running", (turn2,), tools_run=("read_file",))
    beyond = Cell("seed000-talk-only", "old@live", "running", (Step(1, 5, Decision("continue", "observed")),))
    write_live(project / "reports", "old", ["old"], [live_run(stale), live_run(beyond)])
    result = run()
    assert result.exit_code == 0, result.stderr
    assert ("2 cell(s) do not fit their sequence as it is now (changed since the check; run stopbench check "
            "again), left out: seed000-talk-only, seed000-tool-tool-answer") in result.stderr
    assert "old@live" not in (project / "reports" / "decision-table.md").read_text(encoding="utf-8")


def test_a_malformed_live_record_is_one_line_naming_it_exit_2_and_nothing_written(project: Path) -> None:
    (project / "reports" / "live" / "broken.json").write_text('{"column": "broken@live"', encoding="utf-8")
    result = run("--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert "broken.json" in line and "Traceback" not in result.stderr
    assert not (project / "reports" / "decision-table.md").exists()


def test_a_live_cell_with_a_field_the_reports_cannot_show_names_the_file_and_field(project: Path) -> None:
    path = project / "reports" / "live" / "mine.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["cells"][1]["outcome"] = "finished"
    path.write_text(json.dumps(record), encoding="utf-8")
    result = run()
    assert result.exit_code == 2
    assert "mine.json: cells[1].outcome: 'finished' is not one of" in result.stderr
