"""``stopbench conform``: run original loops against the replay server and compare with their ports."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

import click

from bench.catalogue.load import Catalogue, load_catalogue
from bench.check import Terminated, sigterm_as_interrupt
from bench.cli._common import (
    EXIT_INTERRUPTED,
    check_folder,
    jobs_option,
    predicates_option,
    reports_option,
    sequences_option,
)
from bench.conform.campaign import (
    DEFAULT_CONFORM_DIR,
    DEFAULT_RETRIES,
    DriverRun,
    Plan,
    Port,
    driven,
    exit_code,
    load_ports,
    nothing_run,
    plan,
    run_drivers,
    select_sequences,
    split_names,
    write_reports,
)
from bench.conform.campaign import conform_dir as conform_dir_of
from bench.conform.clock import TIMINGS_FILE, read_timings, slowest, write_timings
from bench.conform.keys import KeySources
from bench.conform.reuse import DEFAULT_SAMPLE, Choice, keys_of, plan_reuse
from bench.conform.runner import DRIVERS, ConformResult, Driver
from bench.engine.model import Sequence


@click.command("conform")
@click.argument("names", nargs=-1)
@click.option("--all", "run_all", is_flag=True,
              help="Run every driver; one whose loop is not installed is an error (exit 2).")
@click.option("--python", "--loop", "python", default=None,
              help="With one driver: Python of the venv where its loop is installed, or for a Node loop "
                   "its npm prefix. Default: CONFORM_DIR/<driver>[/bin/python].")
@click.option("--conform-dir", type=click.Path(path_type=Path), default=None,
              help=f"Where `make conformance` installs the loops [env CONFORM_DIR, else {DEFAULT_CONFORM_DIR}].")
@sequences_option
@predicates_option
@reports_option
@click.option("--no-reports", "--no-report", "no_report", is_flag=True,
              help="Write neither reports/conformance/<driver>.json nor reports/conformance.md.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds one run of an original loop may take.")
@jobs_option("(loop, sequence) runs side by side, each on its own replay server; the report's order "
             "does not depend on it.")
@click.option("--retries", type=click.IntRange(min=0), default=DEFAULT_RETRIES, show_default=True,
              help="Times a run that timed out is run again (said in the report); a run that finished is "
                   "never run again.")
@click.option("--virtual-clock/--real-clock", default=False, show_default=True,
              help="Run the loops that can take it (Node and Python ones) on the virtual clock: a retry "
                   "back-off sleep is cut short while the loop's clock moves on by the whole sleep "
                   "(conformance/clock/). Native binaries always sleep for real.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per sequence.")
@click.option("--from-records", is_flag=True,
              help="Drive nothing: rebuild reports/conformance.md from the committed records "
                   "(reports/conformance/<driver>.json) and the ports' explanations, and exit.")
@click.option("--list-driven", is_flag=True,
              help="Print the drivers CI installs and drives, one a line (every driver but those whose "
                   "committed record is reused), and exit.")
@click.option("--reuse-unchanged", is_flag=True,
              help="Drive only the pairs whose record row is missing, fails, or has a key other than the "
                   "pair's key now (what it depends on, hashed: bench/conform/keys.py), plus --sample "
                   "pairs; reuse every other row as it is (make conformance-ci).")
@click.option("--sample", "sample_size", type=click.IntRange(min=0), default=DEFAULT_SAMPLE, show_default=True,
              help="With --reuse-unchanged: pairs driven whatever their keys say, a rotating slice of all "
                   "of them (bench/conform/reuse.py).")
@click.option("--sample-seed", type=int, default=None,
              help="With --reuse-unchanged: which slice is the sample (slice SEED mod slices) [default: the "
                   "number of commits in HEAD, else the day number].")
def conform_cmd(names: tuple[str, ...], run_all: bool, python: str | None, conform_dir: Path | None,
                sequences_dir: Path, predicates_dir: Path, reports_dir: Path, no_report: bool, timeout: float,
                jobs: int, retries: int, virtual_clock: bool, as_json: bool, from_records: bool,
                list_driven: bool, reuse_unchanged: bool, sample_size: int, sample_seed: int | None) -> None:
    """Run original loops against every sequence served by the replay server, infer their
    decisions from their requests, and compare them with their ports' cells.

    NAMES are drivers (default: every driver whose loop is installed) and sequence ids (default:
    all). Installs nothing: `make conformance` installs the loops under CONFORM_DIR. Writes
    reports/conformance.md. Exit 0 when sequences were run and every difference is explained by its
    port (CONFORMANCE_EXPLAINED); 1 on an unexplained difference or a failed driver; 2 when nothing
    could be run (no loop installed, a named loop missing, every sequence skipped) or on unusable
    input. Each run's wall time goes to CONFORM_DIR/timings.json (never to the reports); the next
    run starts the longest runs first, and the slowest are printed at the end."""
    if list_driven:
        click.echo("\n".join(driven(DRIVERS)))
        return
    if from_records:
        _rebuild_from_records(sequences_dir, predicates_dir, reports_dir)
        return
    chosen, only = split_names(names, DRIVERS)
    folder = conform_dir_of(conform_dir)
    the_plan = plan(chosen, run_all=run_all, loop=Path(python) if python is not None else None,
                    folder=folder, drivers=DRIVERS)
    cat, seqs = _sequences(sequences_dir, only)
    _say_plan(the_plan)
    ports = _ports(predicates_dir, the_plan)
    targets = [DRIVERS[n] for n in the_plan.runnable]
    sources = KeySources(Path.cwd(), predicates_dir)
    keys = keys_of(targets, seqs, ports, sources)
    choice = Choice()
    if reuse_unchanged:  # --reuse-unchanged: drive only the pairs whose keys moved, and the sample
        choice = plan_reuse(keys, targets, ports, reports_dir, sources, sample_size=sample_size,
                            seed=None if sample_seed is None else (sample_seed, f"--sample-seed {sample_seed}"))
        if not as_json:
            click.echo(choice.summary())
    started = time.monotonic()
    runs = _drive(lambda: run_drivers(targets, seqs, the_plan.loops, ports, root=Path.cwd(), timeout=timeout,
                                      jobs=jobs, retries=retries, progress=_shower(ports, choice, as_json),
                                      virtual_clock=virtual_clock, timings=read_timings(folder), keys=keys,
                                      reuse=choice.reuse))
    wall = time.monotonic() - started
    _timings(runs, folder, wall, jobs, virtual_clock, as_json)
    if not no_report and runs:
        md = write_reports(reports_dir, list(cat.sequences), seqs, runs, ports, the_plan.why_not, DRIVERS,
                           key_parts={d.name: sources.parts(d) for d in targets})
        if not as_json:
            click.echo(f"wrote {md}")
    _end(the_plan, runs)


def _end(the_plan: Plan, runs: list[DriverRun]) -> NoReturn:
    """Why nothing was compared, if so, and the verdict's exit status."""
    idle = nothing_run(the_plan, runs)
    if idle is not None:
        click.echo(idle, err=True)
    sys.exit(exit_code(the_plan, runs))


