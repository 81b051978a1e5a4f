"""``stopbench conform``: run original loops against the replay server and compare with their ports."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from bench.catalogue import load_catalogue
from bench.cli._common import EXIT_BAD_INPUT, EXIT_MISMATCH, EXIT_OK
from bench.conform.report import (
    conformance_markdown,
    explanations,
    make_record,
    port_module,
    read_record,
    unexplained,
    write_record,
)
from bench.conform.runner import DRIVERS, ConformResult, Driver, run_conformance
from bench.discovery import Broken, load_file
from bench.golden import write_atomically
from bench.predicate import Predicate

DEFAULT_CONFORM_DIR = "/tmp/stopbench-conform"


def default_loop(driver: Driver, conform_dir: Path) -> Path:
    """Where `make conformance` installs a loop: a venv's Python, or a Node loop's npm prefix."""
    return conform_dir / driver.name if driver.interpreter else conform_dir / driver.name / "bin" / "python"


def unavailable(driver: Driver, loop: Path) -> str | None:
    """Why `driver` cannot run with the loop at `loop`, or None."""
    if driver.interpreter:
        if shutil.which(driver.interpreter) is None:
            return f"no {driver.interpreter} on PATH"
        return None if loop.is_dir() else f"no install at {loop} ({driver.install})"
    return None if loop.is_file() else f"no Python at {loop} ({driver.install})"


@click.command("conform")
@click.argument("names", nargs=-1)
@click.option("--all", "run_all", is_flag=True,
              help="Run every driver; one whose loop is not installed is an error (exit 2).")
@click.option("--python", "--loop", "python", default=None,
              help="With one driver: Python of the venv where its loop is installed, or for a Node loop "
                   "its npm prefix. Default: CONFORM_DIR/<driver>[/bin/python].")
@click.option("--conform-dir", type=click.Path(path_type=Path), default=None,
              help=f"Where `make conformance` installs the loops [env CONFORM_DIR, else {DEFAULT_CONFORM_DIR}].")
@click.option("--sequences", "sequences_dir", type=click.Path(path_type=Path), default=Path("sequences"),
              show_default=True)
@click.option("--predicates", "predicates_dir", type=click.Path(path_type=Path), default=Path("predicates"),
              show_default=True, help="Where the ports (the drivers' predicates) are.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path), default=Path("reports"),
              show_default=True, help="Writes conformance/<driver>.json and conformance.md here.")
@click.option("--no-report", is_flag=True, help="Write no report.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds one run of an original loop may take.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per sequence.")
def conform_cmd(names: tuple[str, ...], run_all: bool, python: str | None, conform_dir: Path | None,
                sequences_dir: Path, predicates_dir: Path, report_dir: Path, no_report: bool, timeout: float,
                as_json: bool) -> None:
    """Run original loops against every sequence served by the replay server, infer their
    decisions from their requests, and compare them with their ports' cells.

    NAMES are drivers (default: every driver whose loop is installed) and sequence ids (default:
    all). Writes reports/conformance.md. Exit 0 when every difference is explained by its port
    (CONFORMANCE_EXPLAINED), 1 on an unexplained difference or a failed driver, 2 on unusable input."""
    chosen = [n for n in names if n in DRIVERS]
    only = [n for n in names if n not in DRIVERS]
    conform_dir = conform_dir or Path(os.environ.get("CONFORM_DIR") or DEFAULT_CONFORM_DIR)
    if python is not None and len(chosen) != 1:
        click.echo("--python needs exactly one driver", err=True)
        sys.exit(EXIT_BAD_INPUT)
    cat = load_catalogue(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    seqs = [s for s in cat.sequences if not only or s.id in only]
    missing_ids = sorted(set(only) - {s.id for s in seqs})
    if missing_ids or not seqs:
        click.echo(f"no usable sequence or driver {', '.join(missing_ids) or 'at all'} under {sequences_dir} "
                   f"(drivers: {', '.join(DRIVERS)})", err=True)
        sys.exit(EXIT_BAD_INPUT)

    loops = {d.name: Path(python) if python is not None and d.name in chosen else default_loop(d, conform_dir)
             for d in DRIVERS.values()}
    why_not = {name: why for name in DRIVERS if (why := unavailable(DRIVERS[name], loops[name])) is not None}
    targets = chosen or [n for n in DRIVERS if run_all or n not in why_not]
    bad_input = False
    for name in targets:
        if name in why_not:
            click.echo(f"{name}: cannot run: {why_not[name]}", err=True)
            bad_input = True
    if not chosen and not run_all:
        for name in why_not:
            click.echo(f"{name}: not run: {why_not[name]}", err=True)

    ports: dict[str, Predicate | None] = {}
    explained: dict[str, dict[str, str]] = {}
    for d in DRIVERS.values():
        port_file = predicates_dir / f"{d.predicate}.py"
        loaded = load_file(port_file) if port_file.is_file() else None
        if isinstance(loaded, Broken):
            if d.name in targets:
                click.echo(f"the port {port_file} does not load: {loaded.error}", err=True)
                sys.exit(EXIT_BAD_INPUT)
            loaded = None
        ports[d.name] = loaded
        explained[d.name] = explanations(port_module(d.predicate)) if loaded is not None else {}

    def show(res: ConformResult) -> None:
        if as_json:
            click.echo(json.dumps(res.as_json(), ensure_ascii=False))
            return
        cell = res.observed
        path = " ".join(s.decision.action for s in cell.steps)
        verdict = "match" if res.port is not None and res.difference is None else (res.difference or "observed")
        if res.difference is not None and res.sequence in explained.get(driver.name, {}):
            verdict = f"explained: {verdict}"
        click.echo(f"{driver.name} {res.sequence}: {cell.outcome} {cell.reason or ''} ok={cell.ok} [{path}] "
                   f"({res.seconds:.1f} s) -> {verdict}")
        for d in res.details:
            click.echo(f"    note {d}")
        if res.result.get("reason") == "driver_failed":
            click.echo(f"    driver: {res.result.get('error')}")

    failing = 0
    ran = [n for n in targets if n not in why_not]
    for name in ran:
        driver = DRIVERS[name]
        if ports[name] is None:
            click.echo(f"note: no port for {name} under {predicates_dir}; only the observed cells are shown",
                       err=True)
        results = run_conformance(driver, seqs, str(loops[name]), root=Path.cwd(), port=ports[name],
                                  timeout=timeout, progress=show)
        skipped = {s.id: why for s in seqs if (why := driver.not_run(s)) is not None}
        bad = unexplained(results, explained[name])
        failing += len(bad)
        if not as_json:
            n_diff = sum(r.difference is not None for r in results)
            click.echo(f"{name}: {len(results)} sequence(s) run, {len(skipped)} not run, {n_diff} differ from the "
                       f"port, {n_diff - len(bad)} of them explained; {len(bad)} unexplained or failed")
        if not no_report:
            keep = [s.id for s in cat.sequences if s not in seqs]
            write_record(report_dir, make_record(driver, results, skipped, read_record(report_dir, name), keep))
    if not no_report and ran:
        records = {n: read_record(report_dir, n) for n in DRIVERS}
        md = conformance_markdown([s.id for s in cat.sequences], list(DRIVERS.values()), records, explained,
                                  {n: f"not installed: {why}" for n, why in why_not.items()})
        write_atomically(report_dir / "conformance.md", md)
        if not as_json:
            click.echo(f"wrote {report_dir / 'conformance.md'}")
    if bad_input:
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(EXIT_MISMATCH if failing else EXIT_OK)
