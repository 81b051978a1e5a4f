"""What the recording proxy saw, split into conversations and written as cassettes and sequences.

Each exchange the proxy passed through (:class:`Exchange`: the request as the client sent it, the
upstream's status, headers and body chunks with their arrival times) is redacted
(:mod:`bench.record.redact`) into one VCR-style cassette interaction, so no credential is written:
bodies are decoded (within the importers' inflation bounds) and kept as bytes where they are not
UTF-8 (``raw``), and what cannot be decoded, so cannot be searched, is left out and said so
(``withheld``). The cassette importer (:mod:`bench.importers.cassette`) then reads each
conversation's cassette back into a sequence (:func:`bench.importers.sequence.build_sequences`): the
importers' rules, not a second importer; an answer the upstream broke off becomes the broken
connection the client got (``error``), which its bytes alone do not say.

Conversations are told apart the way the replay server follows a client: a request that names a
reply by reference (a Responses ``previous_response_id``, an Anthropic thread) belongs to that
reply's conversation, rebuilt by :func:`bench.serve.threads.follow`; any other request belongs to the
latest conversation on its wire whose last request its history extends (the dialect-neutral items
of :mod:`bench.wires.conversation`, compared as the observation compares them), and starts a new
one when it extends none. A request that repeats a conversation's last history (a resend) stays in
it, unless that conversation's last reply was a finished answer (``stop``): then it is a new run.

Files, for the recording named NAME in folder OUT: ``OUT/NAME-<k>.yaml`` (the sequence of
conversation k) and ``OUT/NAME-<k>.cassette`` (its interactions); requests that are no model call
(model lists, token counts) go to ``OUT/NAME-side.cassette``. Every file is written again, all or
nothing, after each exchange, so a proxy stopped at any moment leaves a usable recording. The files
are written by a writer thread of their own, not on the proxy's event loop: writing a large
conversation takes seconds (the YAML writer is pure Python), and the proxy goes on passing requests
meanwhile; exchanges that arrive during a write are written together by the next one. The proxy's
stop waits for the last write (:meth:`Recorder.close`).
"""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from bench.catalogue.files import write_all_or_nothing
from bench.catalogue.load import SequenceError
from bench.catalogue.yaml_write import dump
from bench.engine.model import ErrorKind, Turn, TurnError
from bench.importers import import_capture, read_body
from bench.importers.cassette import dialect_of_uri
from bench.importers.sequence import Options, build_sequences
from bench.record import eventstream
from bench.record.redact import (
    MASK,
    Redactor,
    array_items,
    incomplete_json,
    is_credential_header,
    redact_array,
    redact_sse,
    redact_values,
    rewrite_json,
)
from bench.serve.threads import Refusal, follow
from bench.wires.capture import (
    MAX_INFLATED,
    MAX_RATIO,
    RATIO_FLOOR,
    CaptureError,
    ImportedTurn,
    ImportResult,
    inflate,
    past_bound,
)
from bench.wires.registry import wire

if TYPE_CHECKING:
    from bench.faults import Injected

EVENTSTREAM = "application/vnd.amazon.eventstream"
_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"})


def version() -> str:
    """The proxy's version: the installed stopbench's."""
    try:
        return metadata.version("stopbench")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(slots=True)
class Exchange:
    """One request the proxy passed on and the upstream's answer, as they went through."""

    method: str
    target: str
    """The path and query as the client sent them."""
    request_headers: list[tuple[str, str]]
    request_body: bytes
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: int = 0
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    """Each body chunk as it came from the upstream, with its arrival in seconds after the request."""
    ended: str | None = None
    """Why the body ended early (the upstream broke the connection), or None for a clean end."""
    error: tuple[ErrorKind, str] | None = None
    """What the client got in place of the answer's end when the upstream failed mid-body (the kind
    and what happened), or None."""
    answered_by: str | None = None
    """Why the status and body are the proxy's own (the upstream gave no answer), or None."""
    injected: tuple[int, str, Injected] | None = None
    """What a fault recipe did to the answer on its way to the client (``record --faults``): the
    proxy's model request number, the recipe's name and what was done; None when nothing. The body
    above is the upstream's, untouched."""

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.response_headers if k.lower() == name), None)

    def request_header(self, name: str) -> str | None:
        return next((v for k, v in self.request_headers if k.lower() == name), None)


