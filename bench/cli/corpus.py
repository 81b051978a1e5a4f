"""``stopbench corpus``: stream recorded traces through every predicate and write what they show."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from bench.catalogue.shipped import shipped_folder
from bench.cli._common import (
    decision_timeout_option,
    given,
    no_entry_points_option,
    not_empty_path,
    only_predicates_option,
    predicates_option,
    quiet_option,
    safety_cap_option,
)
from bench.corpus.aggregate import FINDINGS, Partial
from bench.corpus.output import write_report
from bench.corpus.run import Job, run_dask, run_local
from bench.corpus.sources import FORMATS, SHARD_BYTES, SUFFIXES, plan
from bench.errors import UnusableInput


@click.command("corpus")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(), callback=not_empty_path,
              help="Folder for the report: cells, findings, edge_cases (.parquet, .csv) and index.html.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="The input format of every file (auto: decided per file from its first bytes).")
@click.option("--dask", "dask", metavar="ADDRESS",
              help="Spread the shards over a Dask cluster: a scheduler address (tcp://host:8786), or 'local' "
                   "for a cluster of --workers processes on this machine.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Worker processes of --dask local.")
@click.option("--shard-bytes", type=click.IntRange(min=1), default=SHARD_BYTES, show_default=True,
              help="Bytes of a JSON-lines file per shard (a Parquet shard is 4 row groups, an importer's file one).")
@predicates_option
@no_entry_points_option
@only_predicates_option
@safety_cap_option
@quiet_option
@decision_timeout_option
def corpus_cmd(paths: tuple[Path, ...], out: Path, fmt: str, dask: str | None, workers: int, shard_bytes: int,
               predicates_dir: Path,
               no_entry_points: bool, only: tuple[str, ...], safety_cap: int, quiet: bool) -> None:
    """Replay a corpus of recorded traces (PATH: files or folders) through every predicate.

    Inputs: JSON lines with one sequence per line in the catalogue's format (plus id, and optionally
    provider and model), the same as Parquet, or what the production importers read (OpenTelemetry
    GenAI spans, Claude Code session logs, Codex rollout files). Everything is streamed: a sequence
    is decoded, decided and dropped, so memory does not grow with the corpus.

    Writes, per predicate, cells by outcome and the findings a recorded trace supports (with counts,
    rates and example ids), and the frequency of every edge case by provider and model, as Parquet,
    CSV and index.html in OUT, all or nothing.

    Exit status: 0 done; 1 done, but a predicate crashed on some cells (or did not load); 2 an input
    it cannot use (one line naming the file, the line and the field), and then nothing is written.

    Predicates: --predicates, else ./predicates, else (none here) the shipped ones.
    """
    job = _job(predicates_dir, not no_entry_points, only, safety_cap)
    skipped: list[str] = []
    shards = plan(list(paths), fmt, shard_bytes, skipped, leave_out=out)
    if skipped and not quiet:
        click.echo(f"skipped {len(skipped)} file(s) of a folder, not in a corpus format ({', '.join(SUFFIXES)} "
                   f"files that a reader claims): {', '.join(skipped)}", err=True)
    if not shards:
        raise UnusableInput(f"{', '.join(map(str, paths))}: no corpus file")
    t0 = time.perf_counter()
    part = run_local(shards, job) if dask is None else run_dask(shards, job, dask, workers)
    seconds = time.perf_counter() - t0
    inputs = sorted({s.shown for s in shards})
    written = write_report(out, part, inputs)
    if not quiet:
        click.echo(f"{part.sequences} sequences, {part.turns} turns from {len(inputs)} file(s) in {len(shards)} "
                   f"shard(s), through {len(part.predicates)} predicates in {seconds:.1f} s"
                   f"{' on Dask ' + dask if dask else ''}", err=True)
        _say_findings(part)
        for path in written:
            click.echo(f"wrote {path}", err=True)
    crashed = sum(v for (p, o, _), v in part.cells.items() if o == "crashed")
    if crashed:
        click.echo(f"{crashed} crashed cell(s): a predicate raised, exited or hung on them", err=True)
        sys.exit(1)


def _job(predicates_dir: Path, entry_points: bool, only: tuple[str, ...], safety_cap: int) -> Job:
    """What every shard runs: the predicates folder (--predicates, else ./predicates, else the shipped
    one), checked to hold the predicates asked for (exit 2 with one line when it does not)."""
    from bench.corpus.aggregate import load_predicates

    if not given("predicates_dir") and not predicates_dir.is_dir():  # no ./predicates: the shipped ones
        predicates_dir = shipped_folder("predicates") or predicates_dir
    if not predicates_dir.is_dir():
        raise UnusableInput(f"--predicates {predicates_dir}: no such folder")
    job = Job(str(predicates_dir), entry_points, tuple(only), safety_cap)
    preds = load_predicates(job.folder, job.entry_points, job.only)
    if only:
        unknown = sorted(set(only) - {p.name for p in preds})
        if unknown:
            raise UnusableInput(f"-p {', '.join(unknown)}: no such predicate")
    if not preds:
        raise UnusableInput(f"no predicates: none in {predicates_dir} and none installed")
    return job


def _say_findings(part: Partial) -> None:
    """A table on stderr: per predicate, how many cells show each finding."""
    width = max(len(p) for p in part.predicates)
    click.echo(f"{'predicate':{width}}  " + "  ".join(f[:12].rjust(12) for f in FINDINGS), err=True)
    for p in part.predicates:
        click.echo(f"{p:{width}}  " + "  ".join(str(part.findings.get((p, f), 0)).rjust(12) for f in FINDINGS),
                   err=True)
