"""What the streaming importers of production logs share: JSON lines read one at a time, and the record.

The three production importers (:mod:`~bench.importers.otel`, :mod:`~bench.importers.claude_code_log`,
:mod:`~bench.importers.codex_rollout`) read files that can be gigabytes of JSON lines. Each reads them
with :func:`objects`, one line at a time (the file object streams; a line is parsed and dropped), and
yields one :class:`~bench.corpus.record.Traced` per session as soon as the session is complete, so
memory follows the largest open session, not the file. A line that is not a JSON object is a
:class:`~bench.wires.capture.CaptureError` naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.wires.capture import CaptureError, loads

HEAD_LINES = 20
"""How many non-blank lines of the head :func:`head_objects` parses for sniffing."""


def objects(path: Path, shown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of `path`, read one line at a time."""
    try:
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                obj = loads(raw, shown, f"line {n}")
                if not isinstance(obj, dict):
                    raise CaptureError(shown, f"line {n}", "not a JSON object")
                yield n, obj
    except OSError as exc:
        raise CaptureError(shown, "", f"cannot read: {exc.strerror or exc}") from None


def head_objects(head: bytes) -> list[dict[str, Any]]:
    """The JSON objects on the first complete lines of `head` (a file's first bytes), for sniffing.

    A line that does not parse (the last one is usually cut off) ends the list; nothing raises."""
    out: list[dict[str, Any]] = []
    lines = head.split(b"\n")
    if not head.endswith(b"\n"):
        lines = lines[:-1]  # cut off by the head's size
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = loads(raw, "", "")
        except CaptureError:
            break
        if not isinstance(obj, dict):
            break
        out.append(obj)
        if len(out) >= HEAD_LINES:
            break
    return out


def field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], shown: str, where: str,
          name: str | None = None) -> Any:
    """``obj[key]`` when it has the type `kind`; else a CaptureError naming the line and the field."""
    value = obj.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (
            kind if isinstance(kind, tuple) else (kind,))):
        what = "missing" if key not in obj else f"expected {_names(kind)}, got {type(value).__name__}"
        raise CaptureError(shown, where, f"{name or key}: {what}")
    return value


def error_object(text: str) -> dict[str, Any] | None:
    """The ``error`` object of a provider's JSON error body (``{"error": {"message", "type", "code"}}``)
    that a log quotes as its error message, or None when `text` is not such a body."""
    if not text.startswith("{"):
        return None
    try:
        obj = loads(text, "", "")
    except CaptureError:
        return None
    err = obj.get("error") if isinstance(obj, dict) else None
    return err if isinstance(err, dict) else None


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {str: "a string", dict: "an object", list: "an array", int: "an integer", float: "a number",
             bool: "true or false"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


__all__ = ["HEAD_LINES", "field", "head_objects", "objects"]
