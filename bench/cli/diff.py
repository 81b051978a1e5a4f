"""``stopbench diff RECORDING -- COMMAND``: where a loop's requests first differ from a recording's."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bench.check import Terminated, run_program, sigterm_as_interrupt
from bench.cli._common import EXIT_INTERRUPTED, EXIT_MISMATCH, EXIT_OK
from bench.errors import UnusableInput

if TYPE_CHECKING:
    from bench.engine.model import Sequence
    from bench.record.divergence import Request
    from bench.record.redact import Redactor


@click.command("diff")
@click.argument("recording", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds the program may run.")
@click.option("--redact", "patterns", multiple=True, metavar="PATTERN",
              help="A pattern the recording was made with (record --redact): applied to the loop's requests too.")
def diff_cmd(recording: Path, command: tuple[str, ...], timeout: float, patterns: tuple[str, ...]) -> None:
    """Serve RECORDING (a sequence `stopbench record` wrote, its .cassette beside it) to COMMAND, as
    `stopbench check` does, and report the first request where the loop's requests differ from the
    recorded ones: both sides, as a unified diff of the normalised bodies (sorted JSON, the replay
    server's reply ids generalised, the loop's requests redacted as the recording was).

    Exit status: 0 when every request matches the recording; 1 when one differs (or the loop sent
    fewer or more); 2 when the recording or the command cannot be used, or on Ctrl-C/SIGTERM.
    """
    from bench.record.divergence import first_divergence, recorded_requests

    if not command:
        raise UnusableInput("cannot diff: no command to run (stopbench diff RECORDING -- COMMAND ...)")
    seq, cassette, rx = _recording(recording, patterns)
    recorded = recorded_requests(cassette)
    outcome, loop = _loop_requests(seq, list(command), timeout)
    found = first_divergence(recorded, loop, rx)
    ended = f"the loop ended {outcome}"
    if found is None:
        click.echo(f"{recording}: the loop's {len(loop)} request(s) match the recording's ({ended})")
        sys.exit(EXIT_OK)
    if found.loop is None:
        what = f"the loop sent {len(loop)} request(s), the recording has {len(recorded)}"
    elif found.recorded is None:
        what = f"the loop sent more requests than the recording's {len(recorded)}"
    else:
        what = "the bodies differ"
    click.echo(f"{recording}: the loop's requests first differ from the recording's at request {found.number} "
               f"({what}; {ended})")
    click.echo(found.diff(rx), nl=False)
    sys.exit(EXIT_MISMATCH)


def _recording(recording: Path, patterns: tuple[str, ...]) -> tuple[Sequence, Path, Redactor]:
    """The recording's sequence, its cassette and the redactor of `patterns`; exit 2 with one line
    when one of them cannot be used."""
    from bench.catalogue.files import what_it_is
    from bench.catalogue.load import SequenceError, load_sequence
    from bench.record.divergence import cassette_of
    from bench.record.redact import redactor

    if not recording.is_file():
        raise UnusableInput(f"cannot diff: no file {recording}")
    try:
        rx = redactor(patterns)
    except re.error as exc:
        raise UnusableInput(f"cannot diff: --redact: {exc}") from None
    try:
        seq = load_sequence(recording)
    except SequenceError as exc:
        raise UnusableInput(f"cannot diff: {recording}: {exc}") from None
    cassette = cassette_of(recording)
    if cassette.exists() and not cassette.is_file():
        raise UnusableInput(f"cannot diff: {cassette}: {what_it_is(cassette)}, not the recording's cassette")
    if not cassette.is_file():
        raise UnusableInput(f"cannot diff: {recording} has no cassette beside it ({cassette.name}): was it written "
                            "by stopbench record?")
    return seq, cassette, rx


def _loop_requests(seq: Sequence, argv: list[str], timeout: float) -> tuple[str, list[Request]]:
    """Serve `seq` to `argv` as ``check`` does, every body kept: how the loop ended, and its model
    requests. SIGTERM as Ctrl-C: the program ended, exit 2."""
    from bench.record.divergence import Request, is_model_path
    from bench.serve.app import Session
    from bench.serve.server import BackgroundServer

    try:
        with sigterm_as_interrupt(), BackgroundServer(Session(seq, journal=None, keep_bodies=True)) as srv:
            # every body kept: the comparison reads them all, after the run
            live = run_program(seq, argv, name="loop@diff", timeout=timeout, cwd=Path.cwd(), server=srv)
            records = [r for r in srv.session.records() if r.kind in ("model", "past_end", "refused")]
    except OSError as exc:
        raise UnusableInput(f"cannot run {shlex.join(argv)}: {exc.strerror or exc}") from None
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        click.echo(f"interrupted ({how}): the program was ended; no verdict", err=True)
        sys.exit(EXIT_INTERRUPTED)
    return live.cell.outcome, [Request(r.path, r.body) for r in records if is_model_path(r.path)]
