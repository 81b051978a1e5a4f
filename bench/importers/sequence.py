"""An import result as sequence documents (one per agent run), checked, then written as YAML.

The document is what a hand-written sequence file holds. ``source`` is a block of
``key: value`` lines: the first line is a one-line summary (``stopbench list`` shows it), then
the provenance given by the caller (repository, commit, path, blob, licence...), then what the
capture itself says (format, models, servers, dates, each turn's ids), then the importer's notes
and the unknown things it counted. Every document is validated with the catalogue's own parser
before anything is written, and files are written whole (a temporary file, then renamed).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.catalogue import SequenceError, parse_sequence
from bench.importers._common import ImportedTurn, ImportResult
from bench.model import Turn
from bench.sequence_io import LINE_BREAKS


@dataclass(slots=True)
class Options:
    """What the caller knows that the capture does not."""

    summary: str | None = None
    title: str | None = None
    kind: str = "recorded"
    provenance: Mapping[str, str] = field(default_factory=dict)
    tags: Sequence[str] = ()
    then: str = "end"
    split_runs: bool = True
    require: Mapping[str, Any] = field(default_factory=dict)


def turn_doc(turn: Turn) -> dict[str, Any]:
    """A turn as the sequence file writes it (finish_raw always written, even when null)."""
    doc: dict[str, Any] = {"finish": turn.finish, "finish_raw": turn.finish_raw}
    if turn.finish_detail is not None:
        doc["finish_detail"] = turn.finish_detail
    doc["content"] = turn.content
    if turn.tool_calls:
        doc["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls]
    if turn.reasoning is not None:
        doc["reasoning"] = turn.reasoning
    if turn.error is not None:
        err: dict[str, Any] = {"type": turn.error.type, "message": turn.error.message}
        if turn.error.status is not None:
            err["status"] = turn.error.status
        doc["error"] = err
    if turn.usage is not None:
        doc["usage"] = {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens}
    if turn.end_turn is not None:
        doc["end_turn"] = turn.end_turn
    return doc


def _distinct(turns: Sequence[ImportedTurn], key: str) -> list[str]:
    return list(dict.fromkeys(t.meta[key] for t in turns if key in t.meta))


def source_text(result: ImportResult, run: Sequence[ImportedTurn], run_no: int, runs: int,
                opts: Options) -> str:
    """The provenance block for one run."""
    summary = opts.summary or f"imported from {result.file}"
    lines = [summary + (f" (agent run {run_no} of {runs})" if runs > 1 else "")]
    for key, value in opts.provenance.items():
        lines.append(f"{key}: {value}")
    lines.append(f"capture: {result.file}" + (f" (git blob {result.blob})" if result.blob else ""))
    lines.append(f"format: {run[0].dialect} ({'cassette' if result.format == 'cassette' else 'file'})")
    for key in ("model", "provider", "server", "endpoint", "date", "created", "system_fingerprint"):
        values = _distinct(run, key)
        if values:
            lines.append(f"{key}: {'; '.join(values)}")
    for i, t in enumerate(run):
        if "id" in t.meta:
            lines.append(f"turns[{i}] id: {t.meta['id']}")
    notes = [n for t in run for n in t.notes]
    for note in notes:
        lines.append(f"note: {note}")
    for what, n in sorted(result.unknown.items()):
        lines.append(f"unknown: {what} (x{n})")
    for skipped in result.skipped:
        lines.append(f"skipped: {skipped}")
    lines.append("converted by: stopbench import (bench/importers)")
    return "\n".join(lines) + "\n"


def build_sequences(result: ImportResult, name: str, opts: Options) -> list[tuple[str, dict[str, Any]]]:
    """(sequence id, document) for each agent run of `result`; ids get ``-run<N>`` when there are several.

    Raises SequenceError if a document does not validate as a sequence.
    """
    runs = result.runs(opts.split_runs)
    out: list[tuple[str, dict[str, Any]]] = []
    for n, run in enumerate(runs, start=1):
        seq_id = name if len(runs) == 1 else f"{name}-run{n}"
        title = opts.title or f"{run[0].dialect} capture {Path(result.file).name}"
        if len(runs) > 1:
            title += f" (run {n} of {len(runs)}, {run[0].dialect})"
        doc: dict[str, Any] = {
            "title": title,
            "kind": opts.kind,
            "dialect": run[0].dialect,
            "source": source_text(result, run, n, len(runs), opts),
            "tags": list(dict.fromkeys(["imported", run[0].dialect, *opts.tags])),
            "then": opts.then,
        }
        if opts.require:
            doc["require"] = dict(opts.require)
        doc["turns"] = [turn_doc(t.turn) for t in run]
        try:
            parse_sequence(doc, seq_id)
        except SequenceError as exc:
            raise SequenceError(f"{seq_id}: {exc}") from None
        out.append((seq_id, doc))
    return out


class _Dumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings as literal blocks, so provenance reads as written."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if LINE_BREAKS.intersection(value):  # NEL, LS, PS, CR: only double quotes keep them (as sequence_io does)
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value and not any(ch in value for ch in "\t\r") and value == value.rstrip(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def dump(doc: Mapping[str, Any]) -> str:
    return yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110,
                     default_flow_style=False)


def write_all(docs: Sequence[tuple[Path, Mapping[str, Any]]]) -> None:
    """Write every document, or none: all are rendered first, then each is written atomically."""
    rendered = [(path, dump(doc)) for path, doc in docs]
    for path, text in rendered:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
