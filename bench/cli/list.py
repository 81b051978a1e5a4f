"""``stopbench list``: the sequences and predicates, with their sources."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    Output,
    decision_timeout_option,
    load_inputs,
    no_entry_points_option,
    only_mine_option,
    predicates_option,
    sequences_option,
)
from bench.engine.discovery import Broken


@click.command("list")
@sequences_option
@predicates_option
@only_mine_option
@no_entry_points_option
@decision_timeout_option
def list_cmd(sequences_dir: Path, predicates_dir: Path, no_entry_points: bool) -> None:
    """List the sequences (id, kind, dialect, turns, source) and the predicates (cap, source).

    Exit status: 0 when everything loads, 1 when a predicate is broken (its cells would crash),
    2 when a sequence file is unusable. A closed pipe (``stopbench list | head``) is not an error.
    """
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points)
    out = Output()

    def echo(line: str) -> None:
        out.write(line.encode("utf-8") + b"\n")

    echo(f"sequences ({len(inputs.catalogue.sequences)}):")
    for s in inputs.catalogue.sequences:
        first = s.source.splitlines()[0]
        echo(f"  {s.id}  [{s.kind}, {s.dialect}, {len(s.turns)} turn(s), then {s.then}]  {s.title}")
        echo(f"      source: {first}")
    for problem in inputs.catalogue.problems:
        echo(f"  BAD {problem}")
    echo(f"predicates ({len(inputs.predicates)}):")
    for p in inputs.predicates:
        if isinstance(p, Broken):
            echo(f"  {p.name}  BROKEN: {p.error}")
            continue
        cap = "no cap" if p.max_steps is None else f"cap {p.max_steps} -> {p.cap.reason}, ok={p.cap.ok}"
        if p.cap_note:
            cap = f"{cap} (the port counts: {p.cap_note})" if p.max_steps is not None else p.cap_note
        echo(f"  {p.name}  [{cap}]  {p.description}")
        echo(f"      source: {p.source.splitlines()[0] if p.source else ''}")
    out.flush()
    if inputs.catalogue.problems:
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(EXIT_MISMATCH if any(isinstance(p, Broken) for p in inputs.predicates) else EXIT_OK)
