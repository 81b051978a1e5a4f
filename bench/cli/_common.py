"""Options shared by the subcommands, and loading what they point at."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from bench.catalogue import Catalogue, load_catalogue
from bench.discovery import Broken, Loaded, discover
from bench.replay import DEFAULT_SAFETY_CAP

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2


def folder_options(fn: F) -> F:
    """--sequences, --predicates, --expected, --reports, --safety-cap, --no-entry-points."""
    opts = [
        click.option("--sequences", "sequences_dir", type=click.Path(path_type=Path), default=Path("sequences"),
                     show_default=True, help="Folder of sequence YAML files (sub-folders included)."),
        click.option("--predicates", "predicates_dir", type=click.Path(path_type=Path),
                     default=Path("predicates"), show_default=True,
                     help="Folder of predicate files, one column per file."),
        click.option("--expected", "expected_dir", type=click.Path(path_type=Path), default=Path("expected"),
                     show_default=True, help="Folder of golden files, expected/<predicate>.yaml."),
        click.option("--reports", "reports_dir", type=click.Path(path_type=Path), default=Path("reports"),
                     show_default=True, help="Folder the reports are written to."),
        click.option("--safety-cap", type=click.IntRange(min=1), default=DEFAULT_SAFETY_CAP, show_default=True,
                     help="Requests after which the bench ends a replay as 'capped'."),
        click.option("--no-entry-points", is_flag=True,
                     help="Only the predicates folder, not predicates from installed packages."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


@dataclass(slots=True)
class Inputs:
    catalogue: Catalogue
    predicates: list[Loaded]


def load_inputs(sequences_dir: Path, predicates_dir: Path, no_entry_points: bool,
                only: tuple[str, ...] = ()) -> Inputs:
    """Load the catalogue and predicates, printing every problem as one line on stderr."""
    cat = load_catalogue(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    folder = predicates_dir if predicates_dir.is_dir() else None
    if folder is None:
        click.echo(f"note: no predicates folder at {predicates_dir}", err=True)
    preds = discover(folder, entry_points_too=not no_entry_points)
    if only:
        names = {p.name for p in preds}
        unknown = [n for n in only if n not in names]
        if unknown:
            raise click.UsageError(f"no predicate named {', '.join(unknown)}; have {', '.join(sorted(names))}")
        preds = [p for p in preds if p.name in only]
    for p in preds:
        if isinstance(p, Broken):
            click.echo(f"broken predicate: {p.origin}: {p.error} (its cells are marked crashed)", err=True)
    return Inputs(cat, preds)
