"""What every importer shares: the result type, the error type, JSON and SSE reading.

An importer turns one capture (a response body, a stream, a cassette) into :class:`ImportedTurn`
objects: a :class:`~bench.engine.model.Turn` plus what the capture said about it (model, ids, server,
date). Problems that make a capture unreadable raise :class:`CaptureError`, whose message names
the file and the line or event. Things the importer does not know (an event type, a content
block type) are counted in :attr:`ImportResult.unknown`, never silently dropped; oddities it
handled (a stream without ``[DONE]``, a spliced ``message_start``) are kept as notes.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from bench.engine.model import Dialect, ErrorKind, Finish, ToolCall, Turn, TurnError, Usage
from bench.errors import UnusableInput
from bench.wires import dialects

JSON = Any
"""A parsed JSON value (orjson gives dicts, lists, str, int, float, bool, None)."""


class CaptureError(UnusableInput):
    """A capture that cannot be read. The message is one line: ``FILE: WHERE: PROBLEM``."""

    def __init__(self, file: str, where: str, problem: str) -> None:
        self.file = file
        self.where = where
        self.problem = problem
        super().__init__(f"{file}: {where}: {problem}" if where else f"{file}: {problem}")


class UnknownFormat(CaptureError):
    """A body whose format no importer reads (no dialect forced, none detected). A single capture
    file cannot be imported then; inside a cassette the interaction is skipped and counted."""


@dataclass(slots=True)
class ImportedTurn:
    """One model call, assembled, with what the capture says about it.

    `meta` keeps, in order, the fields a sequence's ``source`` records: ``model``, ``id``,
    ``server``/``provider``, ``date`` and the like. `conversation` is the length of the request's
    message list when the capture has the request (a cassette), used to split agent runs.
    """

    turn: Turn
    dialect: Dialect
    meta: dict[str, str] = field(default_factory=dict)
    conversation: int | None = None
    notes: list[str] = field(default_factory=list)
    max_tokens: int | None = None
    """The request's output limit when the capture has the request (``max_tokens``,
    ``max_completion_tokens``, ``max_output_tokens``, Gemini's ``generationConfig.maxOutputTokens``)."""


@dataclass(slots=True)
class ImportResult:
    """Everything one capture gave: turns in order, unknown things counted, notes, the format."""

    file: str
    format: str
    turns: list[ImportedTurn] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    blob: str | None = None

    def runs(self, split: bool = True) -> list[list[ImportedTurn]]:
        """The turns split into agent runs (all in one when `split` is false).

        A new run starts when the dialect changes, when a request's conversation is shorter than
        the previous one's, or when it is as long and the previous turn was not an error (an
        error's retry sends the same conversation again and stays in its run). This is a
        heuristic: a loop that resends an unchanged request after a truncated turn looks like a
        fresh run; ``stopbench import --single-run`` keeps every turn in one sequence.
        """
        out: list[list[ImportedTurn]] = []
        prev: ImportedTurn | None = None
        for t in self.turns:
            fresh = prev is None or (split and (
                t.dialect != prev.dialect
                or (t.conversation is not None and prev.conversation is not None
                    and (t.conversation < prev.conversation
                         or (t.conversation == prev.conversation and prev.turn.finish != "error")))))
            if fresh:
                out.append([])
            out[-1].append(t)
            prev = t
        return out


def finish_of(dialect: Dialect, raw: str | None, *, error: bool = False) -> Finish:
    """Canonical finish for a raw string (the dialect table), or ``error`` for an error turn."""
    return "error" if error else dialects.canonical(dialect, raw)


def iso_from_unix(ts: object) -> str | None:
    """A Unix timestamp (seconds) as an ISO-8601 UTC string, or None when it is not one (0 too).

    A number too large for a date in seconds (a local server that sends milliseconds, as the
    openllmetry completion cassettes' does) is kept as it was sent, with a word saying so, not
    guessed into a date and not an error that loses the capture."""
    if isinstance(ts, bool) or not isinstance(ts, int | float) or ts <= 0:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return f"{ts} (not a Unix time in seconds)"