@dataclass(frozen=True, slots=True)
class Bounds:
    """How far a compressed body is inflated: the importer's bounds (:func:`bench.wires.capture.inflate`
    and its :data:`~bench.wires.capture.MAX_INFLATED`, :data:`~bench.wires.capture.MAX_RATIO`), which
    tests make small."""

    limit: int = MAX_INFLATED
    ratio: int = MAX_RATIO
    floor: int = RATIO_FLOOR


BOUNDS = Bounds()


def plain(body: bytes, coding: str | None, bounds: Bounds = BOUNDS, *, cut: bool = False) -> tuple[bytes | None, str]:
    """`body` without its content coding (gzip, deflate; br when the brotli package is installed),
    inflated within `bounds` (what a body `cut` short inflates to); (None, why) when it cannot be undone."""
    coding = (coding or "").lower().strip()
    if coding in ("", "identity"):
        return body, ""
    if coding == "br":
        return _unbrotli(body, bounds, cut)
    if coding not in ("gzip", "x-gzip", "deflate"):
        return None, f"content-encoding {coding!r} is not one stopbench undoes (gzip, deflate, br)"
    try:
        return inflate(body, "", "", limit=bounds.limit, ratio=bounds.ratio, floor=bounds.floor,
                       coding="deflate" if coding == "deflate" else "gzip", cut=cut), ""
    except CaptureError as exc:
        return None, exc.problem


_PIECE = 1 << 16


def _unbrotli(body: bytes, bounds: Bounds, cut: bool) -> tuple[bytes | None, str]:
    """A brotli body decoded a piece at a time within `bounds` (:func:`bench.wires.capture.past_bound`)."""
    try:
        import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None, "content-encoding 'br' and no brotli decoder installed (pip install brotli)"
    d = brotli.Decompressor()
    out: list[bytes] = []
    size = 0
    try:
        for start in range(0, len(body), _PIECE):
            data = body[start:start + _PIECE]
            while True:
                piece = d.process(data, output_buffer_limit=_PIECE)
                data, size = b"", size + len(piece)
                problem = past_bound("br", size, min(start + _PIECE, len(body)), len(body), limit=bounds.limit,
                                     ratio=bounds.ratio, floor=bounds.floor)
                if problem is not None:
                    return None, problem
                out.append(piece)
                if d.can_accept_more_data():
                    break
    except brotli.error as exc:
        return None, f"br body: {exc}"
    if not d.is_finished() and not cut:
        return None, "br body: cut short (no end of stream)"
    return b"".join(out), ""


def _headers(pairs: list[tuple[str, str]], rx: Redactor) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        if is_credential_header(name) or name.lower() in _HOP:
            continue
        out.setdefault(rx.text(name.lower()), []).append(rx.text(value))
    return out


