"""A check of some sequences (-s, --tag, --dialect) adds to the program's live record: its cells replace
those of the same sequences, the others stay (so ``show OTHER --live NAME`` still finds them), and every
cell says when it was made; ``--fresh`` writes the run's cells alone, and a whole check writes them whole."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from bench.cli import cli
from tests.check.conftest import fake


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def check(catalogue: Path, reports: Path, *args: str, mode: str = "answer") -> Result:
    return invoke("check", "--sequences", str(catalogue), "--reports", str(reports), "--name", "mine", *args,
                  "--", *fake(mode))


def record(reports: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((reports / "live" / "mine.json").read_text(encoding="utf-8"))
    return data


def cells(reports: Path) -> dict[str, str]:
    return {c["sequence"]: c["outcome"] for c in record(reports)["cells"]}  # type: ignore[attr-defined]


def test_a_check_of_one_sequence_keeps_the_other_cells_of_a_whole_check(catalogue: Path, tmp_path: Path) -> None:
    reports = tmp_path / "r"
    assert check(catalogue, reports).exit_code == 1
    whole = record(reports)
    assert "made" not in whole  # one run made every cell: the record stays the same bytes run after run
    os.utime(reports / "live" / "mine.json", (0, 0))
    r = check(catalogue, reports, "-s", "answer-once")
    assert r.exit_code == 0, r.output
    assert "its 3 other cell(s) kept" in r.stderr
    assert sorted(cells(reports)) == ["answer-once", "answer-repeat", "call-then-answer", "truncated"]
    made = record(reports)["made"]
    assert isinstance(made, dict) and made["truncated"] == "1970-01-01T00:00:00Z"
    assert made["answer-once"] > "2026" and made["answer-once"] != made["truncated"]
    shown = invoke("show", "truncated", "--live", "mine", "--sequences", str(catalogue), "--reports", str(reports))
    assert shown.exit_code == 0, shown.output


EXITS = """
import os, sys
sys.path.insert(0, {programs!r})
from chat import post
post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
     {{"model": "m", "messages": [{{"role": "user", "content": "x"}}]}})
sys.exit(int(os.environ["MERGE_EXIT"]))
"""


def test_newer_cells_replace_older_ones_of_the_same_sequence(catalogue: Path, tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text(EXITS.format(programs=str(Path(fake()[1]).parent)), encoding="utf-8")
    reports = tmp_path / "r"

    def run(exit: str, *ids: str) -> None:
        args = [a for i in ids for a in ("-s", i)]
        r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--reports", str(reports), "--name",
                                     "mine", *args, "--", sys.executable, str(script)], env={"MERGE_EXIT": exit},
                               catch_exceptions=False)
        assert r.exit_code in (0, 1), r.output

    run("0", "answer-once", "truncated")
    run("4", "truncated")
    reasons = {c["sequence"]: c["reason"] for c in record(reports)["cells"]}  # type: ignore[attr-defined]
    assert reasons == {"answer-once": "exit 0", "truncated": "exit 4"}


def test_fresh_writes_the_runs_cells_alone(catalogue: Path, tmp_path: Path) -> None:
    reports = tmp_path / "r"
    check(catalogue, reports)
    assert check(catalogue, reports, "-s", "answer-once", "--fresh").exit_code == 0
    assert cells(reports) == {"answer-once": "stopped"} and "made" not in record(reports)


def test_a_record_made_by_another_command_is_replaced_and_the_run_says_so(catalogue: Path, tmp_path: Path) -> None:
    reports = tmp_path / "r"
    check(catalogue, reports, "-s", "truncated", mode="answer")
    r = check(catalogue, reports, "-s", "answer-once", mode="bad")
    assert "was made by another command" in r.stderr and "started afresh" in r.stderr
    assert list(cells(reports)) == ["answer-once"]
