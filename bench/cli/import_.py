"""``stopbench import``: turn a provider capture into a sequence file."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click
import yaml

from bench.catalogue.load import SequenceError, display_path, load_yaml
from bench.cli._common import EXIT_BAD_INPUT, not_empty_path
from bench.errors import UnusableInput
from bench.importers import FORMATS, CaptureError, ImportResult, import_capture
from bench.importers.sequence import Options, build_sequences, write_all

_KEY = re.compile(r"^[A-Za-z][\w .-]*$")


def _pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not _KEY.match(key.strip()):
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=what)
        out[key.strip()] = value.strip()
    return out


def _require(values: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in _pairs(values, "--require").items():
        try:
            out[key] = load_yaml(value)  # true/false/3 as YAML reads them; the schema checks the rest
        except (yaml.YAMLError, UnusableInput) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise click.BadParameter(f"{key}={value!r} is not a YAML value ({first})", param_hint="--require") from None
    return out


def _slug(path: Path) -> str:
    stem = path.name.split(".", 1)[0]
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "imported"


@click.command("import")
@click.argument("capture", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="The capture's wire format; auto tells it from the extension and the first event. On a "
                   "cassette (.yaml/.yml), a dialect forces the dialect of its model calls.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, callback=not_empty_path,
              help="Sequence file to write [default: sequences/recorded/<capture stem>.yaml]. A capture "
                   "with several agent runs writes <stem>-run<N>.yaml beside it.")
@click.option("--title", default=None, help="The sequence's title.")
@click.option("--kind", type=click.Choice(["recorded", "constructed"]), default="recorded", show_default=True)
@click.option("--summary", default=None, help="First line of `source` (what `stopbench list` shows).")
@click.option("--meta", multiple=True, metavar="KEY=VALUE",
              help="A provenance line for `source` (repo, commit, path, blob, licence...); repeatable.")
@click.option("--tag", "tags", multiple=True, help="A tag to add; repeatable.")
@click.option("--then", type=click.Choice(["end", "repeat"]), default="end", show_default=True)
@click.option("--require", "require", multiple=True, metavar="KEY=VALUE",
              help="A requirement (ok=false, stops_within=2, no_dropped_calls=true...); repeatable.")
@click.option("--single-run", is_flag=True,
              help="Keep every model call of a cassette in one sequence (no splitting into agent runs).")
@click.option("--force", is_flag=True, help="Overwrite existing sequence files.")
@click.option("--dry-run", is_flag=True, help="Print the sequence YAML instead of writing it.")
def import_cmd(capture: Path, fmt: Any, out: Path | None, title: str | None, kind: str, summary: str | None,
               meta: tuple[str, ...], tags: tuple[str, ...], then: str, require: tuple[str, ...], single_run: bool,
               force: bool, dry_run: bool) -> None:
    """Turn CAPTURE (a response JSON, an SSE stream, JSON chunks, or a VCR cassette) into a sequence.

    Formats: OpenAI Chat Completions, Anthropic Messages, OpenAI Responses, Gemini generateContent,
    Bedrock Converse (the body, or botocore's stream events one per line), Ollama /api/chat (the
    body, or its NDJSON stream), Cohere v2 chat, each whole or streamed,
    and VCR / pytest-recording cassettes holding any of them (one turn per model call; interactions
    that are not model calls, such as an image download's 403, and bodies no importer reads are
    skipped and listed). A capture that cannot be read is reported with its
    file and line or event, and nothing is written. Unknown event types are counted and reported.

    Exit status: 0 when the sequence files were written (or printed with --dry-run); 2 when the
    capture, an option or the target cannot be used (nothing is written then).
    """
    shown = display_path(capture)
    try:
        result = import_capture(capture, fmt, shown)
    except CaptureError as exc:
        click.echo(f"cannot import: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    target = out or Path("sequences/recorded") / f"{_slug(capture)}.yaml"
    opts = Options(summary=summary, title=title, kind=kind, provenance=_pairs(meta, "--meta"), tags=tags,
                   then=then, require=_require(require), split_runs=not single_run)
    try:
        docs = build_sequences(result, target.stem, opts)
    except SequenceError as exc:
        click.echo(f"cannot import: {shown}: the result is not a valid sequence: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    paths = [(target.with_name(f"{seq_id}.yaml"), doc) for seq_id, doc in docs]
    _say_notes(result)
    if dry_run:
        from bench.importers.sequence import dump
        for path, doc in paths:
            click.echo(f"# {path}")
            click.echo(dump(doc), nl=False)
        return
    existing = [p for p, _ in paths if p.exists()]
    if existing and not force:
        click.echo(f"cannot import: {', '.join(map(str, existing))} already exist(s) (use --force)", err=True)
        sys.exit(EXIT_BAD_INPUT)
    write_all(paths)  # all or nothing; a target that cannot be written is one line and exit 2
    for (path, doc), run in zip(paths, result.runs(not single_run), strict=True):
        click.echo(f"wrote {path}: {len(run)} turn(s), {doc['dialect']}, finishes "
                   f"{', '.join(str(t.turn.finish_raw) for t in run)}")


def _say_notes(result: ImportResult) -> None:
    """On stderr: the event types no importer knows (with counts), the interactions skipped, the notes."""
    for what, n in sorted(result.unknown.items()):
        click.echo(f"unknown: {what} (x{n})", err=True)
    for skipped in result.skipped:
        click.echo(f"skipped: {skipped}", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