def redact_target(target: str, rx: Redactor) -> str:
    """A path and query with every ``key`` parameter masked and the patterns applied."""
    parts = urlsplit(target)
    query = [(k, MASK if is_credential_header(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    path = parts.path + (f"?{urlencode(query, safe='[]:/')}" if parts.query else "")
    return rx.text(path)


def redact_body(text: str, content_type: str, rx: Redactor) -> str:
    """A response body's text redacted: a stream over its reassembled values (SSE, JSON lines, or a
    JSON array of chunks), a whole body as text."""
    head = text.lstrip()[:16]
    if _is_stream(text, content_type):
        return redact_sse(text, rx)
    if head.startswith("["):
        return redact_array(text, rx)
    return rx.text(text)


def _is_stream(text: str, content_type: str) -> bool:
    """Whether a body is a stream of events (SSE, or JSON lines) rather than one JSON value."""
    head = text.lstrip()[:16]
    return "event-stream" in content_type or head.startswith(("data:", "event:", ":")) or (
        head.startswith("{") and "\n{" in text.strip())


def cut_tail(text: str, content_type: str) -> tuple[str, str]:
    """A stream's text without its last event or chunk when the upstream cut it off inside its JSON
    (a secret begun in the events before it cannot be reassembled with it), and what was cut; an
    event or array item that came whole is kept."""
    if _is_stream(text, content_type):
        last = re.split(r"\r\n|\n|\r", text)[-1]
        if incomplete_json(last):
            return text[:len(text) - len(last)], f"{len(last):,} character(s) of an event cut off inside its JSON"
    elif text.lstrip().startswith("["):
        items, end = array_items(text)
        rest = text[end:]
        if rest.strip(" \t\r\n,"):
            return text[:end], f"{len(rest):,} character(s) after chunk {len(items)} (a chunk cut off)"
    return text, ""


def redact_eventstream(data: bytes, rx: Redactor) -> tuple[bytes, list[dict[str, Any]], str]:
    """An AWS event stream redacted over its messages' reassembled payloads (per event type), then
    every message's header and payload bytes as bytes; the redacted bytes (changed messages framed
    again), the events as botocore yields them, and what was withheld: bytes after the last whole
    message (a message cut off, a prelude whose CRC or length is wrong) cannot be searched, so they
    are not kept."""
    messages, rest = eventstream.decode(data)
    payloads = [_json_payload(m.payload) for m in messages]
    before = json.loads(json.dumps(payloads))
    changed = redact_values(payloads, rx, lambda i: messages[i].headers.get(":event-type", ""))
    out = bytearray()
    events: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        payload = m.payload
        if i in changed:
            payload = _utf8(rewrite_json(payload.decode("utf-8", "surrogateescape"), before[i], payloads[i]))
        head, payload = rx.data(m.raw_headers), rx.data(payload)
        if (head, payload) != (m.raw_headers, m.payload):
            [m], _ = eventstream.decode(eventstream.Message(head, m.headers, payload).encode())
        out += m.encode()  # an unchanged message framed again is its own bytes (same headers, same CRCs)
        event = m.as_event()
        if event is not None:
            events.append(event)
    withheld = f"{len(rest):,} byte(s) after message {len(messages)} ({_undecodable(rest)})" if rest else ""
    return bytes(out), events, withheld


def _json_payload(payload: bytes) -> Any:
    try:
        return json.loads(payload or b"{}")
    except ValueError:
        return None


def _undecodable(rest: bytes) -> str:
    """Why the bytes after an event stream's last whole message are no message."""
    if len(rest) < 16:
        return "a message cut off"
    total, _ = struct.unpack(">II", rest[:8])
    if struct.unpack(">I", rest[8:12])[0] != zlib.crc32(rest[:8]):
        return "a message prelude whose CRC does not match"
    if total > len(rest):
        return f"a message cut off: its prelude gives {total:,} bytes, {len(rest):,} came"
    return f"a message prelude whose lengths do not add up ({total:,} bytes in all)"


def _utf8(text: str) -> bytes:
    """Text read from bytes (``surrogateescape``) and redacted, as bytes again: the bytes UTF-8 could
    not read come back as they came."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate a JSON escape wrote
        return text.encode("utf-8", "surrogatepass")


def _kept(data: bytes) -> dict[str, Any]:
    """A redacted body as the cassette keeps it: its text, and its bytes (``raw``, base64) beside it
    when they are not UTF-8, so none is lost to a replacement character."""
    try:
        return {"string": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"string": data.decode("utf-8", "replace"), "raw": base64.b64encode(data).decode()}


_WITHHELD = ": it cannot be searched for secrets, so it is not written"


def _response_body(ex: Exchange, rx: Redactor, bounds: Bounds) -> dict[str, Any]:
    """The answer's body fields of a cassette interaction: ``body``, ``raw`` and ``withheld``."""
    data, why = plain(ex.body, ex.header("content-encoding"), bounds, cut=ex.error is not None)
    if data is None:
        return {"body": {"string": ""}, "withheld": f"the body ({len(ex.body):,} bytes; {why}){_WITHHELD}"}
    content_type = (ex.header("content-type") or "").lower()
    if content_type.startswith(EVENTSTREAM):
        raw, events, withheld = redact_eventstream(data, rx)
        out: dict[str, Any] = {"body": {"string": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)},
                               "raw": base64.b64encode(raw).decode()}
        if withheld:
            out["withheld"] = withheld + _WITHHELD
        return out
    text, cut = cut_tail(data.decode("utf-8", "surrogateescape"), content_type)
    kept = _kept(_utf8(redact_body(text, content_type, rx)))
    raw = kept.pop("raw", None)
    return {"body": kept} | ({"raw": raw} if raw is not None else {}) | (
        {"withheld": cut + _WITHHELD} if cut else {})


def _request_body(ex: Exchange, rx: Redactor, bounds: Bounds) -> dict[str, Any]:
    """The request's body fields of a cassette interaction: ``body`` (text), ``raw`` and ``withheld``."""
    data, why = plain(ex.request_body, ex.request_header("content-encoding"), bounds)
    if data is None:
        return {"body": "", "withheld": f"the body ({len(ex.request_body):,} bytes; {why}){_WITHHELD}"}
    kept = _kept(rx.data(data))
    return {"body": kept["string"]} | ({"raw": kept["raw"]} if "raw" in kept else {})


def interaction(ex: Exchange, upstream: str, rx: Redactor, bounds: Bounds = BOUNDS) -> dict[str, Any]:
    """The exchange as one redacted cassette interaction (the layout VCR.py writes, which
    :mod:`bench.importers.cassette` reads), with the upstream's chunk timing beside it, what the
    upstream's failure left the client with (``error``), and what could not be kept (``withheld``)."""
    response: dict[str, Any] = {
        "status": {"code": ex.status, "message": ""},
        "headers": _headers(ex.response_headers, rx),
        **_response_body(ex, rx, bounds),
        "chunks": [[round(at, 4), len(chunk)] for at, chunk in ex.chunks],
    }
    if ex.ended:
        response["ended"] = ex.ended
    if ex.error is not None:
        response["error"] = {"kind": ex.error[0], "message": rx.text(ex.error[1])}
    if ex.answered_by:
        response["answered_by"] = rx.text(ex.answered_by)
    if ex.injected is not None:
        number, recipe, done = ex.injected
        response["injected"] = {"request": number, "recipe": recipe, **done.as_json()}
    return {
        "request": {"method": ex.method, "uri": upstream.rstrip("/") + redact_target(ex.target, rx),
                    "headers": _headers(ex.request_headers, rx), **_request_body(ex, rx, bounds)},
        "response": response,
        "recorded_at": ex.started.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }


def response_bytes(inter: dict[str, Any]) -> bytes:
    """The response body a recorded interaction holds, as the client received it (redacted)."""
    resp = inter["response"]
    if "raw" in resp:
        return base64.b64decode(resp["raw"])
    text: str = resp["body"]["string"]
    return text.encode()


@dataclass(slots=True)
class _Conversation:
    number: int
    dialect: str
    interactions: list[dict[str, Any]] = field(default_factory=list)
    history: tuple[Any, ...] = ()
    replies: dict[str, tuple[dict[str, Any], Turn]] = field(default_factory=dict)
    last: Turn | None = None
    models: list[str] = field(default_factory=list)


_SIDE = 0
"""The key of the side cassette among the files waiting to be written (conversations count from 1)."""


class Recorder:
    """Turns exchanges into a recording as they complete; safe to call from the proxy's handlers.

    :meth:`add` places an exchange in its conversation and returns at once; a writer thread writes
    the conversations that changed. :meth:`close` waits for every write, then ends the thread."""

    def __init__(self, upstream: str, out: Path, name: str, rx: Redactor, bounds: Bounds = BOUNDS) -> None:
        self.upstream = upstream.rstrip("/")
        self.out = out
        self.name = name
        self.rx = rx
        self.bounds = bounds
        self.lock = threading.Lock()
        self.conversations: list[_Conversation] = []
        self.side: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.lost: dict[str, str] = {}
        """What is not on disk as it was recorded (a conversation, the side cassette, an exchange), and why."""
        self.written: list[Path] = []
        self._changed = threading.Condition(self.lock)
        self._pending: dict[int, _Conversation | None] = {}
        """Conversations (by number; the side cassette under _SIDE) changed since their last write."""
        self._writing = False
        self._closed = False
        self._writer: threading.Thread | None = None

    def add(self, ex: Exchange) -> None:
        """Record one completed exchange; its conversation's files are written again by the writer. An
        exchange that cannot be recorded is counted as lost (:attr:`lost`); the proxy goes on."""
        try:
            inter = interaction(ex, self.upstream, self.rx, self.bounds)
        except Exception as exc:
            with self.lock:
                self.lost[f"{ex.method} {redact_target(ex.target, self.rx)}"] = f"{type(exc).__name__}: {exc}"
            return
        with self.lock:
            conv = self._place(ex, inter)
            if conv is None:
                self.side.append(inter)
            what = "the side cassette" if conv is None else self.sequence_id(conv)
            count = len(self.side if conv is None else conv.interactions)
            self.problems += [f"{what}: request {count}: {side}: {inter[side].get('withheld')}"
                              for side in ("request", "response") if inter[side].get("withheld")]
            self._pending[_SIDE if conv is None else conv.number] = conv
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_changed, name="stopbench-record-writer",
                                                 daemon=True)
                self._writer.start()
            self._changed.notify_all()

    def writing(self) -> bool:
        """Whether exchanges added so far are still to be written."""
        with self.lock:
            return bool(self._pending) or self._writing

    def close(self) -> None:
        """Write what is left and end the writer thread."""
        with self.lock:
            self._closed = True
            self._changed.notify_all()
            writer = self._writer
        if writer is not None:
            writer.join()

    def _write_changed(self) -> None:
        """The writer thread: write each changed conversation, as it stands when its write starts."""
        while True:
            with self.lock:
                while not self._pending and not self._closed:
                    self._changed.wait()
                if not self._pending:
                    return
                changed = [replace(c, interactions=list(c.interactions), models=list(c.models))
                           if c is not None else None for c in self._pending.values()]
                side = list(self.side)
                self._pending.clear()
                self._writing = True
            done: list[Path] = []
            for conv in changed:
                try:
                    files = ({self.out / f"{self.name}-side.cassette": dump({"interactions": side})} if conv is None
                             else self._files(conv))
                    write_all_or_nothing(files)
                    done += files
                    self.lost.pop(self._what(conv), None)  # a later write of it holds all it lost
                except Exception as exc:  # the proxy goes on; the recording says what it could not write
                    self.lost[self._what(conv)] = f"{type(exc).__name__}: {exc}"
            with self.lock:
                self.written.extend(p for p in done if p not in self.written)
                self._writing = False
                self._changed.notify_all()

    def _place(self, ex: Exchange, inter: dict[str, Any]) -> _Conversation | None:
        path = urlsplit(ex.target).path
        dialect = dialect_of_uri(path)
        try:
            body = json.loads(inter["request"]["body"])
        except ValueError:
            body = None
        if dialect is None or not isinstance(body, dict):
            return None
        w = wire(dialect)
        if w.route(path) != "model":
            return None
        turn = self._turn(inter, dialect)

        def replied(ref: str) -> tuple[dict[str, Any], Turn] | None:
            return next((c.replies[ref] for c in self.conversations if ref in c.replies), None)

        ref = w.reference(body)
        owner = next((c for c in self.conversations if ref is not None and ref in c.replies), None)
        followed = follow(dialect, body, replied)
        full = body if isinstance(followed, Refusal) else followed
        try:
            history = tuple(item.key() for item in w.conversation(full).items)
        except Exception:  # a body the wire's reader does not expect: a conversation of its own
            history = ()
        conv = owner or self._extends(dialect, history)
        if conv is None:
            conv = _Conversation(len(self.conversations) + 1, dialect)
            self.conversations.append(conv)
        conv.interactions.append(inter)
        conv.history = history
        conv.last = turn.turn if turn is not None and "error" not in inter["response"] else None  # broken: no finish
        if turn is not None and "id" in turn.meta:
            conv.replies[turn.meta["id"]] = (full, turn.turn)
        shape = w.shape(path, None)
        model = shape.model if shape is not None and shape.model is not None else body.get("model")
        if isinstance(model, str) and model not in conv.models:
            conv.models.append(model)
        return conv

    def _extends(self, dialect: str, history: tuple[Any, ...]) -> _Conversation | None:
        for conv in reversed(self.conversations):
            if conv.dialect != dialect or not history or len(conv.history) > len(history):
                continue
            if history[:len(conv.history)] != conv.history:
                continue
            if len(conv.history) == len(history) and conv.last is not None and conv.last.finish == "stop":
                continue  # the same history after a finished answer: a new run
            return conv
        return None

    def _turn(self, inter: dict[str, Any], dialect: str) -> ImportedTurn | None:
        status = inter["response"]["status"]["code"]
        try:
            return read_body(inter["response"]["body"]["string"], dialect,  # type: ignore[arg-type]
                             "recording", "response", Counter(), status if status >= 400 else None)
        except (CaptureError, ValueError, KeyError):
            return None

    def sequence_id(self, conv: _Conversation) -> str:
        return f"{self.name}-{conv.number}"

    def _what(self, conv: _Conversation | None) -> str:
        return f"{self.name}-side.cassette" if conv is None else f"{self.sequence_id(conv)} (.yaml, .cassette)"

    def _files(self, conv: _Conversation) -> dict[Path, str]:
        seq_id = self.sequence_id(conv)
        cassette_path = self.out / f"{seq_id}.cassette"
        cassette = dump({"interactions": conv.interactions})
        files = {cassette_path: cassette}
        doc = self._sequence(conv, cassette_path, cassette)
        if doc is not None:
            files[self.out / f"{seq_id}.yaml"] = dump(doc)
        return files

    def _sequence(self, conv: _Conversation, path: Path, text: str) -> dict[str, Any] | None:
        """The conversation's sequence, imported from its cassette by the cassette importer."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="stopbench-record-") as tmp:
            staged = Path(tmp) / path.name
            staged.write_text(text, encoding="utf-8")
            try:
                result = import_capture(staged, "cassette", shown=path.name)
                failed = _failures(conv.interactions, result)
                first = conv.interactions[0]["recorded_at"]
                opts = Options(
                    summary=f"recorded by stopbench record from {self.upstream} ({conv.dialect}, "
                            f"{len(conv.interactions)} request(s))",
                    title=f"{conv.dialect} conversation {conv.number} recorded from {self.upstream}",
                    provenance={"upstream": self.upstream, "models asked": "; ".join(conv.models) or "(none named)",
                                "recorded": first, "recorded by": f"stopbench record {version()}",
                                **_injected(conv), **failed},
                    tags=("recorded-by-proxy",), split_runs=False)
                docs = build_sequences(result, self.sequence_id(conv), opts)
            except (CaptureError, SequenceError) as exc:
                self.problems.append(f"{path.name}: no sequence written: {exc}")
                return None
        doc = docs[0][1]
        _redact_doc(doc, self.rx)
        return doc


_SKIPPED = re.compile(r"interactions\[(\d+)\]")


def _failures(interactions: list[dict[str, Any]], result: ImportResult) -> dict[str, str]:
    """Each answer the upstream broke off made the error the client got (``error`` of the cassette's
    response: a broken connection, not the clean cut or finish its bytes so far would read as), and
    a provenance line naming them; nothing when none was."""
    skipped = {int(m.group(1)) for s in result.skipped if (m := _SKIPPED.match(s))}
    said = []
    for i, inter in enumerate(interactions):
        error = inter["response"].get("error")
        if error is None or i in skipped:
            continue
        imported = result.turns[i - sum(1 for k in skipped if k < i)]
        before = imported.turn
        status = before.error.status if before.error is not None else None
        imported.turn = replace(before, finish="error", finish_raw=None,
                                error=TurnError(error["kind"], error["message"], status))
        said.append(f"answer {i + 1}: {error['message']} ({error['kind']})")
    return {"upstream failures": "; ".join(said)} if said else {}


def _injected(conv: _Conversation) -> dict[str, str]:
    """A provenance line for the faults a recipe injected into the conversation's answers on their
    way to the client (the recorded bytes are the upstream's), or nothing."""
    done = [(k, i["response"]["injected"]) for k, i in enumerate(conv.interactions, 1) if "injected" in i["response"]]
    if not done:
        return {}
    recipes = sorted({d["recipe"] for _, d in done})
    said = "; ".join(f"answer {k} (proxy request {d['request']}): {', '.join(d['done'])}" for k, d in done)
    return {"faults injected": f"recipe {', '.join(recipes)}, on the way to the client only (the recorded "
                               f"answers are the upstream's): {said}"}


def _redact_doc(value: Any, rx: Redactor) -> None:
    """The patterns applied once more to every string of the sequence document (the assembled text)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(items):
        if isinstance(item, str):
            value[key] = rx.text(item)
        else:
            _redact_doc(item, rx)
