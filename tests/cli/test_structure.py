"""The command line's structure: subcommands imported lazily, `--help` and `--version`, unknown commands."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import click
from click.testing import CliRunner

from bench.cli import COMMANDS, cli, load_command
from tests.helpers import ROOT

HEAVY = ("pandas", "hypothesis", "starlette", "uvicorn", "tabulate", "bench.fuzz", "bench.report.write")


def test_help_lists_every_subcommand_without_importing_any_of_them() -> None:
    probe = ("import sys\nfrom bench.cli import cli\n"
             "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
             f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
             "print('CLI', sorted(m for m in sys.modules if m.startswith('bench.cli.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "LOADED []" in out and "CLI []" in out, out
    for name, (_, short) in COMMANDS.items():
        assert any(line.split()[:1] == [name] for line in out.splitlines()), f"{name} is not listed:\n{out}"
        assert short.split()[0] in out


def test_every_row_of_the_command_table_loads_the_command_of_that_name() -> None:
    for name in COMMANDS:
        cmd = load_command(name)
        assert isinstance(cmd, click.Command) and cmd.name == name


def test_a_subcommand_runs_through_the_lazy_group() -> None:
    result = CliRunner().invoke(cli, ["fuzz", "--help"])
    assert result.exit_code == 0 and "Usage: cli fuzz [OPTIONS]" in result.output


def test_version_is_the_installed_package_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.output == f"stopbench {version('stopbench')}\n"


def test_an_unknown_subcommand_is_a_usage_error_with_exit_2() -> None:
    result = CliRunner().invoke(cli, ["nonsense"])
    assert result.exit_code == 2 and "No such command 'nonsense'" in result.output
