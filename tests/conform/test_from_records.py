"""`stopbench conform --from-records`: conformance.md rebuilt from the committed records, driving
nothing, so records driven in parts (one loop here, another there) make one report."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from bench.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _reports_copy(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "reports" / "conformance", reports / "conformance")
    return reports


def _rebuild(reports: Path) -> str:
    result = CliRunner().invoke(cli, ["conform", "--from-records", "--reports", str(reports),
                                       "--sequences", str(ROOT / "sequences"),
                                       "--predicates", str(ROOT / "predicates")])
    assert result.exit_code == 0, result.output
    return (reports / "conformance.md").read_text(encoding="utf-8")


def test_the_committed_conformance_report_is_what_the_committed_records_say(tmp_path: Path) -> None:
    committed = (ROOT / "reports" / "conformance.md").read_text(encoding="utf-8")
    assert _rebuild(_reports_copy(tmp_path)) == committed, (
        "reports/conformance.md is stale: `stopbench conform --from-records` rebuilds it from the records")


def test_a_changed_record_changes_the_rebuilt_report_and_drives_nothing(tmp_path: Path) -> None:
    reports = _reports_copy(tmp_path)
    record = reports / "conformance" / "pi.json"
    text = record.read_text(encoding="utf-8")
    assert '"version"' in text
    before = _rebuild(reports)
    record.unlink()
    after = _rebuild(reports)
    pi_column = before.splitlines()[4].split(" | ").index("pi status")

    def pi_statuses(md: str) -> set[str]:
        rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| ") and " | " in line]
        return {row[pi_column].strip(" |") for row in rows[2:] if len(row) > pi_column}

    assert "not run (no record)" not in pi_statuses(before)
    assert pi_statuses(after) == {"not run (no record)"}
    assert not (reports / "conformance" / "pi.json").exists(), "a rebuild drives nothing and writes no record"
