"""``stopbench conform``: run an original loop against the replay server and compare with its port."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from bench.catalogue import load_catalogue
from bench.cli._common import EXIT_BAD_INPUT, EXIT_MISMATCH, EXIT_OK
from bench.conform.runner import DRIVERS, ConformResult, run_conformance
from bench.discovery import Broken, load_file


@click.command("conform")
@click.argument("driver", type=click.Choice(sorted(DRIVERS)))
@click.argument("only", nargs=-1)
@click.option("--python", "python", required=True,
              help="Python of the venv where the original loop is installed (see `make conformance`).")
@click.option("--sequences", "sequences_dir", type=click.Path(path_type=Path), default=Path("sequences"),
              show_default=True)
@click.option("--predicates", "predicates_dir", type=click.Path(path_type=Path), default=Path("predicates"),
              show_default=True, help="Where the port (the driver's predicate) is.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds one run of the original loop may take.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per sequence.")
def conform_cmd(driver: str, only: tuple[str, ...], python: str, sequences_dir: Path, predicates_dir: Path,
                timeout: float, as_json: bool) -> None:
    """Run DRIVER's original loop against every sequence (or ONLY these ids) served by the replay
    server, infer its decisions from its requests, and compare them with its port's cell.
    Exit 0 when every sequence matches, 1 on a difference, 2 on unusable input."""
    spec = DRIVERS[driver]
    cat = load_catalogue(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    seqs = [s for s in cat.sequences if not only or s.id in only]
    missing = sorted(set(only) - {s.id for s in seqs})
    if missing or not seqs:
        click.echo(f"no usable sequence {', '.join(missing) or 'at all'} under {sequences_dir}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    port_file = predicates_dir / f"{spec.predicate}.py"
    port = load_file(port_file) if port_file.is_file() else None
    if isinstance(port, Broken):
        click.echo(f"the port {port_file} does not load: {port.error}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if port is None:
        click.echo(f"note: no port at {port_file}; only the observed cells are shown", err=True)
    if not Path(python).is_file():
        click.echo(f"no Python at {python} (install the loop: {spec.install})", err=True)
        sys.exit(EXIT_BAD_INPUT)

    def show(res: ConformResult) -> None:
        if as_json:
            click.echo(json.dumps(res.as_json(), ensure_ascii=False))
            return
        cell = res.observed
        path = " ".join(s.decision.action for s in cell.steps)
        verdict = "match" if res.port is not None and res.difference is None else (res.difference or "observed")
        click.echo(f"{res.sequence}: {cell.outcome} {cell.reason or ''} ok={cell.ok} [{path}] "
                   f"({res.seconds:.1f} s) -> {verdict}")
        for d in res.details:
            click.echo(f"    note {d}")
        if res.result.get("reason") == "driver_failed":
            click.echo(f"    driver: {res.result.get('error')}")

    results = run_conformance(spec, seqs, python, root=Path.cwd(), port=port, timeout=timeout, progress=show)
    differ = [r for r in results if r.difference is not None]
    if not as_json:
        click.echo(f"{len(results)} sequence(s), {len(differ)} differ from the port")
    sys.exit(EXIT_MISMATCH if differ else EXIT_OK)
