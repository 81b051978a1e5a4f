"""``stopbench run``: replay everything, write the reports, compare with the golden files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli._common import EXIT_BAD_INPUT, EXIT_MISMATCH, EXIT_OK, folder_options, load_inputs
from bench.golden import load_golden
from bench.report import json_line, write_reports
from bench.runner import Result, run


@click.command("run")
@folder_options
@click.option("--json", "as_json", is_flag=True,
              help="Also print one JSON object per cell on stdout (messages go to stderr).")
@click.option("--predicate", "-p", "only", multiple=True, help="Only this predicate (repeatable).")
@click.option("--no-reports", is_flag=True, help="Do not write the reports folder.")
def run_cmd(sequences_dir: Path, predicates_dir: Path, expected_dir: Path, reports_dir: Path,
            safety_cap: int, no_entry_points: bool, as_json: bool, only: tuple[str, ...],
            no_reports: bool) -> None:
    """Replay every sequence through every predicate and compare with expected/.

    Exit status: 0 when every reviewed cell matches its expectation, 1 on a mismatch, 2 when an
    input (a sequence or golden file) is unusable. Cells with no expectation are listed as
    unreviewed: not a failure, but accept them with `stopbench accept` once you have looked.
    """
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points, only)
    golden = load_golden(expected_dir)
    for problem in golden.problems:
        click.echo(f"bad golden file: {problem}", err=True)
    if inputs.catalogue.problems or golden.problems:
        n = len(inputs.catalogue.problems) + len(golden.problems)
        click.echo(f"{len(inputs.catalogue.sequences)} sequence file(s) fine, {n} file(s) unusable; "
                   "nothing replayed", err=True)
        sys.exit(EXIT_BAD_INPUT)

    results: list[Result] = []
    out = sys.stdout.buffer
    for result in run(inputs.catalogue.sequences, inputs.predicates, golden, safety_cap):
        results.append(result)
        if as_json:
            out.write(json_line(result))
    if as_json:
        out.flush()

    seq_ids = [s.id for s in inputs.catalogue.sequences]
    pred_names = [p.name for p in inputs.predicates]
    if not no_reports:
        titles = {s.id: s.title for s in inputs.catalogue.sequences}
        for path in write_reports(reports_dir, results, seq_ids, pred_names, titles,
                                  catalogue=inputs.catalogue.sequences, loaded=inputs.predicates):
            click.echo(f"wrote {path}", err=True)
    sys.exit(summarise(results, golden_names=set(golden.files), seq_ids=set(seq_ids), known_preds=pred_names,
                       golden=golden))


def summarise(results: list[Result], *, golden_names: set[str], seq_ids: set[str], known_preds: list[str],
              golden: object) -> int:
    """Print mismatches, crashes, violations and unreviewed cells; return the exit status."""
    def echo(msg: str = "") -> None:
        click.echo(msg, err=True)

    mismatches = [r for r in results if r.status == "mismatch"]
    for r in mismatches:
        echo(str(r.mismatch))
    crashed = [r.cell for r in results if r.cell.outcome == "crashed"]
    for c in crashed:
        echo(f"CRASHED {c.sequence} x {c.predicate}: {c.error}")
    violations = [(r.cell, v) for r in results for v in r.cell.violations]
    if violations:
        echo(f"requirement violations ({len(violations)}):")
        for c, v in violations:
            step = f" at step {v.step}" if v.step is not None else ""
            echo(f"  {c.predicate} on {c.sequence}: {v.requirement}{step}: {v.detail}")
    unreviewed: dict[str, list[str]] = {}
    for r in results:
        if r.status == "unreviewed":
            unreviewed.setdefault(r.cell.predicate, []).append(r.cell.sequence)
    if unreviewed:
        total = sum(len(v) for v in unreviewed.values())
        echo(f"UNREVIEWED: {total} cell(s) have no expectation in expected/ "
             "(look at them with `stopbench show`, then `stopbench accept PREDICATE`):")
        for pred, seqs in sorted(unreviewed.items()):
            more = f" ... (+{len(seqs) - 8})" if len(seqs) > 8 else ""
            echo(f"  {pred}: {', '.join(seqs[:8])}{more}")
    stale = _stale(golden, seq_ids, set(known_preds))
    for line in stale:
        echo(f"unused expectation: {line}")
    matched = sum(r.status == "match" for r in results)
    echo(f"{len(results)} cells: {matched} match, {len(mismatches)} mismatch, "
         f"{sum(len(v) for v in unreviewed.values())} unreviewed, {len(crashed)} crashed, "
         f"{len(violations)} requirement violation(s)")
    return EXIT_MISMATCH if mismatches else EXIT_OK


def _stale(golden: object, seq_ids: set[str], preds: set[str]) -> list[str]:
    from bench.golden import Golden

    assert isinstance(golden, Golden)
    out = []
    for name, gf in sorted(golden.files.items()):
        if name not in preds:
            continue
        out += [f"{name}: {seq} (no such sequence)" for seq in sorted(gf.cells) if seq not in seq_ids]
    return out
