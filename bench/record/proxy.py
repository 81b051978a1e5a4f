"""The recording proxy: a Starlette app that passes every request on to the upstream and its answer
back unchanged, chunk by chunk, and hands each finished exchange to a :class:`~bench.record.recording.Recorder`.

The client sees the upstream's status, headers (less the hop-by-hop ones, which belong to each
connection) and body bytes as they came: each chunk the upstream sends is written to the client
as soon as it arrives (one ASGI body message per chunk, which uvicorn writes at once), so SSE
framing, blank lines, event order and the AWS event-stream framing pass through as they are. When
the upstream breaks the connection mid-body, the proxy breaks the client's too. The request goes
on with the client's own headers (credentials included: the upstream needs them), less ``host``
and the hop-by-hop ones; the upstream client (httpx) adds no header the client did not send.

With a fault recipe (``stopbench record --faults``), each model answer is read whole from the
upstream, cut into frames (an SSE event, an AWS event-stream message, a JSON body), and sent to the
client as the recipe delivers it (:func:`bench.faults.inject`, the replay server's own function);
the recording keeps the upstream's bytes and says what was injected (:class:`Exchange` ``injected``).
Requests are counted from the proxy's start (1 is its first model request) for the recipe's
``requests``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from bench.engine.model import ErrorKind
from bench.importers.cassette import dialect_of_uri
from bench.record.recording import EVENTSTREAM, Exchange, Recorder, plain, redact_target
from bench.serve.respond import Frame, Plan, PlanResponse
from bench.wires.base import NDJSON_MEDIA
from bench.wires.registry import wire

if TYPE_CHECKING:
    from bench.faults import Recipe

_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
                  "proxy-authenticate"})
_NOT_FORWARDED = _HOP | {"host", "content-length"}
_HTTPX_DEFAULTS = ("accept", "accept-encoding", "user-agent", "connection")
TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""A model's answer may take minutes; connecting may not."""


WRITE_TIMEOUT = 60.0
"""Seconds a client may stop reading a faulted answer before the proxy cuts it off."""


def model_wire(target: str) -> str | None:
    """The wire of a model request's path (None for anything else: model lists, token counts)."""
    path = urlsplit(target).path
    dialect = dialect_of_uri(path)
    if dialect is None or wire(dialect).route(path) != "model":
        return None
    return dialect


_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)", re.S)
"""One SSE event with the blank line that ends it."""


def frames_of(body: bytes, content_type: str) -> list[bytes]:
    """An answer's body cut where the replay server cuts its frames: after each SSE event's blank
    line, at each AWS event-stream message (its 4-byte total length), after each line of a stream of
    JSON lines, else one frame (a JSON body)."""
    if content_type.startswith(NDJSON_MEDIA):
        return body.splitlines(keepends=True)
    if content_type.startswith("text/event-stream"):
        out = [m.group() for m in _EVENT.finditer(body)]
        rest = body[sum(len(f) for f in out):]
        return out + ([rest] if rest else [])
    if content_type.startswith(EVENTSTREAM):
        out, start = [], 0
        while start + 4 <= len(body):
            size = int.from_bytes(body[start:start + 4], "big")
            if size < 16:
                break
            out.append(body[start:start + size])
            start += size
        return out + ([body[start:]] if start < len(body) else [])
    return [body] if body else []


class UpstreamBroke(Exception):
    """The upstream broke an answer off mid-body: raised into the server so it breaks the client's
    connection too; logged as its one line (:class:`OneLine`), never as a traceback."""


class OneLine(logging.Filter):
    """Makes the server's log of an :class:`UpstreamBroke` its one line, a warning (an answer the
    proxy's stop cut off is kept out of the log by :mod:`bench.cli._stops`, as for every command)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, UpstreamBroke):
            record.msg, record.args, record.exc_info, record.exc_text = "%s", (str(exc),), None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _one_line_log() -> None:
    """The filter on the server's error log, once."""
    log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, OneLine) for f in log.filters):
        log.addFilter(OneLine())


