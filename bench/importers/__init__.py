"""Importers: providers' wire captures turned into sequences.

Each provider wire imports its own captures (``bench/wires/<wire>/capture.py``, found through
:mod:`bench.wires.registry`); :mod:`~bench.importers.cassette` reads VCR/pytest-recording YAML holding
any of them; each reads whole JSON and streams. :func:`import_capture` reads one file into an :class:`ImportResult`;
:func:`~bench.importers.sequence.build_sequences` turns a result into sequence documents, one per
agent run. See docs/importers.md.
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import TypeAlias

from bench.engine.model import Dialect
from bench.importers import _read, cassette
from bench.importers._read import body as read_body
from bench.wires.capture import CaptureError, ImportedTurn, ImportResult, loads
from bench.wires.registry import names

Format: TypeAlias = str
"""``auto``, a wire's name (:data:`FORMATS`) or ``cassette``."""
FORMATS: tuple[Format, ...] = ("auto", *names(), "cassette")
PRODUCTION: dict[str, str] = {  # streaming importers of production logs (stopbench corpus): name -> module
    "otel": "bench.importers.otel",  # OpenTelemetry GenAI spans, OTLP JSON
    "claude-code": "bench.importers.claude_code_log",  # Claude Code session transcripts
    "codex": "bench.importers.codex_rollout",  # Codex rollout files
}
"""Each module has ``sniff(path, head)`` and ``iter_records(path, shown)`` (one Traced per session, streamed)."""

__all__ = ["FORMATS", "PRODUCTION", "CaptureError", "Format", "ImportResult", "ImportedTurn", "git_blob_sha",
           "import_capture", "read_body"]


def git_blob_sha(path: Path) -> str:
    """The file's git blob id (what ``git hash-object`` prints), read in blocks."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def import_capture(path: Path, fmt: Format = "auto", shown: str | None = None) -> ImportResult:
    """Read one capture file. Raises CaptureError (naming the file and line or event) if it cannot.

    `fmt` forces a dialect (the body is still told apart as whole JSON or stream) or ``cassette``;
    ``auto`` decides by the extension (``.yaml``/``.yml`` is a cassette) and the first event. A
    dialect given for a ``.yaml``/``.yml`` file forces the dialect of the cassette's model calls.
    """
    name = shown or str(path)
    if not path.is_file():
        raise CaptureError(name, "", "not a regular file (a FIFO, a device or a folder)" if path.exists()
                           else "no such file")
    is_cassette = fmt == "cassette" or path.suffix.lower() in (".yaml", ".yml")
    result = ImportResult(file=name, format="cassette" if is_cassette else fmt, blob=git_blob_sha(path))
    dialect: Dialect | None = None if fmt in ("auto", "cassette") else fmt  # type: ignore[assignment]
    if is_cassette:
        cassette.import_cassette(str(path), name, dialect, result)
    else:
        result.turns.append(_import_plain(path, name, dialect, result))
        result.format = result.turns[0].dialect
    for t in result.turns:
        result.notes.extend(t.notes)
    return result


def _import_plain(path: Path, name: str, dialect: Dialect | None, result: ImportResult) -> ImportedTurn:
    """One capture that is not a cassette; a UTF-8 byte order mark in front is read past, as the
    sequence reader does (RFC 8259 lets a JSON parser ignore one; Windows editors write it)."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            lines = iter(fh)
            head: list[str] = []
            for line in lines:  # skip leading blank lines
                head.append(line)
                if line.strip():
                    break
            first = head[-1].strip() if head else ""
            if not first:
                raise CaptureError(name, "", "the file is empty")
            if first.startswith(("data:", "event:", ":")):
                return _read.stream(itertools.chain(head, lines), dialect, name, "", result.unknown)
            if first.startswith("{"):
                try:
                    obj = loads(first, name, f"line {len(head)}")
                except CaptureError:
                    obj = None
                if obj is not None:
                    buffered: list[str] = []
                    for line in lines:  # is there another non-blank line (a JSON-lines stream)?
                        buffered.append(line)
                        if line.strip():
                            break
                    more = bool(buffered) and bool(buffered[-1].strip())
                    if more or _read.is_stream_event(obj):
                        return _read.stream(itertools.chain(head, buffered, lines), dialect, name, "",
                                            result.unknown)
                    return _read.whole(obj, dialect, name, "line 1", result.unknown)
            text = "".join(head) + "".join(lines)
    except UnicodeDecodeError as exc:
        raise CaptureError(name, "", f"not UTF-8 text: {exc}") from None
    obj = loads(text, name, "")
    if isinstance(obj, list):
        return _read.json_array_stream(obj, dialect, name, "JSON array", result.unknown)
    return _read.whole(obj, dialect, name, "JSON", result.unknown)
