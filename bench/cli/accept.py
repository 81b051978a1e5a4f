"""``stopbench accept``: write reviewed cells into expected/<predicate>.yaml, atomically."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli._common import EXIT_BAD_INPUT, folder_options, load_inputs
from bench.discovery import Broken
from bench.golden import GoldenError, accept
from bench.replay import replay
from bench.report import label


@click.command("accept")
@click.argument("predicates", nargs=-1, required=True)
@folder_options
@click.option("--sequence", "-s", "only_sequences", multiple=True,
              help="Only this sequence's cell (repeatable).")
@click.option("--replace", is_flag=True,
              help="Also overwrite expectations the replay no longer matches (default: only add new ones).")
@click.option("--derived", help="The golden file's header: how these expectations were derived "
                                "(required when the file is new).")
def accept_cmd(predicates: tuple[str, ...], sequences_dir: Path, predicates_dir: Path, expected_dir: Path,
               reports_dir: Path, safety_cap: int, no_entry_points: bool, only_sequences: tuple[str, ...],
               replace: bool, derived: str | None) -> None:
    """Write the current cells of PREDICATES as reviewed expectations.

    Run this only after looking at the cells (`stopbench show`, reports/decision-table.md): it
    records what the bench does now as what it should do. By default only cells with no
    expectation are written; --replace also overwrites mismatching ones.
    """
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points, predicates)
    if inputs.catalogue.problems:
        sys.exit(EXIT_BAD_INPUT)
    wanted = set(only_sequences) or None
    for pred in inputs.predicates:
        if isinstance(pred, Broken):
            click.echo(f"{pred.name}: not accepted, it did not load", err=True)
            continue
        cells = [replay(seq, pred, safety_cap) for seq in inputs.catalogue.sequences]
        try:
            changed = accept(expected_dir, pred.name, cells, derived=derived,
                             mode="all" if replace else "new", sequences=wanted)
        except GoldenError as exc:
            click.echo(str(exc), err=True)
            sys.exit(EXIT_BAD_INPUT)
        by_seq = {c.sequence: c for c in cells}
        for seq in changed:
            click.echo(f"{pred.name}: accepted {seq}: {label(by_seq[seq])}")
        click.echo(f"{pred.name}: {len(changed)} cell(s) written to {expected_dir / (pred.name + '.yaml')}")