def failure(exc: BaseException, size: int, then: str) -> tuple[ErrorKind, str]:
    """The kind and the words of an upstream failure after `size` body bytes, as the client gets it:
    its connection broken off (whatever broke the upstream's: a reset, a body shorter than its
    Content-Length, a read that timed out); `then` says what the client got."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return "connection_reset", f"the upstream broke off the answer after {size:,} bytes ({detail}); {then}"


def no_answer(ex: Exchange, exc: BaseException, upstream: str, started: float) -> bytes:
    """Make `ex` the proxy's own answer to a request the upstream did not answer (504 for a timeout or
    a proxy stopped meanwhile, else 502), and its body, which the client gets."""
    stopped = isinstance(exc, asyncio.CancelledError)
    timeout = stopped or isinstance(exc, httpx.TimeoutException)
    why = ("the proxy stopped before it did" if stopped
           else f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    body = json.dumps({"error": {"message": f"stopbench record: the upstream {upstream} did not answer: {why}",
                                 "type": "upstream_timeout" if timeout else "upstream_unreachable"}}).encode()
    ex.status = 504 if timeout else 502
    ex.response_headers = [("content-type", "application/json")]
    ex.chunks = [(time.monotonic() - started, body)]
    ex.answered_by = f"stopbench record: the upstream gave no answer ({why})"
    return body


def create_proxy(recorder: Recorder, client: httpx.AsyncClient | None = None,
                 faults: Recipe | None = None) -> Starlette:
    """The proxy app in front of `recorder`'s upstream; `faults` applied to every model answer."""
    proxy = Proxy(recorder, client or httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False), faults)
    _one_line_log()
    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{rest:path}", proxy.handle, methods=methods)])


