"""``stopbench init``: scaffold a project of your own beside the shipped catalogue.

Writes one sequence, one predicate, a pytest file that tests a loop through the plugin and a CI
workflow (:mod:`bench.init_templates`), all or none, and never over a file that exists: if any of
them is there, one line names it and nothing is written (exit 2).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path

import click

from bench.catalogue.files import display_path, write_all_or_nothing
from bench.cli._common import EXIT_BAD_INPUT, EXIT_OK
from bench.init_templates import FILES, WORKFLOW
from bench.init_templates.workflow import installed_source, render

NEXT = "stopbench pytest tests/test_my_loop.py"
"""The command init says to run next: pytest with the plugin in stopbench's own Python, so it works
under pipx as in a virtual environment (``stopbench pytest``)."""


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
def init_cmd(folder: Path) -> None:
    """Scaffold FOLDER (default: here) with a first sequence, a first predicate, a pytest file using
    stopbench's plugin and a GitHub Actions workflow that installs stopbench from where this copy came from;
    then `stopbench pytest tests/test_my_loop.py` runs the first test.

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
    texts = {path: source.joinpath(template).read_text(encoding="utf-8") for path, template in targets.items()}
    origin = installed_source()
    workflow = folder / FILES[WORKFLOW]
    texts[workflow] = render(texts[workflow], origin)
    made = _missing_folders(texts)
    try:
        write_all_or_nothing(texts)
    except BaseException:  # a full disk, Ctrl-C: no file was written, and no folder init made is left
        _remove_empty(made)
        raise
    for path in targets:
        click.echo(f"wrote {display_path(path)}", err=True)
    if origin.requirement is None:
        click.echo(f"note: {display_path(workflow)} needs STOPBENCH filled in: this stopbench came from "
                   f"{origin.origin}, which CI cannot reach (the file's comment says what to put)", err=True)
    click.echo(f"next: {NEXT} (your loop, served the sequences); stopbench run "
               "(every sequence through every predicate, yours included)", err=True)
    sys.exit(EXIT_OK)


def _missing_folders(paths: Iterable[Path]) -> list[Path]:
    """The folders the files at `paths` need that are not there yet, deepest first."""
    missing = {folder for path in paths for folder in [path.parent, *path.parent.parents] if not folder.exists()}
    return sorted(missing, key=lambda folder: len(folder.parts), reverse=True)


def _remove_empty(folders: list[Path]) -> None:
    """Remove each of `folders` (deepest first) that is empty: those init made, which nothing else filled."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
