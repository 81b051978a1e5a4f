"""The ``stopbench`` command line: run, show, accept, list, import, fuzz, serve, conform, check, record, diff.

Subcommands are imported lazily: :data:`COMMANDS` maps each name to the ``module:attribute`` of its
click command and to the one line ``stopbench --help`` shows for it, so listing them imports none of
pandas, hypothesis, starlette or uvicorn. A subcommand's module is imported when it runs or when its
own ``--help`` is asked for. To add a subcommand, add one row to :data:`COMMANDS`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading

import click

from bench.errors import UnusableInput

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("bench.cli.run:run_cmd", "Replay every sequence through every predicate and compare with expected/."),
    "show": ("bench.cli.show:show_cmd", "Step through one sequence, turn by turn, with each predicate's decision."),
    "accept": ("bench.cli.accept:accept_cmd", "Write the current cells of predicates as reviewed expectations."),
    "list": ("bench.cli.list:list_cmd", "List the sequences and the predicates."),
    "import": ("bench.cli.import_:import_cmd", "Turn a provider capture into a sequence file."),
    "fuzz": ("bench.cli.fuzz:fuzz_cmd", "Search for sequences on which a predicate breaks a property."),
    "serve": ("bench.cli.serve:serve_cmd", "Serve one sequence as a model endpoint and record what the client does."),
    "conform": ("bench.cli.conform:conform_cmd", "Run original loops against the replay server; compare with ports."),
    "check": ("bench.cli.check:check_cmd", "Run your own loop (any program) against the catalogue and judge it."),
    "mcp-tools": ("bench.cli.mcp_tools:mcp_tools_cmd", "Serve the current run's tools over MCP (stdio or HTTP)."),
    "corpus": ("bench.cli.corpus:corpus_cmd", "Stream recorded traces through every predicate; count what they show."),
    "scorecard": ("bench.cli.scorecard:scorecard_cmd", "Install, record and score agent frameworks' own loops."),
    "init": ("bench.cli.init:init_cmd", "Scaffold your own sequence, predicate, pytest file and CI workflow here."),
    "record": ("bench.cli.record:record_cmd", "Record a model API through a proxy as redacted sequences."),
    "diff": ("bench.cli.diff:diff_cmd", "Replay a recording to your loop; show where its requests first differ."),
    "loop": ("bench.cli.loop:loop_cmd", "Run the bench's reference (or naive) loop as a program for stopbench check."),
    "pytest": ("bench.cli.pytest_:pytest_cmd", "Run pytest with stopbench's plugin in stopbench's own Python (pipx)."),
}
"""name -> ("module:attribute" of the click command, the short help ``stopbench --help`` lists)."""

EXTRAS: dict[str, tuple[str, frozenset[str]]] = {
    "corpus": ("corpus", frozenset({"msgspec", "pyarrow", "dask", "distributed"})),
}
"""subcommand -> (the optional dependency set it needs, ``stopbench[<extra>]``; the top-level modules
that set installs). Every other subcommand runs on the base install."""


def missing_extra(name: str, exc: ModuleNotFoundError) -> str | None:
    """The one line for subcommand `name` failing to import a module of its extra, or None."""
    extra = EXTRAS.get(name)
    missing = (exc.name or "").partition(".")[0]
    if extra is None or missing not in extra[1]:
        return None
    return (f"stopbench {name} needs the {extra[0]} extra ({missing} is not installed): "
            f"pip install 'stopbench[{extra[0]}]'")


def load_command(name: str) -> click.Command:
    """Import the subcommand `name` from its row of :data:`COMMANDS`."""
    target = COMMANDS[name][0]
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        line = missing_extra(name, exc)
        if line is None:
            raise
        raise UnusableInput(line) from None
    cmd = getattr(module, attr)
    if not isinstance(cmd, click.Command):
        raise TypeError(f"{target} is not a click command")
    return cmd


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when used (the click docs' lazy-loading
    pattern); the group's help lists them with their short help from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def invoke(self, ctx: click.Context) -> object:
        """Run the subcommand; an unusable input it raises ends it with its one line and exit 2."""
        try:
            return super().invoke(ctx)
        except UnusableInput as exc:
            click.echo(str(exc), err=True)
            ctx.exit(2)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="stopbench", prog_name="stopbench", message="%(prog)s %(version)s")
def cli() -> None:
    """stopbench: replay model-response sequences through agent-loop termination predicates.

    Every sequence (sequences/*.yaml) is replayed through every predicate (predicates/*.py); each
    cell (sequence x predicate) is compared with its reviewed expectation (expected/*.yaml) and
    judged against the sequence's requirements.
    """


def main() -> None:
    """Entry point: an unusable input anywhere below ends the command with its one line and exit 2;
    standard output is guarded as :mod:`bench.cli._streams` says, uvicorn's log as :mod:`bench.cli._stops` says."""
    from bench.cli._stops import quiet_cut_answers
    from bench.cli._streams import guard_stdout  # here: `cli --help` imports no subcommand's module

    guard_stdout()
    quiet_cut_answers()  # an answer a stop cuts off is no traceback (bench.cli._stops)
    try:
        cli(standalone_mode=True)
    except UnusableInput as exc:  # raised outside click's own handling (e.g. while a report is written)
        click.echo(str(exc), err=True)
        _exit_despite_foreign_threads(2)
        raise SystemExit(2) from None
    except SystemExit as exc:
        _exit_despite_foreign_threads(exc.code)
        raise


def _exit_despite_foreign_threads(code: object) -> None:
    """End the process now, outputs flushed, when a thread that is not a daemon is still running:
    the bench joins every thread it starts before its verdict, so such a thread is a predicate's,
    and the interpreter would wait for it (for ever) after the verdict. Without one the exit is the
    ordinary one, atexit handlers included."""
    main_thread = threading.main_thread()
    if not any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    if code is not None and not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)
