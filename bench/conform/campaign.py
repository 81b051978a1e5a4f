"""A conformance run over several loops: which can run, their ports, the records, the verdict.

``stopbench conform`` parses its options into a call of :func:`plan`, runs each driver of the plan
with :func:`run_driver`, writes the records and the Markdown with :func:`write_reports` and exits
with :func:`exit_code`. Nothing here prints: each step returns what the command shows.

The verdict follows the bench's one table of exit codes:

* 0: at least one sequence was run through an original loop, and every difference from its port
  is explained by the port's file;
* 1: a difference no port explains, or a driver that failed on a sequence;
* 2: nothing usable to run: a loop that was asked for but is not installed (or its interpreter is
  missing), a port that does not load, no sequence, or no sequence run at all (no loop installed,
  or every chosen sequence is one the chosen loops are not run on). A conformance run that ran
  nothing says nothing about the ports, so it is never a clean verdict.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.catalogue.files import write_all_or_nothing
from bench.check import deferred_interrupts
from bench.conform.clock import clock_env, estimate
from bench.conform.report import (
    conformance_markdown,
    make_record,
    read_record,
    record_path,
    record_text,
    unexplained,
)
from bench.conform.runner import DRIVERS, TIMED_OUT, ConformResult, Driver, end_running_drivers, run_conformance
from bench.engine.discovery import Broken, load_file
from bench.engine.model import Sequence
from bench.engine.predicate import Predicate
from bench.errors import UnusableInput

DEFAULT_CONFORM_DIR = Path("/tmp/stopbench-conform")
"""Where ``make conformance`` installs the loops unless CONFORM_DIR says otherwise."""

EXIT_CLEAN, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2

INTERRUPT_POLL_S = 0.2
"""How often the campaign's main thread wakes while runs go on, to take Ctrl-C or SIGTERM."""

DEFAULT_RETRIES = 1
"""How many times a (loop, sequence) run that timed out is run again. Only a timeout: a loop that
finished is never run again, whatever it did, so a plain difference is never retried away."""


class ConformSetupError(UnusableInput):
    """The conformance run cannot start as asked (exit 2): the message names what is missing."""


def conform_dir(given: Path | None) -> Path:
    """The folder the loops are installed under: `given`, else $CONFORM_DIR, else the default."""
    return given or Path(os.environ.get("CONFORM_DIR") or DEFAULT_CONFORM_DIR)


def default_loop(driver: Driver, folder: Path) -> Path:
    """Where ``make conformance`` installs a loop: a venv's Python, or a Node loop's npm prefix."""
    return folder / driver.name if driver.interpreter else folder / driver.name / "bin" / "python"


def unavailable(driver: Driver, loop: Path) -> str | None:
    """Why `driver` cannot run with the loop at `loop`, or None."""
    if driver.interpreter:
        if shutil.which(driver.interpreter) is None:
            return f"no {driver.interpreter} on PATH (the {driver.name} driver runs under it)"
        return None if loop.is_dir() else f"no install at {loop} ({driver.install})"
    return None if loop.is_file() else f"no Python at {loop} ({driver.install})"


@dataclass(frozen=True, slots=True)
class Plan:
    """Which drivers a run targets, where each loop is, and why the others cannot run."""

    targets: tuple[str, ...]
    """The drivers to run: those named, or with none named every installed one (every one with --all)."""
    explicit: bool
    """Whether the targets were asked for (named, or --all): one that cannot run is then an error."""
    loops: Mapping[str, Path]
    why_not: Mapping[str, str]
    """Driver name -> why it cannot run here, for every driver that cannot."""

    @property
    def runnable(self) -> tuple[str, ...]:
        return tuple(n for n in self.targets if n not in self.why_not)

    @property
    def blocked(self) -> dict[str, str]:
        """Targets that were asked for and cannot run (each one is an exit 2)."""
        return {n: self.why_not[n] for n in self.targets if n in self.why_not} if self.explicit else {}


def driven(drivers: Mapping[str, Driver] = DRIVERS) -> list[str]:
    """The drivers CI installs and drives: every one but those whose committed record is reused
    (``Driver.reused``), so a driver added to DRIVERS is driven with no other edit."""
    return [name for name, d in drivers.items() if not d.reused]


def split_names(names: Iterable[str], drivers: Mapping[str, Driver] = DRIVERS) -> tuple[list[str], list[str]]:
    """The command's NAMES as (driver names, sequence ids)."""
    names = list(names)
    return [n for n in names if n in drivers], [n for n in names if n not in drivers]