class Proxy:
    """The proxy's handlers: every request goes on to `recorder`'s upstream through `http`, its answer
    comes back relayed as it arrives (:meth:`relayed`) or, with a fault recipe and a model request,
    whole and then as the recipe delivers it (:meth:`faulted`); each exchange goes to the recorder."""

    def __init__(self, recorder: Recorder, http: httpx.AsyncClient, faults: Recipe | None) -> None:
        self.recorder = recorder
        self.upstream = recorder.upstream
        self.http = http
        self.faults = faults
        self.add = recorder.add
        self.counted = 0
        """Model requests answered with the recipe so far (1 is the proxy's first)."""

    def shown(self, ex: Exchange) -> str:
        """The request's path as a note shows it: redacted, as the recording writes it (a note may end
        up in a log file)."""
        return redact_target(ex.target, self.recorder.rx)

    async def handle(self, request: Request) -> Response:
        """Any request: sent on to the upstream, its answer relayed (or faulted), the exchange recorded."""
        body = await request.body()
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        ex = Exchange(request.method, target, list(request.headers.items()), body)
        req = self.upstream_request(ex)
        started = time.monotonic()
        try:
            resp = await self.http.send(req, stream=True)
        except (httpx.HTTPError, asyncio.CancelledError) as exc:  # no answer, or the proxy stopped meanwhile
            answer = no_answer(ex, exc, self.upstream, started)
            self.add(ex)
            if not isinstance(exc, httpx.HTTPError):
                raise
            return Response(answer, ex.status, media_type="application/json")
        ex.status = resp.status_code
        ex.response_headers = list(resp.headers.multi_items())
        dialect = model_wire(target) if self.faults is not None else None
        if self.faults is not None and dialect is not None:
            self.counted += 1
            return await self.faulted(self.faults, resp, ex, dialect, self.counted, started)
        return self.relayed(resp, ex, started)

    def upstream_request(self, ex: Exchange) -> httpx.Request:
        """The request to the upstream: the client's method, target, body and headers, less ``host``,
        the length and the hop-by-hop ones, and without a default header httpx would add."""
        sent = {k.lower() for k, _ in ex.request_headers}
        req = self.http.build_request(ex.method, self.upstream + ex.target, content=ex.request_body,
                                      headers=[(k, v) for k, v in ex.request_headers
                                               if k.lower() not in _NOT_FORWARDED])
        for name in _HTTPX_DEFAULTS:
            if name not in sent and name in req.headers:
                del req.headers[name]
        return req

    def relayed(self, resp: httpx.Response, ex: Exchange, started: float) -> StreamingResponse:
        """The upstream's answer to the client, each chunk as it arrives, with its status and headers
        less the hop-by-hop ones."""
        out = StreamingResponse(self.relay(resp, ex, started), status_code=resp.status_code)
        out.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in resp.headers.multi_items()
                           if k.lower() not in _HOP]
        return out

    async def relay(self, resp: httpx.Response, ex: Exchange, started: float) -> AsyncIterator[bytes]:
        """The upstream's body chunks, recorded on `ex` as they pass; an upstream that breaks off
        breaks the client's connection too (:class:`UpstreamBroke`)."""
        try:
            async for chunk in resp.aiter_raw():
                ex.chunks.append((time.monotonic() - started, chunk))
                yield chunk
        except httpx.HTTPError as exc:
            ex.ended = f"the upstream broke the connection ({type(exc).__name__})"
            ex.error = failure(exc, len(ex.body), "the proxy broke the client's connection too")
            raise UpstreamBroke(f"stopbench record: {ex.method} {self.shown(ex)}: {ex.error[1]}") from None
        except BaseException:  # cancelled or closed: the client went away mid-body
            ex.ended = "the client went away before the end"
            raise
        finally:
            self.add(ex)  # before anything is awaited: a cancelled task would not get past an await
            await resp.aclose()

    async def faulted(self, recipe: Recipe, resp: httpx.Response, ex: Exchange, dialect: str, number: int,
                      started: float) -> Response:
        """The upstream's whole answer, recorded as it came, then sent as `recipe` delivers it."""

        try:
            async for chunk in resp.aiter_raw():
                ex.chunks.append((time.monotonic() - started, chunk))
        except httpx.HTTPError as exc:
            ex.ended = f"the upstream broke the connection ({type(exc).__name__})"
            ex.error = failure(exc, len(ex.body), "the client got the answer cut there")
        except BaseException:
            ex.ended = "the client went away before the end"
            raise
        finally:
            plan = self.deliver(recipe, ex, resp, dialect, number)
            self.add(ex)  # before anything is awaited: a cancelled task would not get past an await
            await resp.aclose()
        return PlanResponse(plan, WRITE_TIMEOUT)

    def deliver(self, recipe: Recipe, ex: Exchange, resp: httpx.Response, dialect: str, number: int) -> Plan:
        """The plan of the upstream's answer as `recipe` delivers it; what it did noted on `ex`."""
        from bench.faults import inject

        headers = [(k.lower(), v) for k, v in resp.headers.multi_items()
                   if k.lower() not in _HOP and k.lower() != "content-length"]
        end: Literal["close", "cut"] = "cut" if ex.ended else "close"
        content_type = (resp.headers.get("content-type") or "").lower()
        body, why = plain(ex.body, resp.headers.get("content-encoding"), self.recorder.bounds,
                          cut=ex.error is not None)
        if body is None:
            self.recorder.problems.append(f"{ex.method} {self.shown(ex)}: no fault injected ({why})")
            return Plan(ex.status, tuple(headers), (Frame(ex.body),), end)
        headers = [(k, v) for k, v in headers if k != "content-encoding"]
        if not content_type.startswith(("text/event-stream", EVENTSTREAM, NDJSON_MEDIA)):
            headers.append(("content-length", str(len(body))))
        plan = Plan(ex.status, tuple(headers), tuple(Frame(f) for f in frames_of(body, content_type)), end)
        plan, injected = inject(recipe, plan, wire=dialect, request_index=number, key=self.recorder.name)
        if injected:
            ex.injected = (number, recipe.name, injected)
        return plan
