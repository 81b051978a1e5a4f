"""Verdicts that rest on the wording fallback are said as guesses, never asserted as a certain run.

Two loops kept back from the bench (tests/check/programs/kept/) refuse calls whose arguments are not
JSON in their own words:

- refuse_in_own_words.py runs its own tools: its refusal is read by its wording. Pydantic's
  "1 validation error for Args ... not run" is a refusal the fallback knows (failed, so
  ``no_malformed_runs`` holds, but the pass rests on a guess); words it does not know read as a run,
  and the violation that follows is marked ``guess``, in the JSON, the table and ``show --live``,
  which prints the result text each call was judged from.
- refuse_before_bench_tools.py runs the bench's tools: under ``--bench-tools`` a refused call has
  no execution behind it and is failed, known ``executed``, even in a run where nothing ran at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.serve.results import REFUSALS, says_failed
from tests.helpers import ROOT

KEPT = Path(__file__).parent / "programs" / "kept"
HIDDEN = "chat-truncation-hidden-as-tool-calls"
"""Turn 0 calls write_file with arguments cut off mid-string (finish tool_calls); no_malformed_runs."""
FOREVER = "chat-length-cut-json-repeat"
"""Every turn a length turn with cut-off write_file arguments; no_truncated_runs, ok false, stops_within 6."""


def check(tmp_path: Path, program: str, seq: str, *flags: str) -> tuple[int, str, dict[str, Any]]:
    args = ["check", "--sequences", str(ROOT / "sequences"), "--reports", str(tmp_path), "--name", "kept",
            "-s", seq, *flags, "--", sys.executable, str(KEPT / program)]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    cells = json.loads((tmp_path / "live" / "kept.json").read_text(encoding="utf-8"))["cells"]
    return r.exit_code, r.output, cells[0]


def certain(cell: dict[str, Any]) -> list[str]:
    return [v["requirement"] for v in cell["violations"] if not v.get("guess")]


def test_pydantics_refusal_is_a_failed_call_and_the_pass_it_decides_is_said_to_be_a_guess(tmp_path: Path) -> None:
    code, out, cell = check(tmp_path, "refuse_in_own_words.py", HIDDEN)
    first = cell["decisions"][0]
    assert (first["failed"], first["run"], first["known"]) == (["write_file"], [], [[0, "wording"]])
    assert cell["violations"] == [] and code == 0, out
    shown = CliRunner().invoke(cli, ["show", HIDDEN, "--live", "kept", "--reports", str(tmp_path),
                                     "--sequences", str(ROOT / "sequences")])
    assert shown.exit_code == 0, shown.output
    assert 'result of call 0: "1 validation error for Args' in shown.output
    assert "(failed, by its wording, a guess)" in shown.output
    assert 'result of call 0: "done: write_file" (ran, by its wording, a guess)' in shown.output
    assert "verdict (a guess: a result read by its wording)" in shown.output


def test_a_refusal_in_words_the_fallback_does_not_know_breaks_nothing_for_certain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEPT_REFUSAL", "Nope: I will not write that.")
    code, out, cell = check(tmp_path, "refuse_in_own_words.py", HIDDEN)
    assert code == 1  # the exit status still says a requirement is broken; the summary says on a guess only
    assert cell["decisions"][0]["known"] == [[0, "wording"]]  # read as a run: a guess
    assert [v["requirement"] for v in cell["violations"]] == ["no_malformed_runs"]
    assert certain(cell) == []
    assert "(a guess: a result read by its wording)" in out
    assert "1 do not (0 capped, 0 crashed, 1 only on a guess" in out


def test_under_bench_tools_a_call_with_no_execution_behind_it_is_failed_not_guessed(tmp_path: Path) -> None:
    code, out, cell = check(tmp_path, "refuse_before_bench_tools.py", FOREVER, "--bench-tools")
    assert code == 0, out  # it gave up openly (ok false) within the requests allowed, running nothing cut off
    rounds = cell["decisions"][:-1]  # two refused rounds, then it gives up
    assert [d["known"] for d in rounds] == [[[0, "executed"]]] * 2
    assert [d["failed"] for d in rounds] == [["write_file"]] * 2
    assert "no_truncated_runs" not in [v["requirement"] for v in cell["violations"]], out


@pytest.mark.parametrize("text", [
    "1 validation error for Args\ncontent\n  Field required [type=missing]",
    "Encountered error: 2 validation errors for write_file\npath ...",
    "AI_InvalidToolInputError: Invalid input for tool web_search: AI_TypeValidationError: ...",
    "MCP error -32602: Input validation error: Invalid arguments for tool write_file: path: Required",
    "Error: the tool raised",
    "Encountered error: [Errno 2] No such file or directory: 'notes.md'",
])
def test_the_refusal_wordings_frameworks_produce_read_as_failed(text: str) -> None:
    assert says_failed(text)


@pytest.mark.parametrize("text", ["done: write_file", "wrote 12 lines", "the validation passed for all 3 files"])
def test_results_that_say_they_ran_read_as_run(text: str) -> None:
    assert not says_failed(text)


def test_every_learned_wording_cites_its_source() -> None:
    for pattern, source in REFUSALS:
        assert " L" in source and "/" in source, pattern.pattern


def test_the_page_and_the_json_lines_mark_a_guess_and_only_a_guess() -> None:
    from bench.engine.model import Cell, Violation
    from bench.golden.run import Result
    from bench.report.labels import cell_record
    from bench.report.page.data import cell_data
    cell = Cell("s", "kept@live", "stopped", (), "answered", True,
                violations=(Violation("no_malformed_runs", 1, "ran write_file", guess=True),
                            Violation("ok: false", 2, "success on a cut")))
    for data in (cell_record(Result(cell, "live")), cell_data(Result(cell, "live"), None, None, {})):
        assert [v.get("guess") for v in data["violations"]] == [True, None]
