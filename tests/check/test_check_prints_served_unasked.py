"""A step the server served otherwise than the sequence says (tool calls withheld from a request that
offered no tools) shows in check's row and in a line of its own below the table."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bench.cli import cli
from tests.check.conftest import fake


def test_calls_withheld_from_a_request_without_tools_show_in_the_row_and_below(catalogue: Path) -> None:
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "-s", "call-then-answer",
                                 "--", *fake("answer")], catch_exceptions=False)
    assert "| call-then-answer | stop:answered@1 ok [] (step 1: tool calls withheld)" in r.stdout, r.stdout
    assert "fake_loop@live call-then-answer: step 1: tool calls withheld: the request offered no tools" in r.stdout
