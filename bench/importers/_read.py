"""Bodies to turns: one dispatcher over the wires (:mod:`bench.wires.registry`), for whole JSON and for streams.

A stream is any iterable of text lines (an open file streams it; a cassette body is split into
lines); the events are parsed one at a time, so a large SSE capture is never held whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from bench.engine.model import Dialect, TurnError
from bench.wires.base import Assembler
from bench.wires.capture import (
    JSON,
    CaptureError,
    Event,
    ImportedTurn,
    UnknownFormat,
    loads,
    read_events,
    where_event,
)
from bench.wires.registry import wire, wires

END_EVENT = "message_stop"
"""Anthropic's event after a stream's finish (Chat Completions' ``[DONE]`` is the other end marker):
https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types."""


def detect(obj: JSON) -> Dialect | None:
    """The dialect a response object or stream event belongs to, or None if it cannot be told
    (the wires are tried by their ``detect_rank``: a Responses event also has a "type", an
    Anthropic one too, and almost anything with a ``choices`` list reads as Chat)."""
    for w in sorted(wires(), key=lambda w: w.detect_rank):
        if w.looks_like(obj):
            return w.name
    return None


def is_stream_event(obj: JSON) -> bool:
    """True for a chunk or event of a stream (as opposed to a whole response)."""
    return isinstance(obj, dict) and any(w.is_stream_event(obj) for w in wires())


def whole(obj: JSON, dialect: Dialect | None, file: str, where: str, unknown: Counter[str],
          status: int | None = None) -> ImportedTurn:
    """A whole (non-streamed) response body as a turn."""
    dialect = dialect or detect(obj)
    if dialect is None:
        raise UnknownFormat(file, where, "not a response of a known format (chat completion, message, "
                                         "response, generateContent)")
    try:
        return wire(dialect).from_response(obj, unknown, status)
    except ValueError as exc:
        raise CaptureError(file, where, f"not a {dialect} response: {exc}") from None


def stream(lines: Iterable[str], dialect: Dialect | None, file: str, prefix: str, unknown: Counter[str],
           status: int | None = None) -> ImportedTurn:
    """A streamed body (SSE, or one JSON chunk per line) as one turn."""
    asm: Assembler | None = None
    done = ended = False
    last: Event | None = None
    for ev in read_events(lines):
        last = ev
        if ev.data.strip() == "[DONE]":
            done = True
            continue
        obj = loads(ev.data, file, where_event(prefix, ev))
        if ev.name == END_EVENT or (isinstance(obj, dict) and obj.get("type") == END_EVENT):
            ended = True
        if asm is None:
            dialect = dialect or detect(obj)
            if dialect is None:
                raise UnknownFormat(file, where_event(prefix, ev), "cannot tell the format of the stream from its "
                                                                    "first event (use --format)")
            asm = wire(dialect).assembler(unknown, status)
        try:
            asm.feed(obj, ev.name)
        except ValueError as exc:
            raise CaptureError(file, where_event(prefix, ev), str(exc)) from None
    if asm is None:
        where = where_event(prefix, last) if last else (prefix.rstrip() or "stream")
        raise CaptureError(file, where, "the stream has no events")
    if done:
        asm.feed_done()
    turn: ImportedTurn = asm.finish()
    return turn if done or ended else cut(turn)


def cut(turn: ImportedTurn) -> ImportedTurn:
    """A stream that ended with no finish, no error and no end marker, as the cut it is: an error of
    kind ``stream_cut`` (:data:`bench.engine.model.ErrorKind`: "the stream ended cleanly, but
    without a finish and without an error event"), which the replay server serves the same way
    (bench/wires/delivery.py: the output, then the end of the stream). A stream that carried its end
    marker (Chat Completions' ``[DONE]``, Anthropic's ``message_stop``) but no finish is a provider
    that sends none: its finish stays ``unknown``, and so does one whose finish is explained
    (``finish_detail``, a Gemini prompt blocked before any candidate)."""
    t = turn.turn
    if t.finish != "unknown" or t.finish_raw is not None or t.error is not None or t.finish_detail is not None:
        return turn
    turn.turn = replace(t, finish="error", error=TurnError("stream_cut", "the stream ended without a finish"))
    turn.notes.append("the stream ended without a finish, an error or an end marker: read as a cut stream "
                      "(error stream_cut)")
    return turn


def json_array_stream(items: list[JSON], dialect: Dialect | None, file: str, where: str,
                      unknown: Counter[str]) -> ImportedTurn:
    """Gemini's non-SSE stream form: one JSON array of response chunks."""
    if not items:
        raise CaptureError(file, where, "an empty JSON array")
    dialect = dialect or detect(items[0])
    if dialect is None:
        raise UnknownFormat(file, f"{where} [0]", "cannot tell the format of the array's first element")
    asm = wire(dialect).assembler(unknown)
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