def plan(chosen: list[str], *, run_all: bool, loop: Path | None, folder: Path,
         drivers: Mapping[str, Driver] = DRIVERS) -> Plan:
    """The drivers to run. `loop` (``--python``/``--loop``) overrides where the one chosen driver's
    loop is; it needs exactly one driver."""
    if loop is not None and len(chosen) != 1:
        raise ConformSetupError("--python (--loop) needs exactly one driver name")
    loops = {d.name: loop if loop is not None and d.name in chosen else default_loop(d, folder)
             for d in drivers.values()}
    why_not = {name: why for name, d in drivers.items() if (why := unavailable(d, loops[name])) is not None}
    targets = tuple(chosen) if chosen else tuple(n for n in drivers if run_all or n not in why_not)
    return Plan(targets, bool(chosen) or run_all, loops, why_not)


def select_sequences(catalogue: Iterable[Sequence], only: Iterable[str],
                     where: str = "the catalogue") -> list[Sequence]:
    """The catalogue's sequences with the ids in `only` (all of them when it is empty); an id that
    is not there, or an empty selection, cannot be run. `where` names the catalogue in messages."""
    seqs = list(catalogue)
    wanted = set(only)
    chosen = [s for s in seqs if not wanted or s.id in wanted]
    missing = sorted(wanted - {s.id for s in chosen})
    if missing:
        raise ConformSetupError(f"no sequence (and no driver) named {', '.join(missing)} in {where}")
    if not chosen:
        raise ConformSetupError(f"no usable sequence to run in {where}")
    return chosen


@dataclass(frozen=True, slots=True)
class Port:
    """A driver's port (None when the predicates folder has none) and the differences it explains."""

    predicate: Predicate | None
    explained: Mapping[str, str] = field(default_factory=dict)
    not_driven: Mapping[str, str] = field(default_factory=dict)
    """Sequences the driver cannot produce for this loop, and why (the port's ``not_driven``)."""


def load_ports(predicates_dir: Path, targets: Iterable[str],
               drivers: Mapping[str, Driver] = DRIVERS) -> dict[str, Port]:
    """Every driver's port from `predicates_dir`. A port that does not load is an error for a
    driver about to run, and no port at all for the others."""
    needed = set(targets)
    ports: dict[str, Port] = {}
    for d in drivers.values():
        path = predicates_dir / f"{d.predicate}.py"
        loaded = load_file(path) if path.is_file() else None
        if isinstance(loaded, Broken):
            if d.name in needed:
                raise ConformSetupError(f"the port {path} does not load: {loaded.error}")
            loaded = None
        ports[d.name] = Port(loaded, dict(loaded.explained), dict(loaded.not_driven)) if loaded else Port(None)
    return ports


@dataclass(frozen=True, slots=True)
class DriverRun:
    """One driver's results: what was run, what was not and why, and what fails the run."""

    driver: Driver
    results: tuple[ConformResult, ...]
    not_run: Mapping[str, str]
    failing: tuple[ConformResult, ...]
    not_driven: Mapping[str, str] = field(default_factory=dict)
    retried: Mapping[str, str] = field(default_factory=dict)
    """Sequences run again because a run timed out, and what the timed-out run said."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """The key of each sequence run (bench/conform/keys.py), kept in its row."""
    reused: Mapping[str, str] = field(default_factory=dict)
    """Sequences not driven in this run whose record's row is reused (its key unchanged), with the key."""

    @property
    def differing(self) -> int:
        return sum(r.difference is not None for r in self.results)

    @property
    def explained(self) -> int:
        """Differences the port explains (a failed driver is never explained)."""
        return self.differing - sum(r.difference is not None for r in self.failing)

    def summary(self) -> str:
        """One line: how many sequences were run, reused, skipped, differ, are explained, fail."""
        undriven = f"{len(self.not_driven)} not driven, " if self.not_driven else ""
        retried = f" ({len(self.retried)} run again after a timeout)" if self.retried else ""
        reused = f", {len(self.reused)} reused (key unchanged)" if self.reused else ""
        return (f"{self.driver.name}: {len(self.results)} sequence(s) run{retried}{reused}, "
                f"{len(self.not_run)} not run, "
                f"{undriven}{self.differing} differ from the port, {self.explained} of them explained; "
                f"{len(self.failing)} unexplained or failed")


def run_driver(driver: Driver, seqs: list[Sequence], loop: Path, port: Port, *, root: Path, timeout: float,
               progress: Callable[[ConformResult], None] | None = None, jobs: int = 1,
               retries: int = DEFAULT_RETRIES) -> DriverRun:
    """Run one original loop on `seqs` (those it is run on) and compare each cell with its port's."""
    def shown(_: Driver, res: ConformResult) -> None:
        if progress is not None:
            progress(res)

    [run] = run_drivers([driver], seqs, {driver.name: loop}, {driver.name: port}, root=root, timeout=timeout,
                        jobs=jobs, retries=retries, progress=shown)
    return run


