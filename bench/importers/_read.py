"""Bodies to turns: one dispatcher over the four dialects, for whole JSON and for streams.

A stream is any iterable of text lines (an open file streams it; a cassette body is split into
lines); the events are parsed one at a time, so a large SSE capture is never held whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

from bench.engine.model import Dialect
from bench.importers import anthropic, gemini, openai_chat, openai_responses
from bench.importers._common import (
    JSON,
    CaptureError,
    Event,
    ImportedTurn,
    UnknownFormat,
    loads,
    read_events,
    where_event,
)

MODULES: dict[Dialect, Any] = {
    "openai-chat": openai_chat,
    "anthropic": anthropic,
    "openai-responses": openai_responses,
    "gemini": gemini,
}

# detection order matters: a Responses event also has a "type", an Anthropic one too
_DETECT: tuple[tuple[Dialect, Any], ...] = (
    ("openai-responses", openai_responses),
    ("anthropic", anthropic),
    ("gemini", gemini),
    ("openai-chat", openai_chat),
)


def detect(obj: JSON) -> Dialect | None:
    """The dialect a response object or stream event belongs to, or None if it cannot be told."""
    for dialect, module in _DETECT:
        if module.looks_like(obj):
            return dialect
    return None


def is_stream_event(obj: JSON) -> bool:
    """True for a chunk or event of a stream (as opposed to a whole response)."""
    if not isinstance(obj, dict):
        return False
    kind = obj.get("type")
    return (obj.get("object") == "chat.completion.chunk"
            or (isinstance(kind, str) and kind != "error"  # an error body has the error event's shape
                and (kind in anthropic.STREAM_EVENTS or kind.startswith("response."))))


class _Assembler(Protocol):
    unknown: Counter[str]

    def finish(self) -> ImportedTurn: ...


def whole(obj: JSON, dialect: Dialect | None, file: str, where: str, unknown: Counter[str],
          status: int | None = None) -> ImportedTurn:
    """A whole (non-streamed) response body as a turn."""
    dialect = dialect or detect(obj)
    if dialect is None:
        raise UnknownFormat(file, where, "not a response of a known format (chat completion, message, "
                                         "response, generateContent)")
    try:
        return MODULES[dialect].from_response(obj, unknown, status)  # type: ignore[no-any-return]
    except ValueError as exc:
        raise CaptureError(file, where, f"not a {dialect} response: {exc}") from None


def stream(lines: Iterable[str], dialect: Dialect | None, file: str, prefix: str, unknown: Counter[str],
           status: int | None = None) -> ImportedTurn:
    """A streamed body (SSE, or one JSON chunk per line) as one turn."""
    asm: Any = None
    done = False
    last: Event | None = None
    for ev in read_events(lines):
        last = ev
        if ev.data.strip() == "[DONE]":
            done = True
            continue
        obj = loads(ev.data, file, where_event(prefix, ev))
        if asm is None:
            dialect = dialect or detect(obj)
            if dialect is None:
                raise UnknownFormat(file, where_event(prefix, ev), "cannot tell the format of the stream from its "
                                                                    "first event (use --format)")
            asm = MODULES[dialect].StreamAssembler(unknown)
            if dialect == "gemini":
                asm.status = status
        try:
            if dialect in ("anthropic", "openai-responses"):
                asm.feed(obj, ev.name)
            else:
                asm.feed(obj)
        except ValueError as exc:
            raise CaptureError(file, where_event(prefix, ev), str(exc)) from None
    if asm is None:
        where = where_event(prefix, last) if last else (prefix.rstrip() or "stream")
        raise CaptureError(file, where, "the stream has no events")
    if dialect == "openai-chat" and done:
        asm.feed_done()
    turn: ImportedTurn = asm.finish()
    return turn


def json_array_stream(items: list[JSON], dialect: Dialect | None, file: str, where: str,
                      unknown: Counter[str]) -> ImportedTurn:
    """Gemini's non-SSE stream form: one JSON array of response chunks."""
    if not items:
        raise CaptureError(file, where, "an empty JSON array")
    dialect = dialect or detect(items[0])
    if dialect is None:
        raise UnknownFormat(file, f"{where} [0]", "cannot tell the format of the array's first element")
    asm = MODULES[dialect].StreamAssembler(unknown)
    for obj in items:
        asm.feed(obj)
    turn: ImportedTurn = asm.finish()
    return turn


def body(text: str, dialect: Dialect | None, file: str, where: str, unknown: Counter[str],
         status: int | None = None) -> ImportedTurn:
    """A body given as text: SSE or JSON lines when it looks like a stream, else one JSON value."""
    head = text.lstrip()[:16]
    if head.startswith(("data:", "event:", ":")):
        return stream(text.splitlines(), dialect, file, f"{where} ", unknown, status)
    first, _, rest = text.strip().partition("\n")
    if first.startswith("{") and rest.strip():
        try:
            one = loads(first, file, where)
        except CaptureError:
            one = None
        if (one is not None and is_stream_event(one)) or (one is not None and dialect is None and detect(one)):
            return stream(text.splitlines(), dialect, file, f"{where} ", unknown, status)
    obj = loads(text, file, where)
    if isinstance(obj, list):
        return json_array_stream(obj, dialect, file, where, unknown)
    if is_stream_event(obj):
        return stream([text.strip()], dialect, file, f"{where} ", unknown, status)
    return whole(obj, dialect, file, where, unknown, status)
