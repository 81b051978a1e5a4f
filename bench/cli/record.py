"""``stopbench record --upstream URL``: a recording proxy in front of a model API."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bench.cli._common import EXIT_BAD_INPUT, fault_recipe, not_empty_path
from bench.cli._stops import StopSignals
from bench.errors import UnusableInput
from bench.record.redact import DEFAULT_PATTERNS
from bench.serve.server import DEFAULT_HOST, bind_problem

if TYPE_CHECKING:
    from bench.faults import Recipe
    from bench.record.recording import Recorder
    from bench.serve.server import BackgroundUvicorn

GRACE = 5
"""Seconds the proxy's stop gives answers still on their way before it cancels them (and records them as cut)."""


def _upstream(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not re.match(r"^https?://[^/\s]+", value):
        raise click.BadParameter(f"expected an http:// or https:// URL, got {value!r}", param=param)
    return value.rstrip("/")


def unwritable(out: Path) -> str | None:
    """Why the recording cannot be written into `out` (a file is created there and removed; for a
    folder still to be made, in the nearest folder that exists), or None."""
    import tempfile

    where = out
    while not where.exists() and where.parent != where:
        where = where.parent
    if not where.is_dir():
        return f"{where} is not a folder"
    try:
        with tempfile.TemporaryFile(dir=where, prefix=".stopbench-record-"):
            pass
    except OSError as exc:
        return f"cannot write in {where} ({exc.strerror or exc})"
    return None


def _patterns(_ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise click.BadParameter(f"{pattern!r} is not a regular expression ({exc})", param=param) from None
    return value


@click.command("record")
@click.option("--upstream", required=True, callback=_upstream, metavar="URL",
              help="The API to pass requests on to, e.g. https://api.openai.com (paths are kept as the client "
                   "sends them).")
@click.option("--out", type=click.Path(file_okay=False), default="recordings", show_default=True,
              callback=not_empty_path, help="Folder the recording is written to.")
@click.option("--name", default=None, help="The recording's name: its files are NAME-<k>.yaml and NAME-<k>.cassette "
                                           "[default: recorded-<UTC date and time>].")
@click.option("--redact", "patterns", multiple=True, metavar="PATTERN", callback=_patterns,
              help="A regular expression whose matches are never written (repeatable); added to the default set.")
@click.option("--no-default-redactions", is_flag=True,
              help=f"Do not apply the default key shapes ({', '.join(w for w, _ in DEFAULT_PATTERNS)}); credential "
                   "headers are never written either way.")
@click.option("--port", type=click.IntRange(0, 65535), default=8790, show_default=True,
              help="Port to listen on; 0 picks a free one (printed).")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to bind (keep it loopback).")
@click.option("--force", is_flag=True, help="Write over a recording of the same name.")
@click.option("--faults", "faults_spec", default=None, metavar="RECIPE",
              help="Deliver the upstream's model answers to the client as a fault recipe says (a recipe file or a "
                   "preset: cut-after-3, rate-limited, slow-stream, ...; docs/how-to/faults.md); the recording keeps "
                   "the upstream's bytes and says what was injected.")
def record_cmd(upstream: str, out: Path, name: str | None, patterns: tuple[str, ...], no_default_redactions: bool,
               port: int, host: str, force: bool, faults_spec: str | None) -> None:
    """Pass every request on to --upstream and its answer back unchanged, streams chunk by chunk, and
    write each conversation as a sequence (importers' rules applied) beside its redacted cassette.

    Point your client's base URL at the proxy (OPENAI_BASE_URL=http://127.0.0.1:PORT/v1,
    ANTHROPIC_BASE_URL=http://127.0.0.1:PORT, a Gemini or Bedrock endpoint URL of
    http://127.0.0.1:PORT). Every wire the replay server speaks is recorded: OpenAI Chat and Responses,
    Anthropic Messages, Gemini generateContent and streamGenerateContent, Bedrock Converse and
    ConverseStream. Credential headers are never written; the default key shapes and every --redact
    pattern are masked in requests, answers and the raw stream frames, also where a secret is split
    across chunks or escaped; what cannot be decoded (a cut event-stream message, a body past the
    inflation bounds or in another coding) is withheld with a note. An answer the upstream broke off
    is recorded as the broken connection the client got. The files are written again after each
    exchange; Ctrl-C or SIGTERM stops the proxy.

    With --faults RECIPE each model answer is read whole from the upstream and sent on as the recipe
    delivers it (cut, broken, garbled, stalled, paced, or an HTTP error in the provider's shape), its
    requests counted from the proxy's start; the cassette and sequence keep the upstream's bytes, and
    the sequence's provenance and the cassette say what the client got instead.

    Exit status: 0 after a clean stop; 2 when an option, the port or the output folder cannot be used,
    or when a conversation could not be written (a full disk: the last line names what was lost).
    """
    from bench.catalogue.files import display_path
    from bench.record.recording import Recorder
    from bench.record.redact import redactor

    recipe = fault_recipe(faults_spec, prefix="cannot record: ")
    name = name or f"recorded-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    _refuse(out, name, force=force, host=host, port=port)
    recorder = Recorder(upstream, out, name, redactor(patterns, defaults=not no_default_redactions))
    proxy = _proxy(recorder, recipe, host, port)
    stop = StopSignals()
    faulted = "" if recipe is None else f", answers delivered as the recipe {recipe.name} says"
    click.echo(f"recording {upstream} at {proxy.url} into {display_path(out)}/{name}-*{faulted}; Ctrl-C to stop",
               err=True)
    try:
        stop.wait()
    finally:
        proxy.stop(timeout=GRACE + 5)  # past the grace: a request still waiting on the upstream is recorded
        if recorder.writing():
            click.echo("writing the last exchanges' files (a large conversation takes seconds)...", err=True)
        recorder.close()
    _report(recorder)


def _refuse(out: Path, name: str, *, force: bool, host: str, port: int) -> None:
    """Exit 2 with one line on a --name that cannot name the files, a recording of that name already
    in `out` (without `force`), an address that cannot be listened on, or an `out` that cannot be
    written; a warning for an address that is not loopback."""
    from bench.check.limits import loop_name_problem

    if (problem := loop_name_problem(name)) is not None:  # one rule with check --name
        raise UnusableInput(f"cannot record: --name {name!r}: {problem}")
    taken = sorted(out.glob(f"{name}-*")) if out.is_dir() else []
    if taken and not force:
        raise UnusableInput(f"cannot record: {out} already holds a recording named {name} ({taken[0].name}; use "
                            "--force or another --name)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: binding {host}, not loopback: anything that reaches it can use your upstream "
                   "credentials through it", err=True)
    unbindable = bind_problem(host, port)
    if unbindable is not None:
        raise UnusableInput(f"cannot listen on {host}:{port}: {unbindable}")
    problem = unwritable(out)
    if problem is not None:
        raise UnusableInput(f"cannot record: --out {out}: {problem}")


def _proxy(recorder: Recorder, recipe: Recipe | None, host: str, port: int) -> BackgroundUvicorn:
    """The recording proxy, started on `host`:`port` (exit 2 with uvicorn's line when it cannot)."""
    import uvicorn

    from bench.record.proxy import create_proxy
    from bench.serve.server import BackgroundUvicorn

    config = uvicorn.Config(create_proxy(recorder, faults=recipe), host=host, port=port, log_level="warning",
                            lifespan="off", access_log=False, timeout_graceful_shutdown=GRACE)
    proxy = BackgroundUvicorn(config, "recording proxy", "stopbench-record")
    try:
        proxy.start()
    except RuntimeError as exc:
        raise UnusableInput(str(exc)) from None
    return proxy


def _report(recorder: Recorder) -> None:
    """What was recorded, each note, and what was lost (then exit 2: a recording short of what the
    proxy passed is not a clean stop)."""
    from bench.catalogue.files import display_path

    sequences = [p for p in recorder.written if p.suffix == ".yaml"]
    for note in recorder.problems:
        click.echo(f"note: {note}", err=True)
    click.echo(f"recorded {len(recorder.conversations)} conversation(s): "
               + (", ".join(display_path(p) for p in sequences) or "no sequence written"), err=True)
    if recorder.lost:
        click.echo("cannot record: lost, not on disk as recorded: "
                   + "; ".join(f"{what}: {why}" for what, why in recorder.lost.items()), err=True)
        sys.exit(EXIT_BAD_INPUT)
