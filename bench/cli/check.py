"""``stopbench check -- COMMAND``: run your own loop against the catalogue over HTTP and judge it."""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import click

from bench.check import (
    CheckOptions,
    CheckResult,
    Chosen,
    LiveRun,
    Loop,
    choose,
    default_name,
    json_text,
    planned_runs,
    refuse_unrunnable,
    run_check,
    verdict_text,
    wall_line,
    write_check_junit,
    write_records,
)
from bench.check.limits import MAX_TRIALS, loop_name_problem, refuse_unwritable
from bench.check.processes import Terminated, sigterm_as_interrupt
from bench.check.report import ProgressLine, column
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
from bench.errors import UnusableInput
from bench.wires.dialects import DIALECTS


def _loops(command: tuple[str, ...], name: str | None, named: tuple[str, ...]) -> tuple[Loop, ...]:
    """COMMAND (named `name`, else :func:`~bench.check.options.default_name`) and each ``-c NAME=COMMAND``;
    a usage error (exit 2) for a spec or a name that cannot be used, or none at all."""
    loops: list[Loop] = []
    if command:
        loops.append(Loop(name or default_name(command), command))
    elif name:
        raise click.UsageError("--name names the COMMAND after --; there is none")
    for spec in named:
        label, eq, line = spec.partition("=")
        if not eq or not label or not line.strip():
            raise click.UsageError(f"-c {spec!r}: expected NAME=COMMAND")
        try:
            loops.append(Loop(label, tuple(shlex.split(line))))
        except ValueError as exc:  # shlex's "No closing quotation", "No escaped character"
            raise click.UsageError(f"-c {spec!r}: {str(exc)[:1].lower()}{str(exc)[1:]}") from None
    if not loops:
        raise click.UsageError("no command: stopbench check [OPTIONS] -- COMMAND [ARGS...]")
    if command and not name:  # a default name never collides with another loop of the run
        loops[0] = Loop(_unique(loops[0].name, {loop.name for loop in loops[1:]}), loops[0].argv)
    for loop in loops:
        if (problem := loop_name_problem(loop.name)) is not None:
            raise click.UsageError(f"loop name {loop.name!r}: {problem}")
    names = [loop.name for loop in loops]
    if len(set(names)) != len(names):
        raise click.UsageError(f"two loops named the same: {', '.join(names)}")
    return tuple(loops)


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or with the first number from 2 that makes it differ from every name in `taken`."""
    n = 2
    out = name
    while out in taken:
        out, n = f"{name}-{n}", n + 1
    return out


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
    loops = _loops(command, name, named)
    refuse_unrunnable(loops, Path.cwd(), preload=preload, fuzzing=fuzz_n is not None)
    options = CheckOptions(loops, ids, tags, dialects, bench_tools=bench_tools, timeout=timeout, jobs=jobs,
                           safety_cap=safety_cap, ok_marker=ok_marker, error_marker=error_marker,
                           virtual_clock=virtual_clock, preload=preload, faults=fault_recipe(faults_spec, seed),
                           trials=trials, cwd=Path.cwd(), reports=None if no_report else reports_dir, fresh=fresh,
                           junit=junit_path)
    if fuzz_n is not None:
        sys.exit(_fuzz(options, fuzz_n, seed or 0, shrink_time, save_dir or sequences_dir / "found"))
    refuse_unwritable(options.outputs())
    chosen = choose(options, _catalogue(sequences_dir), str(sequences_dir))
    if chosen.scripted:
        click.echo(f"not run: {len(chosen.scripted)} sequence(s) script their tool results (result:), which a live "
                   f"loop's own tools do not return (--bench-tools runs them): {', '.join(chosen.scripted)}", err=True)
    result = _run(options, chosen, bar=sys.stderr.isatty() and not as_json)
    click.echo(json_text(result) if as_json else verdict_text(result), nl=False)
    _write(result)
    sys.exit(EXIT_MISMATCH if result.failed else EXIT_OK)


def _catalogue(sequences_dir: Path) -> list[Sequence]:
    """The catalogue `--sequences` stands for; a bad sequence file is one line each, then exit 2."""
    cat = load_sequences(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    if cat.problems:
        raise UnusableInput(f"{len(cat.problems)} unusable sequence file(s); fix them first")
    return cat.sequences


def _run(options: CheckOptions, chosen: Chosen, *, bar: bool) -> CheckResult:
    """:func:`~bench.check.run.run_check` with a progress line on a terminal (`bar`); SIGTERM (CI's
    timeout) as Ctrl-C: every program and all it started ended, no temporary folder left, exit 2."""
    total = planned_runs(options, chosen)
    line = ProgressLine(total, _to_stderr, time.monotonic(), shutil.get_terminal_size().columns) if bar else None
    done = [0]

    def ended(name: str, run: LiveRun) -> None:
        done[0] += 1
        if line is not None:
            line(name, run, time.monotonic())

    try:
        with sigterm_as_interrupt():
            return run_check(options, chosen, progress=ended)
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
    finally:
        if line is not None:
            line.end()
    click.echo(f"interrupted ({how}) after {done[0]} of {total} run(s): the programs were ended; no verdict, no "
               "report written", err=True)
    sys.exit(EXIT_INTERRUPTED)


def _write(result: CheckResult) -> None:
    """The live records and the JUnit file, each said on stderr, then the wall time (stdout is the
    verdict, the same on every run of a deterministic program)."""
    for out in write_records(result):
        if out.afresh:
            click.echo(f"note: {out.afresh}", err=True)
        kept = f" (its {out.kept} other cell(s) kept; --fresh writes this run's alone)" if out.kept else ""
        click.echo(f"wrote {out.path}{kept}", err=True)
    junit = result.options.junit
    if junit is not None:
        write_check_junit(result, junit)
        click.echo(f"wrote {junit}", err=True)
    click.echo(wall_line(result), err=True)


def _to_stderr(text: str) -> None:
    click.echo(text, err=True, nl=False)


def _fuzz(options: CheckOptions, n: int, seed: int, shrink_time: float, save_dir: Path) -> int:
    """``--fuzz N`` (one command, no faults, trials or chosen sequences); SIGTERM as Ctrl-C, as a run's."""
    if options.faults is not None or options.trials > 1:
        raise click.UsageError("--fuzz runs each generated sequence once, without --faults or --trials")
    if len(options.loops) != 1:
        raise click.UsageError("--fuzz runs one command")
    if options.ids or options.tags:
        raise click.UsageError("--fuzz generates its sequences: -s and --tag do not apply (--dialect does)")
    try:
        with sigterm_as_interrupt():
            return fuzz_live(options, n, seed=seed, shrink_time=shrink_time, save_dir=save_dir)
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        click.echo(f"interrupted ({how}): the program was ended; no finding, nothing written", err=True)
        return EXIT_INTERRUPTED


