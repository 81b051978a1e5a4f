"""One check from its options: choose the sequences, run every loop on them, write what it made.

:func:`choose` picks the sequences of a catalogue that :class:`~bench.check.options.CheckOptions`
asks for; :func:`run_check` runs each loop on them once per trial (:func:`bench.check.runner.run_all`)
and returns a :class:`CheckResult`; :func:`write_records` and :func:`write_check_junit` write it;
:mod:`bench.check.verdict` says it in words. Nothing here prints or exits: an input that cannot be
used raises :class:`~bench.errors.UnusableInput` with its one line, and Ctrl-C (or SIGTERM, under
:func:`bench.check.processes.sigterm_as_interrupt`) raises KeyboardInterrupt once every program ended.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.check.options import CheckOptions, Loop
from bench.check.report import Merged, column, live_record, merge_live, write_live
from bench.check.runner import LiveRun, NotStarting, cores_available, run_all
from bench.check.trials import trial_seeds
from bench.engine.model import Sequence
from bench.errors import UnusableInput

Progress = Callable[[str, LiveRun], None]
"""Called as each run ends, with its loop's name: what a progress line shows."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """The sequences a check runs, and how many the filters matched that it leaves out: of another
    dialect than ``--dialect`` (the rest of the filters met), or scripting their tool results."""

    sequences: tuple[Sequence, ...]
    other_dialects: int = 0
    scripted: tuple[str, ...] = ()


def choose(options: CheckOptions, catalogue: Seq[Sequence], where: str) -> Chosen:
    """The sequences of `catalogue` (read from `where`, as messages name it) that `options` runs.
    Raises UnusableInput for an id that is not there or filters that match nothing."""
    unknown = options.unknown_ids(catalogue)
    if unknown:
        raise UnusableInput(f"no sequence {', '.join(unknown)} under {where}")
    seqs = options.select(catalogue)
    if not seqs:
        raise UnusableInput(f"no sequence under {where} matches the filters")
    other = len(options.select(catalogue, dialects=False)) - len(seqs) if options.dialects else 0
    scripted = tuple(s.id for s in seqs if not options.runs_live(s))
    return Chosen(tuple(s for s in seqs if s.id not in scripted), other, scripted)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What a check did: each loop's runs, trial by trial (``trials[name][t]``, in the order of the
    chosen sequences), the fault seed of each trial, the jobs it ran with and its wall time."""

    options: CheckOptions
    chosen: Chosen
    trials: Mapping[str, tuple[tuple[LiveRun, ...], ...]]
    seeds: tuple[int, ...]
    jobs: int
    seconds: float

    @property
    def names(self) -> list[str]:
        """The loops' names, in the order of the options."""
        return [loop.name for loop in self.options.loops]

    def runs(self, name: str) -> tuple[LiveRun, ...]:
        """The first trial's runs of loop `name`: the cells of the table and of the record."""
        return self.trials[name][0]

    @property
    def failed(self) -> bool:
        """A requirement broken, or a run without a verdict, in any trial of any loop."""
        return any(r.failed for trials in self.trials.values() for trial in trials for r in trial)

    @property
    def total(self) -> int:
        """How many times a program ran (:func:`planned_runs`)."""
        return planned_runs(self.options, self.chosen)


def planned_runs(options: CheckOptions, chosen: Chosen) -> int:
    """How many times a program runs in the check: per loop, per trial, per sequence."""
    return len(chosen.sequences) * len(options.loops) * options.trials


def run_check(options: CheckOptions, chosen: Chosen, *, progress: Progress | None = None) -> CheckResult:
    """Run every loop of `options` on `chosen`'s sequences, `options.trials` times each, loop after
    loop. Raises UnusableInput when there is nothing to run, the virtual clock's files are missing, or
    a loop's program cannot be started (or its first runs all die the same way before their first
    model request: :class:`~bench.check.runner.NotStarting`)."""
    if not chosen.sequences:
        raise UnusableInput("nothing to run: every chosen sequence scripts its tool results")
    env = _run_env(options)
    jobs = options.jobs or cores_available()
    started = time.monotonic()
    seeds = trial_seeds(options.faults.seed if options.faults is not None else 0, options.trials)
    trials = {loop.name: _run_loop(loop, options, chosen, env, jobs, seeds, progress) for loop in options.loops}
    return CheckResult(options, chosen, trials, seeds, jobs, time.monotonic() - started)


