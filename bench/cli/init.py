"""``stopbench init``: scaffold a project of your own beside the shipped catalogue.

Writes one sequence, one predicate, a pytest file that tests a loop through the plugin and a CI
workflow (:mod:`bench.init_templates`), all or none, and never over a file that exists: if any of
them is there, one line names it and nothing is written (exit 2).
"""

from __future__ import annotations

import sys
from importlib.resources import files
from pathlib import Path

import click

from bench.catalogue.files import display_path, write_all_or_nothing
from bench.cli._common import EXIT_BAD_INPUT, EXIT_OK
from bench.init_templates import FILES


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
def init_cmd(folder: Path) -> None:
    """Scaffold FOLDER (default: here) with a first sequence, a first predicate, a pytest file using
    stopbench's plugin and a GitHub Actions workflow; then `pytest` runs the first test.

    Exit status: 0 when every file was written; 2 when one of them exists already (nothing is
    written: init never overwrites) or cannot be written.
    """
    targets = {folder / dest: template for template, dest in FILES.items()}
    existing = [path for path in targets if path.exists()]
    if existing:
        click.echo(f"stopbench init: {display_path(existing[0])} exists; nothing written (init never overwrites"
                   f"{f', {len(existing) - 1} more exist' if len(existing) > 1 else ''})", err=True)
        sys.exit(EXIT_BAD_INPUT)
    source = files("bench.init_templates")
    write_all_or_nothing({path: source.joinpath(template).read_text(encoding="utf-8")
                          for path, template in targets.items()})
    for path in targets:
        click.echo(f"wrote {display_path(path)}", err=True)
    click.echo("next: pytest tests/test_my_loop.py (your loop, served the sequences); stopbench run "
               "(every sequence through every predicate, yours included)", err=True)
    sys.exit(EXIT_OK)