def not_driven_of(drivers: Iterable[Driver], seqs: Iterable[Sequence],
                  ports: Mapping[str, Port]) -> dict[str, dict[str, str]]:
    """Per driver, the sequences its port says it cannot produce (run on it otherwise), with why."""
    seqs = list(seqs)
    return {d.name: {s.id: ports[d.name].not_driven[s.id] for s in seqs
                     if s.id in ports[d.name].not_driven and d.not_run(s) is None} for d in drivers}


def drivable(drivers: Iterable[Driver], seqs: Iterable[Sequence],
             ports: Mapping[str, Port]) -> list[tuple[Driver, Sequence]]:
    """Every (driver, sequence) pair a run drives: neither not run on nor not driven, in the catalogue's order."""
    drivers, seqs = list(drivers), list(seqs)
    undriven = not_driven_of(drivers, seqs, ports)
    return [(d, s) for s in seqs for d in drivers if d.not_run(s) is None and s.id not in undriven[d.name]]


def run_drivers(drivers: Iterable[Driver], seqs: list[Sequence], loops: Mapping[str, Path],
                ports: Mapping[str, Port], *, root: Path, timeout: float, jobs: int = 1,
                retries: int = DEFAULT_RETRIES,
                progress: Callable[[Driver, ConformResult], None] | None = None,
                virtual_clock: bool = False, timings: Mapping[str, float] | None = None,
                keys: Mapping[tuple[str, str], str] | None = None,
                reuse: Mapping[tuple[str, str], str] | None = None) -> list[DriverRun]:
    """Every (loop, sequence) pair that is driven, on a pool of `jobs` workers, each pair on its
    own replay server in its own folder; one DriverRun per driver, in the order given.

    Most of a conformance run is waiting (a loop's real retry back-off, a CLI starting), so pairs
    run side by side even on two cores. The pairs start longest first, as `timings` (the last
    runs' wall times, bench/conform/clock.py) estimate them, so a long run does not start last.
    `progress` sees each result as it completes (in completion order); the runs, and so the
    records and the report, list results in the order of `seqs` whatever order they completed in.
    A pair whose run timed out is run again up to `retries` times, and its DriverRun says so
    (``retried``). With `virtual_clock` each loop that can take it sleeps on the virtual clock.
    `keys` gives each pair's key (kept in its row); the pairs in `reuse` are not driven, their rows
    to be reused with the key given (bench/conform/reuse.py chooses them)."""
    drivers = list(drivers)
    keys, reuse = keys or {}, reuse or {}
    pairs = [(d, s) for d, s in drivable(drivers, seqs, ports) if (d.name, s.id) not in reuse]
    pairs.sort(key=lambda ds: -estimate(ds[0], ds[1], timings or {}))  # stable: ties keep the catalogue's order
    envs = {d.name: clock_env(d, root) if virtual_clock else {} for d in drivers}

    def one(driver: Driver, seq: Sequence) -> tuple[ConformResult, str | None]:
        return _run_pair(driver, seq, str(loops[driver.name]), ports[driver.name].predicate, root=root,
                         timeout=timeout, env=envs[driver.name], retries=retries)

    done = _run_pairs(pairs, one, jobs, progress)
    undriven = not_driven_of(drivers, seqs, ports)
    return [_driver_run(d, seqs, done, ports[d.name], undriven[d.name], keys, reuse) for d in drivers]


_PairOutcome = tuple[ConformResult, str | None]
"""A pair's result, and what its first run said when it timed out and was run again (else None)."""


def _run_pair(driver: Driver, seq: Sequence, loop: str, port: Predicate | None, *, root: Path, timeout: float,
              env: Mapping[str, str], retries: int) -> _PairOutcome:
    """One (loop, sequence) pair, run again up to `retries` times while it times out."""
    first: str | None = None
    for attempt in range(retries + 1):
        [res] = run_conformance(driver, [seq], loop, root=root, port=port, timeout=timeout, env=env)
        if not res.result.get(TIMED_OUT) or attempt == retries:
            return res, first
        first = first or f"run again after a timeout: {res.result.get('error')}"
    raise AssertionError("unreachable")  # the loop returns on its last attempt