# The codes a provider's error body sends for a context overflow (OpenAI, Azure, xAI and the
# OpenAI-compatible servers: ``code``; Anthropic has none: its overflow is a 400
# invalid_request_error whose only signal is the message, left as invalid_request here).
_OVERFLOW_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def error_kind(status: int | None, code: str | None, *, in_stream: bool = False) -> ErrorKind:
    """The error's kind (bench/engine/model.py :data:`~bench.engine.model.ErrorKind`) from what the capture says
    structurally: the HTTP status and the provider's own error code or type, never its message.

    An error event inside a stream is ``stream_error`` whatever its code (the contract's rule: the
    kind says where it came, the code what the provider called it)."""
    if in_stream:
        return "stream_error"
    if code in _OVERFLOW_CODES:
        return "context_overflow"
    if code in _QUOTA_CODES or status == 402:
        return "quota"
    if code == "content_filter":
        return "content_filter"
    if code in ("overloaded_error",) or status == 529:
        return "overloaded"
    if code in ("rate_limit_error", "rate_limit_exceeded", "RESOURCE_EXHAUSTED") or status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status is not None and status >= 500:
        return "server_error"
    if code in ("server_error", "api_error", "INTERNAL"):
        return "server_error"
    kinds: dict[int, ErrorKind] = {400: "invalid_request", 422: "invalid_request", 401: "authentication",
                                   403: "permission", 404: "not_found"}
    if status is not None:
        return kinds.get(status, "http_status")
    if code in ("invalid_request_error", "INVALID_ARGUMENT"):
        return "invalid_request"
    if code in ("authentication_error", "UNAUTHENTICATED"):
        return "authentication"
    if code in ("permission_error", "PERMISSION_DENIED"):
        return "permission"
    if code in ("not_found_error", "NOT_FOUND"):
        return "not_found"
    return "http_status"


def provider_error(status: int | None, code: str | None, message: str | None, *,
                   in_stream: bool = False) -> TurnError:
    """The one place the importers build a :class:`~bench.engine.model.TurnError` (SPEC section 1)."""
    return TurnError(error_kind(status, code, in_stream=in_stream), message or "", status, code or None)


class NoDoneLine:
    """The assembler of a wire whose stream has no ``[DONE]`` line of its own: one is ignored."""

    __slots__ = ()

    def feed_done(self) -> None:
        """A ``[DONE]`` line carries nothing on this wire."""


class Pieces:
    """Text received in pieces (stream deltas), joined once at the end: appending to a list is
    linear where ``s = s + piece`` on an attribute copies the whole text each time (the quadratic
    assembly that took 424 s on a 50 MB stream). ``text()`` is None when no piece came at all and
    ``""`` when only empty pieces came (``null`` and ``""`` differ in a turn)."""

    __slots__ = ("_parts",)

    def __init__(self, first: str | None = None) -> None:
        self._parts: list[str] | None = None if first is None else [first]

    def add(self, piece: str) -> None:
        if self._parts is None:
            self._parts = [piece]
        else:
            self._parts.append(piece)

    def text(self) -> str | None:
        if self._parts is None:
            return None
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0]

    def __bool__(self) -> bool:
        return self._parts is not None


