"""Which catalogue a framework record was made on: each sequence it ran, by its file's digest.

A record's ``catalogue`` holds ``files`` (``{sequence id: the first 16 hex digits of the SHA-256 of
its YAML file}``, taken when its cell was run), ``digest`` (:func:`digest_of` those files: the
record's footing in one word, shown on the scorecard) and ``sequences`` (how many sequences the whole
catalogue held when the footing was last taken). Two records with the same wires and the same digest
ran the same sequences, byte for byte. :func:`drift` compares a record's files with the catalogue's
sequences of the framework's wires today: the sequences added to those wires, removed from them,
and changed since (``stopbench scorecard record NAME --changed`` runs the added and changed ones).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.engine.model import Sequence

DIGITS = 16
"""Hex digits kept of a file's SHA-256 (and of the footing's digest)."""

NAMED = 12
"""Sequences named per kind of drift in a line (the rest counted)."""


def file_digest(path: Path | str) -> str:
    """The first :data:`DIGITS` hex digits of the SHA-256 of the file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:DIGITS]


def digest_of(files: Mapping[str, str]) -> str:
    """One digest for a set of sequence files: the SHA-256 of ``"<id> <file digest>\\n"`` per
    sequence, by id (the order the files were read in does not matter)."""
    text = "".join(f"{sid} {files[sid]}\n" for sid in sorted(files))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGITS]


def wire_files(sequences: Iterable[Sequence], dialects: Iterable[str]) -> dict[str, str]:
    """``{id: file digest}`` of the sequences of `dialects` (the sequences a framework's record runs)."""
    wires = set(dialects)
    return {s.id: file_digest(s.path) for s in sequences if s.dialect in wires}


def footing(files: Mapping[str, str], catalogue_size: int) -> dict[str, Any]:
    """A record's ``catalogue`` field for the sequence files `files` it ran."""
    ordered = {sid: files[sid] for sid in sorted(files)}
    return {"digest": digest_of(ordered), "files": ordered, "sequences": catalogue_size}


def recorded_files(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's ``catalogue.files`` (empty for a record made before records kept them)."""
    catalogue = record.get("catalogue")
    files = catalogue.get("files") if isinstance(catalogue, dict) else None
    return dict(files) if isinstance(files, dict) else {}


@dataclass(frozen=True, slots=True)
class Drift:
    """How a record's sequences differ from the catalogue's sequences of its wires."""

    added: tuple[str, ...]
    """On its wires now, with no cell in the record."""
    removed: tuple[str, ...]
    """With a cell in the record, on none of its wires now."""
    changed: tuple[str, ...]
    """With a cell, the file's digest changed since."""
    unknown: tuple[str, ...] = ()
    """With a cell but no file digest (a record made before records kept them): what it ran on is unknown."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.unknown)

    @property
    def to_run(self) -> tuple[str, ...]:
        """The sequences a record must run to be on the catalogue again, by id."""
        return tuple(sorted(self.added + self.changed + self.unknown))

    def words(self, shown: int = NAMED) -> str:
        """The drift in one phrase: ``2 added (a, b); 1 changed (c)``, naming `shown` sequences of each kind."""
        def named(ids: tuple[str, ...]) -> str:
            more = f", and {len(ids) - shown} more" if len(ids) > shown else ""
            return ", ".join(ids[:shown]) + more
        parts = [f"{len(ids)} {what} ({named(ids)})"
                 for what, ids in (("added", self.added), ("removed", self.removed), ("changed", self.changed),
                                   ("with no file digest", self.unknown)) if ids]
        return "; ".join(parts) or "none"


def drift(record: Mapping[str, Any], current: Mapping[str, str]) -> Drift:
    """The record's drift from `current` (:func:`wire_files` of the catalogue for its wires)."""
    files = recorded_files(record)
    cells = {c["sequence"] for c in record.get("cells", [])}
    on_wires = cells & set(current)
    return Drift(added=tuple(sorted(set(current) - cells)),
                 removed=tuple(sorted(cells - set(current))),
                 changed=tuple(sorted(s for s in on_wires if s in files and files[s] != current[s])),
                 unknown=tuple(sorted(s for s in on_wires if s not in files)))


def footing_problem(record: Mapping[str, Any], sequences: Iterable[Sequence]) -> str | None:
    """What keeps `record` off the catalogue `sequences` for its wires, in one line naming the
    framework, the sequences and the command that brings it on; None when it is on it."""
    fw = record.get("framework") or {}
    current = wire_files(sequences, fw.get("dialects") or ())
    found = drift(record, current)
    release = f" --release {fw.get('version')}" if fw.get("beside") else ""
    again = f"stopbench scorecard record {fw.get('name')}{release} --changed"
    if found:
        return f"{fw.get('name')} {fw.get('version')}: not on the catalogue of its wires: {found.words()}; {again}"
    digest = (record.get("catalogue") or {}).get("digest")
    if digest != digest_of(current):
        return (f"{fw.get('name')} {fw.get('version')}: catalogue.digest {digest!r} is not the digest of the "
                f"sequences of its wires ({digest_of(current)!r}); {again}")
    return None


def stale_records(records_dir: Path, sequences_dir: Path) -> list[str]:
    """:func:`footing_problem` of every record in `records_dir` (``<path>: <problem>``), on the
    catalogue in `sequences_dir`."""
    import json

    from bench.catalogue.load import load_catalogue
    sequences = load_catalogue(sequences_dir).sequences
    out = []
    for path in sorted(records_dir.glob("*.json")):
        problem = footing_problem(json.loads(path.read_text(encoding="utf-8")), sequences)
        if problem:
            out.append(f"{path}: {problem}")
    return out
