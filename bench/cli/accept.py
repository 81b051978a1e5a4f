"""``stopbench accept``: write reviewed cells into expected/<predicate>.yaml, atomically.

The golden files are read, planned and written under the folder's write lock
(:func:`bench.catalogue.files.folder_lock`): two accepts into one file (different sequences) take
turns, the second reading what the first wrote, so neither's cells are lost.

Every file is planned first (:func:`bench.golden.expected.plan_accept`); only when every named predicate
can be accepted is anything written, so a refused header or a missing basis leaves all files as
they were. Exit 0 when done, 1 when a crashed cell was asked for (it is never stored), 2 when an
input is unusable (an unknown sequence, a predicate that does not load, a bad golden file): the
:class:`~bench.errors.UnusableInput` it raises is printed as one line by the command group.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.catalogue.files import folder_lock
from bench.cli._common import EXIT_BAD_INPUT, EXIT_MISMATCH, folder_options, load_inputs
from bench.engine.discovery import Broken
from bench.engine.model import Cell
from bench.errors import UnusableInput
from bench.golden.expected import BASES, Accepted, AcceptMode, Basis, plan_accept
from bench.golden.run import cells as replay_cells
from bench.report.labels import label


@click.command("accept")
@click.argument("predicates", nargs=-1, required=True)
@folder_options
@click.option("--sequence", "-s", "only_sequences", multiple=True,
              help="Only this sequence's cell (repeatable).")
@click.option("--replace", is_flag=True,
              help="Also overwrite expectations the replay no longer matches (default: only add new ones).")
@click.option("--basis", type=click.Choice(BASES), default=None,
              help="What the written cells rest on: source (the pinned source lines), observed (driving the "
                   "original loop) or rule (the predicate is its own rule). Required for new cells; a "
                   "replaced cell keeps its basis unless this is given.")
@click.option("--derived", help="The golden file's header: how these expectations were derived "
                                "(required when the file is new).")
@click.option("--replace-header", is_flag=True,
              help="Let --derived replace the header of an existing golden file.")
@click.option("--prune", is_flag=True,
              help="Remove expectations whose sequence is no longer in the catalogue.")
@click.option("--note", default=None,
              help="The written cells' note: what the cell rests on in words (for observed: what driving the "
                   "original showed). A replaced cell keeps its note unless this is given.")
def accept_cmd(predicates: tuple[str, ...], sequences_dir: Path, predicates_dir: Path, expected_dir: Path,
               safety_cap: int, no_entry_points: bool, only_sequences: tuple[str, ...],
               replace: bool, basis: Basis | None, derived: str | None, replace_header: bool,
               prune: bool, note: str | None) -> None:
    """Write the current cells of PREDICATES as reviewed expectations.

    Run this only after looking at the cells (`stopbench show SEQ -p PRED`): it records what the
    bench does now as what it should do. By default only cells with no expectation are written;
    --replace also overwrites mismatching ones. A crashed cell is never written (exit 1).
    """
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points, predicates)
    if inputs.catalogue.problems:
        sys.exit(EXIT_BAD_INPUT)
    known = {s.id for s in inputs.catalogue.sequences}
    unknown = [s for s in dict.fromkeys(only_sequences) if s not in known]
    if unknown:
        raise UnusableInput(f"--sequence: no sequence {', '.join(unknown)} in {sequences_dir} "
                            "(stopbench list shows the ids)")
    broken = [p.name for p in inputs.predicates if isinstance(p, Broken)]
    if broken:
        raise UnusableInput(f"{', '.join(broken)}: not accepted, it did not load (nothing written)")
    wanted = set(only_sequences) or None
    chosen = [s for s in inputs.catalogue.sequences if wanted is None or s.id in wanted]
    loaded = [p for p in inputs.predicates if not isinstance(p, Broken)]
    by_predicate: dict[str, list[Cell]] = {p.name: [] for p in loaded}
    for row in replay_cells(chosen, list(loaded), safety_cap):  # each predicate sees the sequence untouched
        for cell in row:
            by_predicate[cell.predicate].append(cell)
    with folder_lock(expected_dir):  # read, plan and write under the lock: a concurrent accept's cells stay
        refused = _plan_and_write(expected_dir, by_predicate, derived=derived, replace_header=replace_header,
                                  mode="all" if replace else "new", sequences=wanted, basis=basis,
                                  keep_only=known if prune else None, note=note)
    sys.exit(EXIT_MISMATCH if refused else 0)


def _plan_and_write(expected_dir: Path, by_predicate: dict[str, list[Cell]], *, derived: str | None,
                    replace_header: bool, mode: AcceptMode, sequences: set[str] | None, basis: Basis | None,
                    keep_only: set[str] | None, note: str | None) -> bool:
    """Plan every golden file, then write them and say what was written; whether a cell was refused."""
    plans: list[tuple[str, Accepted, dict[str, str]]] = []
    for name, cells in by_predicate.items():
        plan = plan_accept(expected_dir, name, cells, derived=derived, replace_header=replace_header, mode=mode,
                           sequences=sequences, basis=basis, keep_only=keep_only, note=note)
        plans.append((name, plan, {c.sequence: label(c) for c in cells}))
    refused = False
    for name, plan, labels in plans:
        plan.write()
        for seq in plan.added:
            click.echo(f"{name}: added {seq}: {labels[seq]}")
        for seq in plan.replaced:
            click.echo(f"{name}: replaced {seq}: {labels[seq]}")
        for seq in plan.pruned:
            click.echo(f"{name}: pruned {seq} (no such sequence)")
        for line in plan.refused:
            click.echo(line, err=True)
            refused = True
        n = len(plan.added) + len(plan.replaced)
        what = f"{n} cell(s) written" + (f", {len(plan.pruned)} pruned" if plan.pruned else "")
        what += ", header written" if plan.header else ""
        click.echo(f"{name}: {what} in {plan.path}" if plan.text is not None else f"{name}: {plan.path} unchanged")
    return refused
