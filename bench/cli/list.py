"""``stopbench list``: the sequences and predicates, with their sources."""

from __future__ import annotations

from pathlib import Path

import click

from bench.cli._common import folder_options, load_inputs
from bench.discovery import Broken


@click.command("list")
@folder_options
def list_cmd(sequences_dir: Path, predicates_dir: Path, expected_dir: Path, reports_dir: Path,
             safety_cap: int, no_entry_points: bool) -> None:
    """List the sequences (id, kind, dialect, turns, source) and the predicates (cap, source)."""
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points)
    click.echo(f"sequences ({len(inputs.catalogue.sequences)}):")
    for s in inputs.catalogue.sequences:
        first = s.source.splitlines()[0]
        click.echo(f"  {s.id}  [{s.kind}, {s.dialect}, {len(s.turns)} turn(s), then {s.then}]  {s.title}")
        click.echo(f"      source: {first}")
    for problem in inputs.catalogue.problems:
        click.echo(f"  BAD {problem}")
    click.echo(f"predicates ({len(inputs.predicates)}):")
    for p in inputs.predicates:
        if isinstance(p, Broken):
            click.echo(f"  {p.name}  BROKEN: {p.error}")
            continue
        cap = "no cap" if p.max_steps is None else f"cap {p.max_steps} -> {p.cap.reason}, ok={p.cap.ok}"
        if p.cap_note:
            cap = f"{cap} (the port counts: {p.cap_note})" if p.max_steps is not None else p.cap_note
        click.echo(f"  {p.name}  [{cap}]  {p.description}")
        click.echo(f"      source: {p.source.splitlines()[0] if p.source else ''}")