def fuzz_live(options: CheckOptions, n: int, *, seed: int, shrink_time: float, save_dir: Path) -> int:
    """``--fuzz N``: generated sequences against the program (:func:`bench.check.fuzz.fuzz_program`),
    a failure shrunk and saved in `save_dir`; what it found said, and the exit status."""
    from bench.check.fuzz import fuzz_program, save_finding  # here: hypothesis is for --fuzz alone

    loop = options.loops[0]
    started = time.monotonic()
    try:
        out = fuzz_program(loop, options, n, seed=seed, shrink_time=shrink_time,
                           progress=lambda msg: click.echo(f"fuzz {msg}", err=True))
    except OSError as exc:
        click.echo(f"cannot run {shlex.join(loop.argv)}: {exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
    wall = time.monotonic() - started
    if out.finding is None:
        click.echo(f"{column(loop.name)}: every reference property held on {out.examples} generated sequence(s) "
                   f"(seed {seed}); {wall:.1f} s wall time")
        return EXIT_OK
    f = out.finding
    note = (f"shrinking stopped at its budget of {shrink_time:g} s" if out.shrink_stopped
            else f"shrunk in {out.shrink_seconds:.1f} s")
    path = save_finding(f, save_dir, loop.name, seed, "not fully shrunk: the time budget ran out"
                        if out.shrink_stopped else "shrunk")
    click.echo(f"{column(loop.name)} breaks {f.prop}: {f.why}")
    click.echo(f"smallest failing sequence ({len(f.sequence.turns)} turn(s), {f.sequence.dialect}, then: "
               f"{f.sequence.then}) written to {path}")
    click.echo(f"{out.examples} program run(s): the first failure after {out.search_seconds:.1f} s, {note} "
               f"({out.failing_seen} failing example(s) seen); {wall:.1f} s wall time")
    return EXIT_MISMATCH
