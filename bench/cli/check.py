"""``stopbench check -- COMMAND``: run your own loop against the catalogue over HTTP and judge it."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from bench.check.limits import MAX_NAME_CHARS, MAX_TRIALS, loop_name_problem, refuse_unwritable
from bench.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_MISMATCH,
    EXIT_OK,
    fault_recipe,
    junit_option,
    load_sequences,
    only_mine_option,
    reports_option,
    sequences_option,
)
from bench.engine.model import Sequence
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.wires.dialects import DIALECTS

_INTERPRETERS = {"python", "python3", "node", "deno", "bun", "ruby", "uv", "npx", "sh", "bash", "env"}


GENERIC_STEMS = frozenset({"loop", "main", "agent", "app", "index", "run", "program", "script", "cli", "bot",
                           "example", "demo", "__main__", "__init__"})
"""Program stems that say nothing of the program: its folder's name goes before them (``agno-loop``)."""


def default_name(command: list[str]) -> str:
    """The command's stem: the first argument that names an existing file after an interpreter
    (``python examples/openai_loop.py`` -> ``openai_loop``), else the program's own stem. A generic
    stem (:data:`GENERIC_STEMS`) takes its folder's name, so that ``frameworks/agno/loop.py`` and
    ``frameworks/strands/loop.py`` do not write one record (``agno-loop``, ``strands-loop``);
    characters a file name should not have become ``_``."""
    return _file_name(_stem(command))[:MAX_NAME_CHARS]


def _stem(command: list[str]) -> str:
    for arg in command:
        p = Path(arg)
        if p.stem in _INTERPRETERS or arg.startswith("-"):
            continue
        if p.is_file():
            parent = p.resolve().parent.name
            return f"{parent}-{p.stem}" if p.stem in GENERIC_STEMS and parent else p.stem
    for before, arg in itertools.pairwise(command):
        if arg.startswith("-"):
            continue
        if before == "-m":  # python -m package.module
            parts = [x for x in arg.split(".") if x]
            if len(parts) > 1 and parts[-1] in GENERIC_STEMS:
                return f"{parts[-2]}-{parts[-1]}"
            return parts[-1] if parts else arg
        p = Path(arg)  # a file that is not there (yet): its stem all the same, never its suffix
        return f"{p.parent.name}-{p.stem}" if p.stem in GENERIC_STEMS and p.parent.name else p.stem or arg
    return Path(command[0]).stem


