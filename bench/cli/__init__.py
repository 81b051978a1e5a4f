"""The ``stopbench`` command line: run, show, accept, list, import, fuzz, serve, conform."""

from __future__ import annotations

import click

from bench.cli.accept import accept_cmd
from bench.cli.conform import conform_cmd
from bench.cli.fuzz import fuzz_cmd
from bench.cli.import_ import import_cmd
from bench.cli.list import list_cmd
from bench.cli.run import run_cmd
from bench.cli.serve import serve_cmd
from bench.cli.show import show_cmd
from bench.errors import UnusableInput


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def cli() -> None:
    """stopbench: replay model-response sequences through agent-loop termination predicates.

    Every sequence (sequences/*.yaml) is replayed through every predicate (predicates/*.py); each
    cell (sequence x predicate) is compared with its reviewed expectation (expected/*.yaml) and
    judged against the sequence's requirements.
    """


cli.add_command(run_cmd)
cli.add_command(show_cmd)
cli.add_command(accept_cmd)
cli.add_command(list_cmd)
cli.add_command(serve_cmd)
cli.add_command(conform_cmd)
cli.add_command(import_cmd)
cli.add_command(fuzz_cmd)


def main() -> None:
    """Entry point: an unusable input anywhere below ends the command with its one line and exit 2."""
    try:
        cli(standalone_mode=True)
    except UnusableInput as exc:  # raised outside click's own handling (e.g. while a report is written)
        click.echo(str(exc), err=True)
        raise SystemExit(2) from None
