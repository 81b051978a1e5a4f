"""Which reader a corpus path needs, and how it is cut into shards.

A path is a file or a folder (every file below it, hidden ones aside, in sorted order). Each file is
one of: the corpus JSON lines (:mod:`bench.corpus.decode`), Parquet (the same records, one row per
sequence), or a production importer's input (:data:`IMPORTERS`: OpenTelemetry GenAI spans, Claude
Code session logs, Codex rollout files). ``--format`` forces one; otherwise the file's first bytes
decide: Parquet's magic number, a first line that is a sequence object, or the first importer
whose ``sniff`` says yes.

A shard is a piece of work a worker can do alone: a byte range of a JSON-lines file (a line
belongs to the range its first byte is in), a run of a Parquet file's row groups, or a whole
importer file (importers stream, but cannot start in the middle).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import msgspec

from bench.catalogue.files import display_path
from bench.corpus.decode import CorpusError, iter_json_lines, iter_parquet
from bench.corpus.record import Traced
from bench.importers import PRODUCTION

__all__ = ["FORMATS", "IMPORTERS", "SHARD_BYTES", "SUFFIXES", "Shard", "plan", "records"]

IMPORTERS = PRODUCTION
"""Production importers (the one table, :data:`bench.importers.PRODUCTION`): format name -> module with
``sniff(path, head)`` and ``iter_records(path, shown)``."""

SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet")
"""The files a folder argument contributes; others in it (notes, READMEs), and files with these suffixes
that no reader claims, are skipped and named. A file given by name must be a corpus file."""

FORMATS: tuple[str, ...] = ("auto", "jsonl", "parquet", *IMPORTERS)

SHARD_BYTES = 1 << 23
"""Bytes of a JSON-lines file per shard (8 MiB: about 35,000 turns of a typical corpus)."""

_HEAD = 1 << 16


@dataclass(frozen=True, slots=True)
class Shard:
    """One piece of a corpus: `fmt` of `path` (shown as `shown`), bytes [start, end) or row groups."""

    fmt: str
    path: str
    shown: str
    start: int = 0
    end: int | None = None
    row_groups: tuple[int, ...] | None = None


def _importer(fmt: str) -> ModuleType | None:
    try:
        return importlib.import_module(IMPORTERS[fmt])
    except ModuleNotFoundError as exc:
        if exc.name and IMPORTERS[fmt].startswith(exc.name):
            return None  # not part of this installation (yet)
        raise


def _files(path: Path, skipped: list[str] | None, leave_out: Path | None = None) -> list[Path]:
    """A file given by name is read whatever its name; a folder gives its files with a corpus suffix,
    except those under `leave_out` (the report's own folder, which may lie inside the corpus)."""
    if path.is_dir():
        left_out = leave_out.resolve() if leave_out is not None else None
        found = sorted(p for p in path.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts)
                       and not (left_out is not None and p.resolve().is_relative_to(left_out)))
        if skipped is not None:
            skipped += [display_path(p) for p in found if p.suffix.lower() not in SUFFIXES]
        return [p for p in found if p.suffix.lower() in SUFFIXES]
    if path.is_file():
        return [path]
    if path.exists():  # a FIFO (its read would wait for a writer) or a device
        raise CorpusError(f"{display_path(path)}: not a regular file or a folder (a FIFO, a device)")
    raise CorpusError(f"{display_path(path)}: no such file or folder")


def _is_sequence_line(path: Path) -> bool:
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                try:
                    obj = msgspec.json.decode(line)
                except (msgspec.DecodeError, RecursionError):  # nested deeper than the decoder goes: not a sequence
                    return False
                return isinstance(obj, dict) and "turns" in obj and "dialect" in obj
    return False


def detect(path: Path, shown: str) -> str:
    """The format of one file (see the module docstring)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError as exc:
        raise CorpusError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.lstrip().startswith(b"{") and _is_sequence_line(path):
        return "jsonl"
    for fmt in IMPORTERS:
        mod = _importer(fmt)
        if mod is not None and mod.sniff(path, head):
            return fmt
    if not head.strip():
        raise CorpusError(f"{shown}: the file is empty")
    raise CorpusError(f"{shown}: not a corpus format stopbench knows (JSON lines of sequences, Parquet, or the "
                      f"inputs of {', '.join(IMPORTERS)}); --format names one")


def plan(paths: list[Path], fmt: str = "auto", shard_bytes: int = SHARD_BYTES,
         skipped: list[str] | None = None, leave_out: Path | None = None) -> list[Shard]:
    """The shards of every file under `paths`, in order (files of a folder without a corpus suffix are
    added to `skipped`; a folder's files under `leave_out`, the report folder, are not read). Raises
    CorpusError on a path it cannot use."""
    out: list[Shard] = []
    for given in paths:
        in_folder = given.is_dir()
        for path in _files(given, skipped, leave_out):
            shown = display_path(path)
            try:
                kind = detect(path, shown) if fmt == "auto" else fmt
            except CorpusError as exc:
                if not (in_folder and skipped is not None and "not a corpus format" in str(exc)):
                    raise
                skipped.append(shown)  # a folder's file no reader claims (metadata, notes): named, not read
                continue
            if kind in IMPORTERS and _importer(kind) is None:
                raise CorpusError(f"{shown}: --format {kind}: that importer is not available in this installation")
            if kind == "jsonl":
                size = path.stat().st_size
                starts = list(range(0, max(size, 1), shard_bytes))
                out += [Shard(kind, str(path), shown, s, min(s + shard_bytes, size)) for s in starts]
            elif kind == "parquet":
                out += _parquet_shards(path, shown)
            else:
                out.append(Shard(kind, str(path), shown))
    return out


def _parquet_shards(path: Path, shown: str, groups_per_shard: int = 4) -> list[Shard]:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        n = pq.ParquetFile(path).num_row_groups
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{shown}: not a readable Parquet file: {exc}") from None
    return [Shard("parquet", str(path), shown, row_groups=tuple(range(g, min(g + groups_per_shard, n))))
            for g in range(0, n, groups_per_shard)]


def records(shard: Shard) -> Iterator[Traced]:
    """The records of one shard, streamed."""
    path = Path(shard.path)
    if shard.fmt == "jsonl":
        return iter_json_lines(path, shard.shown, shard.start, shard.end)
    if shard.fmt == "parquet":
        return iter_parquet(path, shard.shown, list(shard.row_groups) if shard.row_groups is not None else None)
    mod = _importer(shard.fmt)
    if mod is None:
        raise CorpusError(f"{shard.shown}: the {shard.fmt} importer is not available in this installation")
    it: Iterator[Traced] = mod.iter_records(path, shard.shown)
    return it
