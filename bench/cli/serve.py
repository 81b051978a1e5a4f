"""``stopbench serve``: serve one sequence as a model endpoint and record what the client does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from bench.catalogue.files import write_atomically
from bench.cli._common import EXIT_BAD_INPUT, fault_recipe, load_sequences, only_mine_option, sequences_option
from bench.cli._stops import CUT, StopSignals, quiet_cut_answers
from bench.errors import UnusableInput
from bench.serve.app import DEFAULT_MAX_BODY, DEFAULT_READ_TIMEOUT, DEFAULT_WRITE_TIMEOUT, Session
from bench.serve.server import DEFAULT_HOST, BackgroundServer, bind_problem
from bench.wires.registry import names


@click.command("serve")
@click.argument("sequence")
@click.option("--dialect", type=click.Choice(names()), default=None,
              help="Answer turns only on this API (the others get 404). Default: all three.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on; 0 picks a free one (printed).")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to bind (keep it loopback).")
@sequences_option
@only_mine_option
@click.option("--max-body", type=click.IntRange(min=1), default=DEFAULT_MAX_BODY, show_default=True,
              help="Largest request body in bytes; larger ones get 413.")
@click.option("--read-timeout", type=click.FloatRange(min=0.01), default=DEFAULT_READ_TIMEOUT,
              show_default=True, help="Seconds to wait for a request body (then 408).")
@click.option("--write-timeout", type=click.FloatRange(min=0.01), default=DEFAULT_WRITE_TIMEOUT,
              show_default=True, help="Seconds a stream waits for a client that stops reading.")
@click.option("--ok-marker", default=None,
              help="Text that every successful tool result contains (results without it count as failed).")
@click.option("--error-marker", default=None,
              help="Text that every failed tool result contains (results with it count as failed).")
@click.option("--faults", "faults_spec", default=None, metavar="RECIPE",
              help="Inject faults and pacing into the answers: a recipe file (YAML) or a preset (cut-after-3, "
                   "rate-limited, slow-stream, ...; docs/how-to/faults.md). What was injected is in the records "
                   "and the observed steps.")
@click.option("--seed", type=int, default=None, help="With --faults: the recipe's seed instead of its own.")
@click.option("--keep-bodies", is_flag=True, default=False,
              help="Keep every request body of a run's journal for /_stopbench/records (debugging). By default "
                   "past 16 MiB of bodies a run keeps each step's observation and releases the bodies it read.")
@click.option("--observed", "observed_file", type=click.Path(path_type=Path), default=None,
              help="On exit, write every run's observed steps here as JSON (default: print to stdout).")
def serve_cmd(sequence: str, dialect: str | None, port: int, host: str, sequences_dir: Path, max_body: int,
              read_timeout: float, write_timeout: float, ok_marker: str | None, error_marker: str | None,
              observed_file: Path | None, faults_spec: str | None, seed: int | None, keep_bodies: bool) -> None:
    """Serve SEQUENCE (its id) as an OpenAI Chat Completions, Anthropic Messages and OpenAI Responses
    endpoint, JSON or SSE as each request asks. Request i is answered by turn i. Every request is
    recorded; on exit (Ctrl-C or SIGTERM) the client's observed decisions are written as JSON.

    Admin: GET /_stopbench/state, /_stopbench/records, /_stopbench/observed;
    POST /_stopbench/run {"sequence": ID} serves another sequence as a new run.
    Tools: GET /_stopbench/tools lists the sequence's tools; POST /_stopbench/tools/NAME with the
    call's arguments runs one (recorded, so the observation knows which calls ran).

    With --faults RECIPE the answers are cut, broken, garbled, stalled, paced or replaced by an HTTP
    error as the provider sends it (Retry-After included); the report says what, by step.

    Exit status: 0 after a clean stop; 2 when the sequence, the recipe or the port cannot be used, or the
    observed steps cannot be written to --observed (they are then printed on stdout instead)."""
    if observed_file is not None and not observed_file.parent.is_dir():
        raise UnusableInput(f"cannot write {observed_file}: no folder {observed_file.parent}")
    recipe = fault_recipe(faults_spec, seed)
    cat = load_sequences(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    seq = cat.by_id(sequence)
    if seq is None:
        raise UnusableInput(f"no usable sequence {sequence!r} under {sequences_dir}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: binding {host}, not loopback: anything that reaches it can use it", err=True)
    session = Session(seq, dialect=dialect, catalogue={s.id: s for s in cat.sequences},  # type: ignore[arg-type]
                      ok_marker=ok_marker, error_marker=error_marker, max_body=max_body, read_timeout=read_timeout,
                      write_timeout=write_timeout, faults=recipe, keep_bodies=keep_bodies)
    srv = _started(session, host, port)
    stop = StopSignals()
    faulted = "" if recipe is None else f", faults: {recipe.name} (seed {recipe.seed})"
    click.echo(f"serving {seq.id} ({len(seq.turns)} turns, then: {seq.then}{faulted}) at {srv.url}  "
               f"(OpenAI base URL {srv.base_url}); Ctrl-C to stop", err=True)
    try:
        stop.wait()
    finally:
        _stop(srv, stop.names)
        _write_observed(session, observed_file)


def _started(session: Session, host: str, port: int) -> BackgroundServer:
    """The server of `session`, started on `host`:`port` (exit 2 with one line when it cannot be)."""
    unbindable = bind_problem(host, port)
    if unbindable is not None:
        raise UnusableInput(f"cannot serve on {host}:{port}: {unbindable}")
    srv = BackgroundServer(session, host=host, port=port)
    try:
        srv.start()
    except RuntimeError as exc:
        raise UnusableInput(str(exc)) from None
    return srv


def _stop(srv: BackgroundServer, stopped_by: list[str]) -> None:
    """Stop the server, saying how many answers the stop cut off (and which signal stopped it)."""
    quiet_cut_answers()
    before = CUT.count
    srv.stop()
    if (cut := CUT.count - before) > 0:
        how = "Ctrl-C" if stopped_by[:1] == ["SIGINT"] else stopped_by[0] if stopped_by else "stop"
        click.echo(f"stopped ({how}): cut off {cut} answer{'' if cut == 1 else 's'} still being sent", err=True)


def _write_observed(session: Session, observed_file: Path | None) -> None:
    """Every run's observed steps as JSON: to `observed_file`, or on stdout (also when it cannot be
    written, then exit 2)."""
    text = json.dumps(session.report(), ensure_ascii=False, indent=2) + "\n"
    if observed_file is None:
        click.echo(text, nl=False)
        return
    try:
        write_atomically(observed_file, text)
    except (OSError, UnusableInput) as exc:
        click.echo(f"cannot write {observed_file}: {exc}; the observed steps follow on stdout", err=True)
        click.echo(text, nl=False)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(f"observed steps written to {observed_file}", err=True)
