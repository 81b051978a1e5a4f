"""``-j/--jobs`` is one option for every command that runs things side by side (check, conform, scorecard)."""

from __future__ import annotations

import click
from click.testing import CliRunner

from bench.cli import check, conform, scorecard
from bench.cli._common import jobs_option


@click.command()
@jobs_option("runs side by side")
def _echo(jobs: int) -> None:
    click.echo(jobs)


def test_jobs_takes_either_flag_defaults_to_one_and_refuses_zero() -> None:
    runner = CliRunner()
    assert runner.invoke(_echo, []).output == "1\n"
    assert runner.invoke(_echo, ["-j", "3"]).output == "3\n"
    assert runner.invoke(_echo, ["--jobs", "4"]).output == "4\n"
    refused = runner.invoke(_echo, ["-j", "0"])
    assert refused.exit_code == 2 and "0 is not in the range x>=1" in refused.output


def test_the_commands_that_run_side_by_side_share_it() -> None:
    commands = [check.check_cmd, conform.conform_cmd,
                *(c for c in scorecard.scorecard_cmd.commands.values() if isinstance(c, click.Command))]
    jobs = [p for c in commands for p in c.params if p.name == "jobs"]
    assert len(jobs) >= 4
    assert {(tuple(p.opts), str(p.type)) for p in jobs} == {(("-j", "--jobs"), "<IntRange x>=1>")}