def _run_env(options: CheckOptions) -> dict[str, str]:
    env = dict(os.environ)
    if not options.virtual_clock:
        return env
    from bench.check.program import virtual_clock_env

    try:
        return virtual_clock_env(env)
    except FileNotFoundError as exc:
        raise UnusableInput(f"--virtual-clock: {exc.strerror}: {exc.filename} is missing") from None


def _run_loop(loop: Loop, options: CheckOptions, chosen: Chosen, env: dict[str, str], jobs: int,
              seeds: tuple[int, ...], progress: Progress | None) -> tuple[tuple[LiveRun, ...], ...]:
    """Every trial of one loop; a program that cannot run is UnusableInput."""
    def ended(run: LiveRun) -> None:
        if progress is not None:
            progress(loop.name, run)

    recipe = options.faults
    try:
        return tuple(tuple(run_all(chosen.sequences, loop.argv, name=column(loop.name), jobs=jobs,
                                   timeout=options.timeout, safety_cap=options.safety_cap,
                                   cwd=options.cwd or Path.cwd(), env=env, progress=ended,
                                   ok_marker=options.ok_marker, error_marker=options.error_marker,
                                   faults=None if recipe is None else recipe.with_seed(seed),
                                   preload=options.preload, bench_tools=options.bench_tools))
                     for seed in seeds)
    except OSError as exc:
        raise UnusableInput(f"cannot run {shlex.join(loop.argv)}: {exc.strerror or exc}") from None
    except NotStarting as exc:
        raise UnusableInput(f"cannot run {shlex.join(loop.argv)}: its first {exc.runs} runs ended before their "
                            f"first model request, each the same way: {exc.reason}; the check stopped there, "
                            "nothing written") from None


def record_extra(result: CheckResult) -> dict[str, object]:
    """What a live record says of the run besides its cells: the fault recipe and the trials' seeds."""
    recipe = result.options.faults
    extra: dict[str, object] = {}
    if recipe is not None:
        extra["faults"] = {"recipe": recipe.name, "seed": recipe.seed}
    if result.options.trials > 1:
        extra["trial_seeds"] = list(result.seeds) if recipe is not None else None
    return extra


def live_records(result: CheckResult) -> dict[str, dict[str, Any]]:
    """Each loop's live record (:func:`bench.check.report.live_record`), by name."""
    return {loop.name: live_record(loop.name, loop.argv, result.runs(loop.name), result.trials[loop.name],
                                   record_extra(result)) for loop in result.options.loops}


def write_records(result: CheckResult) -> list[Merged]:
    """Write each loop's live record under the options' reports folder (none without one): whole, or
    merged into the one there when the options say so (:attr:`CheckOptions.merges`,
    :func:`bench.check.report.merge_live`); a record written whole is a :class:`Merged` that kept nothing."""
    reports = result.options.reports
    if reports is None:
        return []
    made = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    extra = record_extra(result)
    out = []
    for loop in result.options.loops:
        runs, trials = result.runs(loop.name), result.trials[loop.name]
        if result.options.merges:
            out.append(merge_live(reports, live_record(loop.name, loop.argv, runs, trials, extra), made))
        else:
            out.append(Merged(write_live(reports, loop.name, loop.argv, runs, trials, extra), 0))
    return out


def write_check_junit(result: CheckResult, path: Path) -> None:
    """Every cell of every trial as a JUnit test case (named after its trial when there are several)."""
    from bench.report.junit import check_case, write_junit

    k = result.options.trials
    write_junit(path, "stopbench check", (_trial_case(check_case(r.cell), t, k) for n in result.names
                                          for t, trial in enumerate(result.trials[n]) for r in trial))


def _trial_case(case: Any, trial: int, trials: int) -> Any:
    """A JUnit case named after its trial when there are several (names stay unique in a class)."""
    return case if trials == 1 else replace(case, name=f"{case.name} [trial {trial + 1}]")
