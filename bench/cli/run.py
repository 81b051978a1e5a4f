"""``stopbench run``: replay everything, write the reports, compare with the golden files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli._common import (
    EXIT_BAD_INPUT,
    Inputs,
    Output,
    Progress,
    folder_options,
    junit_option,
    load_expected,
    load_inputs,
    only_predicates_option,
    quiet_option,
    reports_option,
    verbose_option,
)
from bench.engine.predicate import Predicate
from bench.golden.expected import Golden
from bench.golden.run import Result, run
from bench.report.coverage import rule_coverage, summary_lines
from bench.report.labels import json_line
from bench.report.live import LiveColumns, live_columns, live_summary_lines
from bench.report.summary import Summary, summarise
from bench.report.write import write_reports


@click.command("run")
@folder_options
@reports_option
@click.option("--json", "as_json", is_flag=True,
              help="Also print one JSON object per cell on stdout (messages go to stderr).")
@only_predicates_option
@click.option("--no-reports", is_flag=True, help="Do not write the reports folder.")
@click.option("--strict", is_flag=True, help="Unreviewed cells fail the run (exit 1), as in CI.")
@click.option("--fail-on-violations", is_flag=True,
              help="Cells that break a requirement of their sequence fail the run (exit 1).")
@junit_option
@quiet_option
@verbose_option
def run_cmd(sequences_dir: Path, predicates_dir: Path, expected_dir: Path, reports_dir: Path,
            safety_cap: int, no_entry_points: bool, as_json: bool, only: tuple[str, ...],
            no_reports: bool, strict: bool, fail_on_violations: bool, junit_path: Path | None, quiet: bool,
            verbose: bool) -> None:
    """Replay every sequence through every predicate and compare with expected/.

    Live records in REPORTS/live/ (written by stopbench check) are shown as <name>@live columns
    after the predicates: judged against each sequence's require:, never compared with a golden
    file, and not part of the exit status.

    Exit status: 0 when every reviewed cell matches its expectation and none crashed; 1 on a
    mismatch or a crashed cell (with --strict also an unreviewed cell, with --fail-on-violations
    also a requirement violation); 2 when an input is unusable (a sequence or golden file, a
    folder given that is missing or empty, a malformed live record), and then the reports are left
    as they were.
    """
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points, only)
    if inputs.catalogue.problems:
        click.echo(f"{len(inputs.catalogue.sequences)} sequence file(s) fine, {len(inputs.catalogue.problems)} "
                   "file(s) unusable; nothing replayed", err=True)
        sys.exit(EXIT_BAD_INPUT)
    golden = load_expected(expected_dir)
    sequences = inputs.catalogue.sequences
    live = live_columns(reports_dir, sequences)  # <name>@live columns (stopbench check), after the predicates
    for note in live.notes:
        click.echo(note, err=True)
    results = _replay(inputs, golden, safety_cap, live, as_json=as_json, quiet=quiet)
    seq_ids = [s.id for s in sequences]
    if not no_reports:
        titles = {s.id: s.title for s in sequences}
        for path in write_reports(reports_dir, results + live.results, seq_ids,
                                  [p.name for p in inputs.predicates] + live.columns, titles,
                                  catalogue=sequences, loaded=inputs.predicates, golden=golden):
            if not quiet:
                click.echo(f"wrote {path}", err=True)
    if junit_path is not None:  # the predicates' cells; live columns are check's to report
        from bench.report.junit import run_case, write_junit
        write_junit(junit_path, "stopbench run", (run_case(r, strict=strict, fail_on_violations=fail_on_violations)
                                                  for r in results))
        if not quiet:
            click.echo(f"wrote {junit_path}", err=True)
    own = sequences_dir.resolve() != Path("sequences").resolve()
    summary = summarise(results, golden, set(seq_ids), own_catalogue=str(sequences_dir) if own else None,
                        loaded=None if only else {p.name for p in inputs.predicates})
    for line in _verdict_lines(summary, inputs, results, live, verbose=verbose, quiet=quiet):
        click.echo(line, err=True)
    sys.exit(summary.exit_status(strict=strict, fail_on_violations=fail_on_violations))


def _replay(inputs: Inputs, golden: Golden, safety_cap: int, live: LiveColumns, *, as_json: bool,
            quiet: bool) -> list[Result]:
    """Every cell of the catalogue by every predicate (a progress bar on a terminal unless `quiet`);
    with `as_json` each printed as a JSON line as it comes, then the live columns' cells."""
    results: list[Result] = []
    out = Output() if as_json else None
    progress = Progress(len(inputs.catalogue.sequences) * len(inputs.predicates), "replaying", quiet=quiet)
    try:
        for result in run(inputs.catalogue.sequences, inputs.predicates, golden, safety_cap):
            results.append(result)
            if out is not None:
                out.write(json_line(result))
            progress.advance()
    finally:
        progress.close()
    if out is not None:
        for result in live.results:
            out.write(json_line(result))
        out.flush()
    return results


def _verdict_lines(summary: Summary, inputs: Inputs, results: list[Result], live: LiveColumns, *, verbose: bool,
                   quiet: bool) -> list[str]:
    """The summary's lines, with the rules' coverage and the live columns' lines before the verdict
    line (not with `quiet`)."""
    lines = summary.lines(verbose=verbose, quiet=quiet)
    if not quiet:  # rule coverage (bench.report.coverage), before the verdict line
        loaded = [p for p in inputs.predicates if isinstance(p, Predicate)]
        coverage = rule_coverage(loaded, [r.cell for r in results])
        lines[-1:-1] = ["rule coverage:", *("  " + c for c in summary_lines(coverage)), *live_summary_lines(live)]
    return lines