def _file_name(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "loop"


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or with the first number from 2 that makes it differ from every name in `taken`."""
    n = 2
    out = name
    while out in taken:
        out, n = f"{name}-{n}", n + 1
    return out


def _loops(command: tuple[str, ...], name: str | None, named: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    loops: list[tuple[str, list[str]]] = []
    if command:
        loops.append((name or default_name(list(command)), list(command)))
    elif name:
        raise click.UsageError("--name names the COMMAND after --; there is none")
    for spec in named:
        label, eq, line = spec.partition("=")
        if not eq or not label or not line.strip():
            raise click.UsageError(f"-c {spec!r}: expected NAME=COMMAND")
        try:
            loops.append((label, shlex.split(line)))
        except ValueError as exc:  # shlex's "No closing quotation", "No escaped character"
            raise click.UsageError(f"-c {spec!r}: {str(exc)[:1].lower()}{str(exc)[1:]}") from None
    if not loops:
        raise click.UsageError("no command: stopbench check [OPTIONS] -- COMMAND [ARGS...]")
    if command and not name:  # a default name never collides with another loop of the run
        loops[0] = (_unique(loops[0][0], {n for n, _ in loops[1:]}), loops[0][1])
    for label, _ in loops:
        if (problem := loop_name_problem(label)) is not None:
            raise click.UsageError(f"loop name {label!r}: {problem}")
    names = [n for n, _ in loops]
    if len(set(names)) != len(names):
        raise click.UsageError(f"two loops named the same: {', '.join(names)}")
    return loops


def select(sequences: list[Sequence], ids: tuple[str, ...], tags: tuple[str, ...],
           dialects: tuple[str, ...]) -> list[Sequence]:
    """The sequences named by `ids` (any), carrying one of `tags`, in one of `dialects`; the filters
    of different kinds all apply."""
    return [s for s in sequences if (not ids or s.id in ids) and (not tags or set(tags) & set(s.tags))
            and (not dialects or s.dialect in dialects)]


@click.command("check")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.option("-s", "--sequence", "ids", multiple=True, help="Only this sequence id (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only sequences with this tag (repeatable: any of them).")
@click.option("--dialect", "dialects", multiple=True, type=click.Choice(DIALECTS),
              help="Only sequences of this dialect (repeatable).")
@click.option("--name", default=None,
              help="Column name of COMMAND: <name>@live. Default: the command's stem; a generic one "
                   "(loop.py, main.py, ...) with its folder's name before it (agno-loop).")
@click.option("-c", "--command", "named", multiple=True, metavar="NAME=COMMAND",
              help="Another loop to run beside COMMAND (repeatable; the line is split as a shell would). "
                   "Each loop is a column; the table shows where they differ.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds one run of the program may take; past it the program is ended: 'running' (a "
                   "verdict) when it asked for more than its sequence allows, else 'crashed'.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              show_default="the cores this process may run on", help="Sequences run at the same time, each on its "
                                                                     "own server.")
@click.option("--safety-cap", type=click.IntRange(min=1), default=DEFAULT_SAFETY_CAP, show_default=True,
              help="Requests after which the program is killed and its cell is 'capped'.")
@click.option("--ok-marker", default=None, metavar="TEXT",
              help="Text your tools put in every result of a call they ran: a result without it is a call "
                   "that failed (as conform's). Calls run on the bench's tools (MCP or STOPBENCH_TOOLS_URL) "
                   "are known without it.")
@click.option("--error-marker", default=None, metavar="TEXT",
              help="Text your loop puts in the result of a call it refused or that failed: a result with it "
                   "is a failed call. Without either marker a result starting with 'error' is read as failed.")
@click.option("--virtual-clock", is_flag=True,
              help="Run the program's Python and Node processes on conform's virtual clock: a sleep of a "
                   "second or more (a retry back-off) returns at once while their clock moves on by it.")
@click.option("--bench-tools", is_flag=True,
              help="COMMAND runs the bench's tools (STOPBENCH_MCP_COMMAND, STOPBENCH_MCP_URL or "
                   "STOPBENCH_TOOLS_URL), which answer as the sequence scripts: the sequences that script "
                   "their tool results (result:) are run too, and a call no execution of those tools answers "
                   "is one that never ran (failed), not read by its result's words.")
@sequences_option
@only_mine_option
@reports_option
@click.option("--no-report", is_flag=True, help="Write no report file.")
@click.option("--fresh", is_flag=True,
              help="Write the live record from this run alone. Without it a run of some sequences (-s, --tag, "
                   "--dialect) merges its cells into the record there, each cell saying when it was made.")
@click.option("--preload", is_flag=True,
              help="For a Python program: load the interpreter and the modules its script imports once, and run "
                   "each sequence in a fork of that process (its own environment, arguments, folder, process "
                   "group and exit status). What a module reads from the environment at import it reads once.")
@junit_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per cell instead of the table.")
@click.option("--fuzz", "fuzz_n", type=click.IntRange(min=1), default=None, metavar="N",
              help="Instead of the catalogue: N generated sequences (bench.fuzz.strategies), judged by the "
                   "reference properties; a failure is shrunk and written as a sequence file.")
@click.option("--faults", "faults_spec", default=None, metavar="RECIPE",
              help="Inject faults and pacing into the served answers: a recipe file (YAML) or a preset "
                   "(cut-after-3, rate-limited, slow-stream, ...; docs/how-to/faults.md). The verdict knows what "
                   "was injected.")
@click.option("--trials", type=click.IntRange(min=1, max=MAX_TRIALS), default=1, show_default=True, metavar="K",
              help=f"Run each sequence K times (at most {MAX_TRIALS}); the table shows pass^K (every trial met the "
                   "requirements) and the cells that flip. Trial t (from 0) injects faults with the recipe's seed + t.")
@click.option("--seed", type=int, default=None,
              help="With --fuzz: the search's seed [default: 0]. With --faults: the recipe's seed instead of its "
                   "own (trial t adds t).")
@click.option("--shrink-time", type=click.FloatRange(min=0), default=120.0, show_default=True,
              help="With --fuzz: seconds the shrinking of a failure may take.")
@click.option("--save", "save_dir", type=click.Path(path_type=Path), default=None,
              help="With --fuzz: folder for the failing sequence [default: <sequences>/found].")
def check_cmd(command: tuple[str, ...], ids: tuple[str, ...], tags: tuple[str, ...], dialects: tuple[str, ...],
              name: str | None, named: tuple[str, ...], timeout: float, jobs: int | None, safety_cap: int,
              ok_marker: str | None, error_marker: str | None, virtual_clock: bool, bench_tools: bool,
              sequences_dir: Path, reports_dir: Path, no_report: bool, fresh: bool, preload: bool,
              junit_path: Path | None, as_json: bool,
              fuzz_n: int | None, faults_spec: str | None, trials: int,
              seed: int | None, shrink_time: float, save_dir: Path | None) -> None:
    """Run your own loop (any program, any language) against the catalogue and judge what it did.

    For every sequence the replay server serves it on a loopback port and COMMAND runs once with
    OPENAI_BASE_URL (and OPENAI_API_BASE), ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, dummy API keys,
    STOPBENCH_PROMPT (the task), STOPBENCH_TOOLS (JSON: the tools the sequence calls, with parameter
    schemas), the same tools to run on the bench (STOPBENCH_MCP_COMMAND: an MCP stdio server's argv as
    JSON; STOPBENCH_MCP_URL: MCP over HTTP; STOPBENCH_TOOLS_URL: plain HTTP), STOPBENCH_DIALECT,
    STOPBENCH_MODEL, STOPBENCH_STEERS and STOPBENCH_RESULT (a path where the program may write
    {"ok": bool, "reason": str, "final": str}; without it exit status 0 means success). The server
    infers each step from the requests; the cell, column <name>@live, is judged against the
    sequence's require: block. Writes reports/live/<name>.json.

    With --faults RECIPE the server cuts, breaks, garbles, stalls or paces its answers, or answers with
    an HTTP error as the provider would (Retry-After included), and the verdict knows it: success on a
    broken answer, or a retry sooner than Retry-After, breaks a requirement. With --trials K each
    sequence runs K times: the table shows pass^K and the cells that flip between trials.

    Exit status: 0 when every cell meets its requirements, 1 when one breaks them (or the program
    crashed, hung or wrote a bad result), 2 on unusable input (a bad sequence file, no matching
    sequence, a command that cannot be started or names a script that is not there, a program whose
    first runs all end before their first model request the same way: that reason is printed once).
    """
    from bench.check.processes import Terminated, sigterm_as_interrupt
    from bench.check.report import (
        ProgressLine,
        column,
        not_run_line,
        note_lines,
        table,
        violation_lines,
    )
    from bench.check.runner import LiveRun, NotStarting, cores_available, run_all, scripts_tool_results

    loops = _loops(command, name, named)
    _refuse_missing_scripts(loops)
    if preload:
        _refuse_unpreloadable(loops, fuzz_n is not None)
    jobs = jobs or cores_available()
    recipe = fault_recipe(faults_spec, seed)
    if fuzz_n is not None:
        if recipe is not None or trials > 1:
            raise click.UsageError("--fuzz runs each generated sequence once, without --faults or --trials")
        if len(loops) != 1:
            raise click.UsageError("--fuzz runs one command")
        if ids or tags:
            raise click.UsageError("--fuzz generates its sequences: -s and --tag do not apply (--dialect does)")
        try:  # SIGTERM as Ctrl-C, as below
            with sigterm_as_interrupt():
                code = fuzz_live(loops[0][0], loops[0][1], fuzz_n, seed=seed or 0, dialects=dialects, timeout=timeout,
                                 safety_cap=safety_cap, shrink_time=shrink_time,
                                 save_dir=save_dir or sequences_dir / "found", markers=(ok_marker, error_marker))
        except KeyboardInterrupt as exc:
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            click.echo(f"interrupted ({how}): the program was ended; no finding, nothing written", err=True)
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(code)

    refuse_unwritable([junit_path, *([] if no_report else [reports_dir / "live" / f"{n}.json" for n, _ in loops])])
    cat = load_sequences(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    if cat.problems:
        click.echo(f"{len(cat.problems)} unusable sequence file(s); fix them first", err=True)
        sys.exit(EXIT_BAD_INPUT)
    unknown = sorted(set(ids) - {s.id for s in cat.sequences})
    if unknown:
        click.echo(f"no sequence {', '.join(unknown)} under {sequences_dir}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    seqs = select(cat.sequences, ids, tags, dialects)
    if not seqs:
        click.echo(f"no sequence under {sequences_dir} matches the filters", err=True)
        sys.exit(EXIT_BAD_INPUT)
    other_dialects = len(select(cat.sequences, ids, tags, ())) - len(seqs) if dialects else 0
    scripted = [] if bench_tools else [s.id for s in seqs if scripts_tool_results(s)]
    if scripted:
        click.echo(f"not run: {len(scripted)} sequence(s) script their tool results (result:), which a live "
                   f"loop's own tools do not return (--bench-tools runs them): {', '.join(scripted)}", err=True)
        seqs = [s for s in seqs if s.id not in scripted]
    if not seqs:
        click.echo("nothing to run: every chosen sequence scripts its tool results", err=True)
        sys.exit(EXIT_BAD_INPUT)

    run_env = dict(os.environ)
    if virtual_clock:
        from bench.check.program import virtual_clock_env
        try:
            run_env = virtual_clock_env(run_env)
        except FileNotFoundError as exc:
            click.echo(f"--virtual-clock: {exc.strerror}: {exc.filename} is missing", err=True)
            sys.exit(EXIT_BAD_INPUT)
    started = time.monotonic()
    runs: dict[str, list[LiveRun]] = {}
    every: dict[str, list[list[LiveRun]]] = {}  # every trial's runs, trial-major
    total = len(seqs) * len(loops) * trials
    done = [0]
    from bench.check.trials import trial_seeds
    seeds = trial_seeds(recipe.seed if recipe is not None else 0, trials)

    bar = ProgressLine(total, _to_stderr, started,
                       shutil.get_terminal_size().columns) if sys.stderr.isatty() and not as_json else None

    def progress(name: str) -> Callable[[LiveRun], None]:
        def show(run: LiveRun) -> None:
            done[0] += 1
            if bar is not None:
                bar(name, run, time.monotonic())
        return show

    for loop_name, argv in loops:
        try:  # SIGTERM (CI's timeout) as Ctrl-C: every program and all it started ended, no temporary folder left
            with sigterm_as_interrupt():
                every[loop_name] = [
                    run_all(seqs, argv, name=column(loop_name), jobs=jobs, timeout=timeout, safety_cap=safety_cap,
                            cwd=Path.cwd(), env=run_env, progress=progress(loop_name),
                            ok_marker=ok_marker, error_marker=error_marker,
                            faults=None if recipe is None else recipe.with_seed(seeds[t]), preload=preload,
                            bench_tools=bench_tools)
                    for t in range(trials)]
                runs[loop_name] = every[loop_name][0]
        except OSError as exc:
            _stop(bar, f"cannot run {shlex.join(argv)}: {exc.strerror or exc}", EXIT_BAD_INPUT)
        except NotStarting as exc:
            _stop(bar, f"cannot run {shlex.join(argv)}: its first {exc.runs} runs ended before their first model "
                  f"request, each the same way: {exc.reason}; the check stopped there, nothing written",
                  EXIT_BAD_INPUT)
        except KeyboardInterrupt as exc:
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            _stop(bar, f"interrupted ({how}) after {done[0]} of {total} run(s): the programs were ended; no "
                  "verdict, no report written", EXIT_INTERRUPTED)
    if bar is not None:
        bar.end()
    wall = time.monotonic() - started

    names = [n for n, _ in loops]
    if as_json:
        from bench.check.report import cell_json
        for n in names:
            for t, trial in enumerate(every[n]):
                for r in trial:
                    row = {**cell_json(r.cell, r.observed, r.faults), "seconds": round(r.seconds, 2)}
                    if trials > 1:
                        row["trial"] = t + 1
                    click.echo(json.dumps(row, ensure_ascii=False))
    elif trials > 1:
        _print_trials(names, every, trials, seeds if recipe is not None else None)
    else:
        click.echo(table(names, runs), nl=False)
        problems = [line for n in names for line in violation_lines(n, runs[n])]
        if problems:
            click.echo("\nrequirements broken:")
            for line in problems:
                click.echo(f"  {line}")
        from bench.check.faulted import fault_lines
        injected = [line for n in names for line in fault_lines(column(n), runs[n])]
        if injected and recipe is not None:
            click.echo(f"\nfaults injected ({recipe.name}, seed {recipe.seed}):")
            for line in injected:
                click.echo(f"  {line}")
        unasked = [line for n in names for line in note_lines(n, runs[n])]
        if unasked:
            click.echo("\nserved otherwise than the sequence says (what a real provider does there):")
            for line in unasked:
                click.echo(f"  {line}")
        click.echo("")
        for n in names:
            bad = sum(r.failed for r in runs[n])
            capped = sum(r.cell.outcome == "capped" for r in runs[n])
            crashed = sum(r.cell.outcome == "crashed" for r in runs[n])
            guessed = sum(bool(r.cell.violations) and all(v.guess for v in r.cell.violations) for r in runs[n])
            on_a_guess = f", {guessed} only on a guess (a result read by its wording)" if guessed else ""
            click.echo(f"{column(n)}: {len(seqs) - bad} of {len(seqs)} sequence(s) meet their requirements, "
                       f"{bad} do not ({capped} capped, {crashed} crashed{on_a_guess})")
        left_out = not_run_line(other_dialects, dialects, len(scripted))
        if left_out:
            click.echo(left_out)
    if not no_report:
        extra: dict[str, object] = {}
        if recipe is not None:
            extra["faults"] = {"recipe": recipe.name, "seed": recipe.seed}
        if trials > 1:
            extra["trial_seeds"] = list(seeds) if recipe is not None else None
        _write_records(reports_dir, loops, runs, every, extra, merge=bool(ids or tags or dialects) and not fresh)
    if junit_path is not None:
        from bench.report.junit import check_case, write_junit
        write_junit(junit_path, "stopbench check", (_trial_case(check_case(r.cell), t, trials)
                                                    for n in names for t, trial in enumerate(every[n])
                                                    for r in trial))
        click.echo(f"wrote {junit_path}", err=True)
    click.echo(f"{total} run(s) of {len(seqs)} sequence(s) in {wall:.1f} s wall time (-j {jobs})",
               err=True)  # stdout is the verdict, the same on every run of a deterministic program
    sys.exit(EXIT_MISMATCH if any(r.failed for n in names for trial in every[n] for r in trial) else EXIT_OK)


def _write_records(reports_dir: Path, loops: list[tuple[str, list[str]]], runs: dict[str, Any],
                   every: dict[str, Any], extra: dict[str, object], *, merge: bool) -> None:
    """Each loop's live record: written whole, or with `merge` (a run of some sequences) merged into
    the one there (:func:`bench.check.report.merge_live`); a line on stderr says which."""
    from datetime import UTC, datetime

    from bench.check.report import live_record, merge_live, write_live

    made = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for n, argv in loops:
        if not merge:
            click.echo(f"wrote {write_live(reports_dir, n, argv, runs[n], every[n], extra)}", err=True)
            continue
        out = merge_live(reports_dir, live_record(n, argv, runs[n], every[n], extra), made)
        if out.afresh:
            click.echo(f"note: {out.afresh}", err=True)
        kept = f" (its {out.kept} other cell(s) kept; --fresh writes this run's alone)" if out.kept else ""
        click.echo(f"wrote {out.path}{kept}", err=True)


def _to_stderr(text: str) -> None:
    click.echo(text, err=True, nl=False)


def _stop(bar: Any, message: str, code: int) -> NoReturn:
    """End the progress line (if any), say `message` on stderr, exit with `code`."""
    if bar is not None:
        bar.end()
    click.echo(message, err=True)
    sys.exit(code)


def _refuse_unpreloadable(loops: list[tuple[str, list[str]]], fuzzing: bool) -> None:
    """Exit 2 with one line when --preload is given for a command that is not a Python program (or with --fuzz)."""
    from bench.check.preload import refusal

    if fuzzing:
        _stop(None, "--preload runs the catalogue's sequences, not --fuzz's", EXIT_BAD_INPUT)
    for _, argv in loops:
        why = refusal(argv)
        if why is not None:
            _stop(None, why, EXIT_BAD_INPUT)


def _refuse_missing_scripts(loops: list[tuple[str, list[str]]]) -> None:
    """Exit 2 with one line, before any run, when a loop's command names a script that is not there."""
    from bench.check.command import missing_script

    for _, argv in loops:
        missing = missing_script(argv, Path.cwd())
        if missing is not None:
            click.echo(f"cannot run {shlex.join(argv)}: {missing}: no such file (in {Path.cwd()})", err=True)
            sys.exit(EXIT_BAD_INPUT)


def _trial_case(case: Any, trial: int, trials: int) -> Any:
    """A JUnit case named after its trial when there are several (names stay unique in a class)."""
    from dataclasses import replace
    return case if trials == 1 else replace(case, name=f"{case.name} [trial {trial + 1}]")


def _print_trials(names: list[str], every: dict[str, list[list[Any]]], k: int, seeds: tuple[int, ...] | None) -> None:
    """The trials' table, the cells that flip, the broken requirements of each trial, pass^k per loop."""
    from bench.check.report import column, live_label, violation_lines
    from bench.check.trials import by_sequence, flip_lines, pass_k, table

    rows = {n: by_sequence(every[n]) for n in names}
    click.echo(table(names, rows, k, live_label, column), nl=False)
    flips = [line for n in names for line in flip_lines(n, rows[n], live_label, column)]
    if flips:
        click.echo("\ncells that differ between trials:")
        for line in flips:
            click.echo(f"  {line}")
    broken = [f"trial {t + 1}: {line}" for n in names for t, trial in enumerate(every[n])
              for line in violation_lines(n, trial)]
    if broken:
        click.echo("\nrequirements broken:")
        for line in broken:
            click.echo(f"  {line}")
    click.echo("")
    if seeds is not None:
        click.echo(f"fault seeds by trial: {', '.join(str(s) for s in seeds)} (the recipe's seed + the trial's index)")
    for n in names:
        good, total = pass_k(rows[n])
        flipping = sum(r.flips for r in rows[n])
        click.echo(f"{column(n)}: pass^{k} {good} of {total} sequence(s) ({good / total:.0%}); "
                   f"{flipping} flip between trials")


def fuzz_live(name: str, argv: list[str], n: int, *, seed: int, dialects: tuple[str, ...], timeout: float,
              safety_cap: int, shrink_time: float, save_dir: Path,
              markers: tuple[str | None, str | None] = (None, None)) -> int:
    """``--fuzz N``: generated sequences against the program; the exit status."""
    from bench.check.fuzz import LIVE_DIALECTS, live_failure, save_finding, search
    from bench.check.report import column
    from bench.check.runner import run_program
    from bench.engine.model import Cell

    def judge_one(seq: Sequence) -> tuple[tuple[str, str] | None, Cell]:
        run = run_program(seq, argv, name=column(name), timeout=timeout, safety_cap=safety_cap, cwd=Path.cwd(),
                          ok_marker=markers[0], error_marker=markers[1])
        return live_failure(seq, run.cell), run.cell

    chosen = tuple(d for d in dialects) or LIVE_DIALECTS
    started = time.monotonic()
    try:
        out = search(judge_one, n, seed=seed, dialects=chosen, shrink_time=shrink_time,  # type: ignore[arg-type]
                     progress=lambda msg: click.echo(f"fuzz {msg}", err=True))
    except OSError as exc:
        click.echo(f"cannot run {shlex.join(argv)}: {exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
    wall = time.monotonic() - started
    if out.finding is None:
        click.echo(f"{column(name)}: every reference property held on {out.examples} generated sequence(s) "
                   f"(seed {seed}); {wall:.1f} s wall time")
        return EXIT_OK
    f = out.finding
    note = (f"shrinking stopped at its budget of {shrink_time:g} s" if out.shrink_stopped
            else f"shrunk in {out.shrink_seconds:.1f} s")
    path = save_finding(f, save_dir, name, seed, "not fully shrunk: the time budget ran out" if out.shrink_stopped
                        else "shrunk")
    click.echo(f"{column(name)} breaks {f.prop}: {f.why}")
    click.echo(f"smallest failing sequence ({len(f.sequence.turns)} turn(s), {f.sequence.dialect}, then: "
               f"{f.sequence.then}) written to {path}")
    click.echo(f"{out.examples} program run(s): the first failure after {out.search_seconds:.1f} s, {note} "
               f"({out.failing_seen} failing example(s) seen); {wall:.1f} s wall time")
    return EXIT_MISMATCH