def _sequences(sequences_dir: Path, only: list[str]) -> tuple[Catalogue, list[Sequence]]:
    """The catalogue (a folder that cannot be used is refused), each bad file said in one line, and
    the sequences of it named in `only` (every one when it is empty)."""
    check_folder(sequences_dir, "sequences_dir", "sequences")
    cat = load_catalogue(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    return cat, select_sequences(cat.sequences, only, where=str(sequences_dir))


def _say_plan(the_plan: Plan) -> None:
    """Each driver that cannot run, and, when none was named, why each other one is not run."""
    for name, why in the_plan.blocked.items():
        click.echo(f"{name}: cannot run: {why}", err=True)
    if not the_plan.explicit:
        for name, why in the_plan.why_not.items():
            click.echo(f"{name}: not run: {why}", err=True)


def _ports(predicates_dir: Path, the_plan: Plan) -> dict[str, Port]:
    """Every driver's port, and a note for each driver about to run that has none."""
    check_folder(predicates_dir, "predicates_dir", "predicates")
    ports = load_ports(predicates_dir, the_plan.runnable, DRIVERS)
    for name in the_plan.runnable:
        if ports[name].predicate is None:
            click.echo(f"note: no port for {name} under {predicates_dir}; only the observed cells are shown",
                       err=True)
    return ports


def _shower(ports: Mapping[str, Port], choice: Choice, as_json: bool) -> Callable[[Driver, ConformResult], None]:
    """What is printed as each run ends: its JSON, or one line (the observed path, the verdict against
    the port, why it was driven) with the server's notes and a driver's failure."""
    def show(driver: Driver, res: ConformResult) -> None:
        if as_json:
            click.echo(json.dumps(res.as_json(), ensure_ascii=False))
            return
        cell = res.observed
        path = " ".join(s.decision.action for s in cell.steps)
        verdict = "match" if res.port is not None and res.difference is None else (res.difference or "observed")
        if res.difference is not None and res.sequence in ports[driver.name].explained:
            verdict = f"explained: {verdict}"
        why = choice.drive.get((driver.name, res.sequence))
        driven_because = f" [driven: {why}]" if why else ""
        click.echo(f"{driver.name} {res.sequence}: {cell.outcome} {cell.reason or ''} ok={cell.ok} [{path}] "
                   f"({res.seconds:.1f} s) -> {verdict}{driven_because}")
        for d in res.details:
            click.echo(f"    note {d}")
        if res.result.get("reason") == "driver_failed":
            click.echo(f"    driver: {res.result.get('error')}")
    return show


def _drive(run: Callable[[], list[DriverRun]]) -> list[DriverRun]:
    """`run` with SIGTERM (CI's timeout) as Ctrl-C: every loop and all it started ended, no temporary
    folder left, nothing written, exit 2."""
    try:
        with sigterm_as_interrupt():
            return run()
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        click.echo(f"interrupted ({how}): every loop ended, nothing written, no verdict", err=True)
        sys.exit(EXIT_INTERRUPTED)


def _timings(runs: list[DriverRun], folder: Path, wall: float, jobs: int, virtual_clock: bool, as_json: bool) -> None:
    """Each run's wall time kept in CONFORM_DIR/timings.json; each driver's summary, the times and the
    slowest runs printed (not with --json)."""
    timed = [(run.driver.name, res) for run in runs for res in run.results]
    if timed:
        write_timings(folder, timed)
    if as_json:
        return
    for run in runs:
        click.echo(run.summary())
    if timed:
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        clock = "virtual clock" if virtual_clock else "real clock"
        click.echo(f"{len(timed)} run(s) in {wall:.0f} s wall at --jobs {jobs} ({clock}); the loops' CPU "
                   f"{cpu.ru_utime + cpu.ru_stime:.0f} s; the runs' wall times summed "
                   f"{sum(r.seconds for _, r in timed):.0f} s ({folder / TIMINGS_FILE}); slowest:")
        for line in slowest(timed):
            click.echo(line)


def _rebuild_from_records(sequences_dir: Path, predicates_dir: Path, reports_dir: Path) -> None:
    """conformance.md from the records alone, as a run would write it: for merging records driven in
    parts (one loop on one machine, another elsewhere) without driving anything again."""
    check_folder(sequences_dir, "sequences_dir", "sequences")
    check_folder(predicates_dir, "predicates_dir", "predicates")
    cat = load_catalogue(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    ports = load_ports(predicates_dir, [], DRIVERS)
    click.echo(f"wrote {write_reports(reports_dir, list(cat.sequences), [], [], ports, {}, DRIVERS)}")
