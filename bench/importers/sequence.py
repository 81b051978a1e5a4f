"""An import result as sequence documents (one per agent run), checked, then written as YAML.

The document is what a hand-written sequence file holds. ``source`` is a block of
``key: value`` lines: the first line is a one-line summary (``stopbench list`` shows it), then
the provenance given by the caller (repository, commit, path, blob, licence...), then what the
capture itself says (format, models, servers, dates, each turn's ids), then the importer's notes
and the unknown things it counted. Every document is validated with the catalogue's own parser
and written from the resulting :class:`~bench.engine.model.Sequence` by the one function every sequence
writer uses (:func:`bench.catalogue.document.sequence_data`) and the project's one YAML writer, so no
field of a turn is lost on the way; the files of one import are written all or none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.catalogue.document import sequence_data, turn_data
from bench.catalogue.files import write_all_or_nothing
from bench.catalogue.load import SequenceError, parse_sequence
from bench.catalogue.yaml_write import dump
from bench.wires.capture import ImportedTurn, ImportResult


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
    limits = [t.max_tokens for t in run]
    if len(set(limits)) > 1:
        notes.append("the requests' max_tokens differ (" + ", ".join(str(x) for x in limits)
                     + "): the sequence records none")
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
        limits = {t.max_tokens for t in run}
        if len(limits) == 1 and None not in limits:  # every request of the run asked for the same limit
            doc["max_tokens"] = limits.pop()
        doc["turns"] = [turn_data(t.turn) for t in run]
        try:
            seq = parse_sequence(doc, seq_id)
        except SequenceError as exc:
            raise SequenceError(f"{seq_id}: {exc}") from None
        out.append((seq_id, sequence_data(seq)))
    return out


def write_all(docs: Sequence[tuple[Path, Mapping[str, Any]]]) -> None:
    """Write every document, or none (:func:`bench.catalogue.files.write_all_or_nothing`)."""
    write_all_or_nothing({path: dump(dict(doc)) for path, doc in docs})


__all__ = ["Options", "build_sequences", "dump", "source_text", "write_all"]