def _run_pairs(pairs: list[tuple[Driver, Sequence]], one: Callable[[Driver, Sequence], _PairOutcome], jobs: int,
               progress: Callable[[Driver, ConformResult], None] | None) -> dict[tuple[str, str], _PairOutcome]:
    """Each pair's outcome by (driver name, sequence id), `one` run on a pool of `jobs` workers. Ctrl-C,
    SIGTERM or a failing `progress` starts nothing more and ends the drivers running, then propagates."""
    done: dict[tuple[str, str], _PairOutcome] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="stopbench-conform") as pool, \
            deferred_interrupts() as interrupts:
        futures = {pool.submit(one, d, s): (d, s) for d, s in pairs}
        pending = set(futures)
        try:
            while pending:
                # in short slices: a signal taken by another thread reaches Python's handler only
                # when this thread wakes; the interrupt is raised here, never inside wait's locks
                finished, pending = wait(pending, timeout=INTERRUPT_POLL_S, return_when=FIRST_COMPLETED)
                interrupts.check()
                for future in finished:
                    d, s = futures[future]
                    done[(d.name, s.id)] = future.result()
                    if progress is not None:
                        progress(d, done[(d.name, s.id)][0])
        except BaseException:  # Ctrl-C, SIGTERM or a failing callback: start nothing more, end what runs
            pool.shutdown(wait=False, cancel_futures=True)
            while not all(f.done() for f in futures):  # a worker may start a driver after the first sweep
                end_running_drivers()
                wait(futures, timeout=INTERRUPT_POLL_S)
            raise
    return done


def _driver_run(d: Driver, seqs: list[Sequence], done: Mapping[tuple[str, str], _PairOutcome], port: Port,
                undriven: Mapping[str, str], keys: Mapping[tuple[str, str], str],
                reuse: Mapping[tuple[str, str], str]) -> DriverRun:
    """Driver `d`'s run from the pairs' outcomes, its results in the order of `seqs`."""
    mine = [done[(d.name, s.id)] for s in seqs if (d.name, s.id) in done]
    results = tuple(res for res, _ in mine)
    skipped = {s.id: why for s in seqs if (why := d.not_run(s)) is not None}
    retried = {res.sequence: why for res, why in mine if why is not None}
    mine_keys = {res.sequence: keys[(d.name, res.sequence)] for res in results if (d.name, res.sequence) in keys}
    reused = {s.id: reuse[(d.name, s.id)] for s in seqs if (d.name, s.id) in reuse}
    return DriverRun(d, results, skipped, tuple(unexplained(results, port.explained)), undriven, retried,
                     mine_keys, reused)


def write_reports(report_dir: Path, catalogue: list[Sequence], seqs: list[Sequence], runs: list[DriverRun],
                  ports: Mapping[str, Port], why_not: Mapping[str, str],
                  drivers: Mapping[str, Driver] = DRIVERS,
                  key_parts: Mapping[str, Mapping[str, str]] | None = None) -> Path:
    """Each run driver's record (``conformance/<driver>.json``, keeping its rows for sequences this
    run did not touch and the rows it reused), then ``conformance.md`` rebuilt from every record.
    `key_parts` are each driver's loop-wide key parts, kept in its record. Returns the Markdown's path."""
    chosen = {s.id for s in seqs}
    keep = [s.id for s in catalogue if s.id not in chosen]
    records: dict[str, dict[str, Any] | None] = {n: read_record(report_dir, n) for n in drivers}
    files: dict[Path, str] = {}
    for run in runs:
        record = make_record(run.driver, run.results, run.not_run, records.get(run.driver.name), keep,
                             run.not_driven, run.retried, keys=run.keys, reused=run.reused,
                             key_parts=(key_parts or {}).get(run.driver.name))
        records[run.driver.name] = record
        files[record_path(report_dir, run.driver.name)] = record_text(record)
    out = report_dir / "conformance.md"
    files[out] = conformance_markdown([s.id for s in catalogue], list(drivers.values()), records,
                                      {n: dict(p.explained) for n, p in ports.items()},
                                      {n: f"not installed: {why}" for n, why in why_not.items()})
    write_all_or_nothing(files)  # the records and the Markdown, all or none
    return out


def nothing_run(the_plan: Plan, runs: list[DriverRun]) -> str | None:
    """Why this run compared nothing (an exit 2), or None when at least one sequence was run and
    every driver that was asked for ran something."""
    if not the_plan.runnable:
        if the_plan.blocked:
            return None  # each blocked driver already says why
        return "nothing could be run: no original loop is installed (make conformance installs them)"
    if not any(r.results or r.reused for r in runs):
        return "nothing could be run: every chosen sequence is one the chosen loops are not run on"
    idle = [r.driver.name for r in runs if not r.results and not r.reused] if the_plan.explicit else []
    if idle:
        return f"nothing run by {', '.join(idle)}: every chosen sequence is one it is not run on"
    return None


def exit_code(the_plan: Plan, runs: list[DriverRun]) -> int:
    """The verdict as an exit status (the table in the module docstring)."""
    if the_plan.blocked or nothing_run(the_plan, runs) is not None:
        return EXIT_UNUSABLE
    return EXIT_FAILED if any(r.failing for r in runs) else EXIT_CLEAN