def dumps_args(value: JSON) -> str:
    """A tool call's arguments as a string: a string stays as received, anything else is compact
    JSON in the order received (Anthropic ``input`` and Gemini ``args`` are objects on the wire)."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def function_call(call: JSON) -> ToolCall:
    """A tool call of Chat Completions' shape (``{"id", "function": {"name", "arguments"}}``, which Ollama
    and Cohere send too), its arguments as received (:func:`dumps_args`); a missing id or name is ``""``."""
    fn = obj_of(obj_of(call).get("function"))
    args = fn.get("arguments")
    return ToolCall(text_of(obj_of(call).get("id")) or "", text_of(fn.get("name")) or "",
                    "" if args is None else dumps_args(args))


def stream_turn(dialect: Dialect, raw: str | None, *, ended: bool, error: TurnError | None, content: str | None,
                tool_calls: tuple[ToolCall, ...], reasoning: str | None, usage: Usage | None,
                detail: str | None = None) -> Turn:
    """The turn a stream assembled to: an error turn when it carried an error, else the finish `raw` when
    its last event came (`ended`), else a cut stream (finish ``unknown``, none sent); `detail` is the
    error's or the finish's ``finish_detail``. What came before an error or a cut is kept."""
    parts = {"content": content, "tool_calls": tool_calls, "reasoning": reasoning, "usage": usage}
    if error is not None:
        return Turn("error", None, error=error, finish_detail=detail, **parts)  # type: ignore[arg-type]
    if ended:
        return Turn(finish_of(dialect, raw), raw, finish_detail=detail, **parts)  # type: ignore[arg-type]
    return Turn("unknown", None, **parts)  # type: ignore[arg-type]


def obj_of(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (so optional sub-objects read simply)."""
    return value if isinstance(value, dict) else {}


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def int_of(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def loads(text: str | bytes, file: str, where: str) -> JSON:
    """Parse JSON with orjson; a failure raises CaptureError naming `where` plus line and column."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        detail = exc.msg
        if exc.lineno > 1 or where == "":
            detail = f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
        elif exc.colno:
            detail = f"column {exc.colno}: {exc.msg}"
        if not text or not str(text).strip():
            detail = "empty body"
        raise CaptureError(file, where or "JSON", f"invalid JSON ({detail})") from None


# ---------------------------------------------------------------- compressed bodies

MAX_INFLATED = 64 << 20
"""Bytes a compressed body may inflate to (64 MiB: a model's response is a few MiB at most)."""
MAX_RATIO = 200
"""Times its compressed size a body may inflate to once past :data:`RATIO_FLOOR` (text and JSON streams
compress 3 to 20 times; gzip of one repeated byte reaches 1,000)."""
RATIO_FLOOR = 1 << 20
_PIECE = 1 << 16


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n:,} bytes"


def past_bound(coding: str, size: int, read: int, total: int, *, limit: int = MAX_INFLATED, ratio: int = MAX_RATIO,
               floor: int = RATIO_FLOOR) -> str | None:
    """Why a body of `total` compressed bytes, `size` bytes inflated from the first `read` so far, is
    past the bounds on a body stopbench unpacks (`limit` bytes; past `floor` bytes, `ratio` times the
    compressed bytes read), or None."""
    if size > limit:
        return (f"{coding} body inflates past {_mib(limit)} (from {total:,} bytes), "
                "the bound on a body stopbench unpacks")
    if size > floor and size > ratio * max(read, 1):
        return (f"{coding} body inflates past {ratio} times its {read:,} compressed bytes ({_mib(size)} so far), "
                "the bound on a body stopbench unpacks")
    return None


def inflate(data: bytes, file: str, where: str, *, limit: int = MAX_INFLATED, ratio: int = MAX_RATIO,
            floor: int = RATIO_FLOOR, coding: str = "gzip", cut: bool = False) -> bytes:
    """A gzip body (every member of it) inflated a piece at a time, refused with a CaptureError naming
    `where` as soon as it passes `limit` bytes or, past `floor` bytes, `ratio` times the compressed bytes
    read so far: a decompression bomb costs a MiB or two, never what it unpacks to. `coding` ``deflate``
    reads an HTTP deflate body (zlib's wrapper) instead; `cut` gives what a body cut short inflates to
    rather than refusing it (a stream the upstream broke off)."""
    out: list[bytes] = []
    size = 0
    rest = data
    while rest:
        d = zlib.decompressobj(wbits=15 if coding == "deflate" else 31)
        pending = rest
        while pending and not d.eof:
            try:
                piece = d.decompress(pending, _PIECE)
            except zlib.error as exc:
                raise CaptureError(file, where, f"{coding} body: {exc}") from None
            pending = d.unconsumed_tail
            size += len(piece)
            problem = past_bound(coding, size, len(data) - len(pending) - len(d.unused_data), len(data),
                                 limit=limit, ratio=ratio, floor=floor)
            if problem is not None:
                raise CaptureError(file, where, problem)
            out.append(piece)
        if not d.eof:
            if cut:
                break
            raise CaptureError(file, where, f"{coding} body: cut short (no end of stream)")
        rest = d.unused_data.lstrip(b"\0")  # members follow one another; padding zeros may end the file
    return b"".join(out)


# ---------------------------------------------------------------- server-sent events


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event (or one JSON line of a line-per-chunk stream).

    `line` is the 1-based line of its first ``data:`` line in its text; `number` counts events
    from 1; `name` is the ``event:`` field (None when absent); `data` is the joined data text.
    """

    line: int
    number: int
    name: str | None
    data: str


def read_events(lines: Iterable[str], first_line: int = 1) -> Iterator[Event]:
    """Events from SSE text given line by line (a file object streams; nothing is held whole).

    Accepts both true SSE (``event:``/``data:`` fields, blank-line separated, ``:`` comments
    such as OpenRouter's keep-alives) and the one-JSON-object-per-line form some fixtures use
    (a line starting with ``{`` is an event of its own). A line that is only ``{`` or ``[`` opens
    a JSON value written across lines, one event up to its closing ``}`` or ``]`` at the start of
    a line (or a blank line, or the end): Gemini's error after a stream's events, as Google's
    server writes it (indented JSON).
    """
    reader = _EventReader(first_line)
    for raw in lines:
        event = reader.line(raw.rstrip("\r\n"))
        if event is not None:
            yield event
    yield from reader.rest()


_CLOSE = {"{": "}", "[": "]"}
"""The line that closes a JSON value written across lines, by the line that opens it."""


class _EventReader:
    """:func:`read_events`' state: the event being read (its ``event:`` name, its ``data:`` lines and
    the line of the first), or the JSON value written across lines being read, and the count so far."""

    __slots__ = ("block", "data", "lineno", "name", "number", "start")

    def __init__(self, first_line: int) -> None:
        self.name: str | None = None
        self.data: list[str] = []
        self.start = 0
        self.number = 0
        self.lineno = first_line - 1
        self.block: list[str] | None = None

    def line(self, line: str) -> Event | None:
        """One line (its end stripped); the event it ends, if it ends one."""
        self.lineno += 1
        if self.block is not None:
            return self._block_line(self.block, line)
        fresh = not self.data and self.name is None
        if fresh and line.strip() in ("{", "["):
            self.block, self.start = [line], self.lineno
            return None
        if not line.strip():
            event = self._event(self.start, self.name, "\n".join(self.data)) if self.data else None
            self.name, self.data = None, []
            return event
        if line.startswith(":"):
            return None  # a comment: keep-alive
        if fresh and line.lstrip().startswith(("{", "[")):
            return self._event(self.lineno, None, line.strip())
        fieldname, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if fieldname == "data":
            if not self.data:
                self.start = self.lineno
            self.data.append(value)
        elif fieldname == "event":
            self.name = value
        # id:, retry: and unknown fields are ignored, as the SSE spec says
        return None

    def _block_line(self, block: list[str], line: str) -> Event | None:
        """A line of a JSON value written across lines: the value is an event at its closing line or a blank one."""
        if line.strip():
            block.append(line)
            if line.rstrip() != _CLOSE[block[0].strip()]:
                return None
        self.block = None
        return self._event(self.start, None, "\n".join(block))

    def _event(self, line: int, name: str | None, data: str) -> Event:
        self.number += 1
        return Event(line, self.number, name, data)

    def rest(self) -> Iterator[Event]:
        """What the end of the text ends: a JSON value still open, an event without its blank line."""
        if self.block is not None:
            yield self._event(self.start, None, "\n".join(self.block))
        if self.data:
            yield self._event(self.start, self.name, "\n".join(self.data))


def where_event(prefix: str, ev: Event) -> str:
    label = f"line {ev.line} (event {ev.number}"
    label += f" '{ev.name}')" if ev.name else ")"
    return f"{prefix}{label}"
