"""What the recording proxy saw, split into conversations and written as cassettes and sequences.

Each exchange the proxy passed through (:class:`Exchange`: the request as the client sent it, the
upstream's status, headers and body chunks with their arrival times) is redacted
(:mod:`bench.record.redact`) into one VCR-style cassette interaction, so nothing is lost and no
credential is written. The cassette importer (:mod:`bench.importers.cassette`) then reads each
conversation's cassette back into a sequence (:func:`bench.importers.sequence.build_sequences`): the
importers' rules, not a second importer.

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
import gzip
import json
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
from bench.engine.model import Turn
from bench.importers import _read, import_capture
from bench.importers.cassette import dialect_of_uri
from bench.importers.sequence import Options, build_sequences
from bench.record import eventstream
from bench.record.redact import MASK, Redactor, is_credential_header, redact_sse, redact_values, rewrite_json
from bench.serve.threads import Refusal, follow
from bench.wires.capture import CaptureError, ImportedTurn
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
    injected: tuple[int, str, Injected] | None = None
    """What a fault recipe did to the answer on its way to the client (``record --faults``): the
    proxy's model request number, the recipe's name and what was done; None when nothing. The body
    above is the upstream's, untouched."""

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.response_headers if k.lower() == name), None)


def _headers(pairs: list[tuple[str, str]], rx: Redactor) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        if is_credential_header(name) or name.lower() in _HOP:
            continue
        out.setdefault(name.lower(), []).append(rx.text(value))
    return out


def redact_target(target: str, rx: Redactor) -> str:
    """A path and query with every ``key`` parameter masked and the patterns applied."""
    parts = urlsplit(target)
    query = [(k, MASK if is_credential_header(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    path = parts.path + (f"?{urlencode(query, safe='[]:/')}" if parts.query else "")
    return rx.text(path)


def _decoded(ex: Exchange) -> bytes:
    body = ex.body
    coding = (ex.header("content-encoding") or "").lower()
    try:
        if coding == "gzip":
            return gzip.decompress(body)
        if coding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return body
    return body


def redact_body(text: str, content_type: str, rx: Redactor) -> str:
    """A response body's text redacted: a stream over its reassembled values (SSE, JSON lines, or a
    JSON array of chunks), a whole body as text."""
    head = text.lstrip()[:16]
    if "event-stream" in content_type or head.startswith(("data:", "event:", ":")) or (
            head.startswith("{") and "\n{" in text.strip()):
        return redact_sse(text, rx)
    if head.startswith("["):
        try:
            before = json.loads(text)
        except ValueError:
            return rx.text(text)
        if isinstance(before, list):
            after = json.loads(text)
            if redact_values(after, rx):
                text = rewrite_json(text, before, after)
    return rx.text(text)


def redact_eventstream(data: bytes, rx: Redactor) -> tuple[bytes, list[dict[str, Any]]]:
    """An AWS event stream redacted over its messages' reassembled payloads (per event type); the
    redacted bytes (changed messages framed again) and the events as botocore yields them."""
    messages, rest = eventstream.decode(data)
    payloads: list[Any] = []
    for m in messages:
        try:
            payloads.append(json.loads(m.payload or b"{}"))
        except ValueError:
            payloads.append(None)
    before = json.loads(json.dumps(payloads))
    changed = redact_values(payloads, rx, lambda i: messages[i].headers.get(":event-type", ""))
    out = bytearray()
    events: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if i in changed:
            m = eventstream.Message(m.raw_headers, m.headers,
                                    rewrite_json(m.payload.decode(), before[i], payloads[i]).encode())
        out += m.encode()  # an unchanged message framed again is its own bytes (same headers, same CRCs)
        event = m.as_event()
        if event is not None:
            events.append(event)
    return bytes(out) + rest, events


def interaction(ex: Exchange, upstream: str, rx: Redactor) -> dict[str, Any]:
    """The exchange as one redacted cassette interaction (the layout VCR.py writes, which
    :mod:`bench.importers.cassette` reads), with the upstream's chunk timing beside it."""
    request_text = ex.request_body.decode("utf-8", "replace")
    response: dict[str, Any] = {
        "status": {"code": ex.status, "message": ""},
        "headers": _headers(ex.response_headers, rx),
    }
    content_type = (ex.header("content-type") or "").lower()
    body = _decoded(ex)
    if content_type.startswith(EVENTSTREAM):
        raw, events = redact_eventstream(body, rx)
        response["body"] = {"string": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)}
        response["raw"] = base64.b64encode(raw).decode()
    else:
        response["body"] = {"string": redact_body(body.decode("utf-8", "replace"), content_type, rx)}
    response["chunks"] = [[round(at, 4), len(chunk)] for at, chunk in ex.chunks]
    if ex.ended:
        response["ended"] = ex.ended
    if ex.injected is not None:
        number, recipe, done = ex.injected
        response["injected"] = {"request": number, "recipe": recipe, **done.as_json()}
    return {
        "request": {"method": ex.method, "uri": upstream.rstrip("/") + redact_target(ex.target, rx),
                    "headers": _headers(ex.request_headers, rx), "body": rx.text(request_text)},
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

    def __init__(self, upstream: str, out: Path, name: str, rx: Redactor) -> None:
        self.upstream = upstream.rstrip("/")
        self.out = out
        self.name = name
        self.rx = rx
        self.lock = threading.Lock()
        self.conversations: list[_Conversation] = []
        self.side: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.written: list[Path] = []
        self._changed = threading.Condition(self.lock)
        self._pending: dict[int, _Conversation | None] = {}
        """Conversations (by number; the side cassette under _SIDE) changed since their last write."""
        self._writing = False
        self._closed = False
        self._writer: threading.Thread | None = None

    def add(self, ex: Exchange) -> None:
        """Record one completed exchange; its conversation's files are written again by the writer."""
        inter = interaction(ex, self.upstream, self.rx)
        with self.lock:
            conv = self._place(ex, inter)
            if conv is None:
                self.side.append(inter)
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
                except Exception as exc:  # the proxy goes on; the recording says what it could not write
                    what = "the side cassette" if conv is None else self.sequence_id(conv)
                    self.problems.append(f"{what}: not written: {type(exc).__name__}: {exc}")
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
        conv.last = turn.turn if turn is not None else None
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
            return _read.body(inter["response"]["body"]["string"], dialect,  # type: ignore[arg-type]
                              "recording", "response", Counter(), status if status >= 400 else None)
        except (CaptureError, ValueError, KeyError):
            return None

    def sequence_id(self, conv: _Conversation) -> str:
        return f"{self.name}-{conv.number}"

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
                first = conv.interactions[0]["recorded_at"]
                opts = Options(
                    summary=f"recorded by stopbench record from {self.upstream} ({conv.dialect}, "
                            f"{len(conv.interactions)} request(s))",
                    title=f"{conv.dialect} conversation {conv.number} recorded from {self.upstream}",
                    provenance={"upstream": self.upstream, "models asked": "; ".join(conv.models) or "(none named)",
                                "recorded": first, "recorded by": f"stopbench record {version()}",
                                **_injected(conv)},
                    tags=("recorded-by-proxy",), split_runs=False)
                docs = build_sequences(result, self.sequence_id(conv), opts)
            except (CaptureError, SequenceError) as exc:
                self.problems.append(f"{path.name}: no sequence written: {exc}")
                return None
        doc = docs[0][1]
        _redact_doc(doc, self.rx)
        return doc


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
