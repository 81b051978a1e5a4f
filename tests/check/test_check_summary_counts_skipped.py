"""`stopbench check` counts the sequences it did not run in its printed summary (stdout), not only
on stderr: those of other dialects than --dialect, and those that script their tool results."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bench.catalogue.document import dump_sequence
from bench.cli import cli
from tests.check.conftest import ANSWER, fake, small_sequence


def test_the_summary_counts_sequences_left_out_by_dialect_and_by_scripted_results(catalogue: Path) -> None:
    call = {"id": "call_1", "name": "check_build", "arguments": "{}", "result": "42% built"}
    dump_sequence(small_sequence("polling", [{"finish": "tool_calls", "content": None, "tool_calls": [call]},
                                             ANSWER]), catalogue / "polling.yaml")
    for sid in ("claude-a", "claude-b"):
        dump_sequence(small_sequence(sid, [ANSWER], dialect="anthropic"), catalogue / f"{sid}.yaml")
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "--dialect", "openai-chat",
                                 "--", *fake("answer")], catch_exceptions=False)
    summary = r.stdout.rsplit("\n\n", 1)[-1]
    assert "not run: 3 sequence(s): 2 of another dialect than openai-chat, 1 scripting its tool results" \
        in summary, r.stdout


def test_nothing_left_out_adds_no_line(catalogue: Path) -> None:
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "-s", "answer-once",
                                 "--", *fake("answer")], catch_exceptions=False)
    assert "not run" not in r.output


def test_stdout_holds_no_time_so_two_runs_print_the_same(catalogue: Path) -> None:
    """The table and the summary are the verdict, the same on every run of a deterministic program; how
    long the run took goes to stderr."""
    runs = [CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "-s", "answer-once",
                                     "--", *fake("answer")], catch_exceptions=False) for _ in range(2)]
    assert "wall time" not in runs[0].stdout and "wall time" in runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
