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

import re
import time
import zlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.importers.cassette import dialect_of_uri
from bench.record.recording import EVENTSTREAM, Exchange, Recorder
from bench.serve.respond import Frame, Plan, PlanResponse
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


NDJSON = "application/x-ndjson"
"""The content type of a stream of JSON lines (Ollama's ``/api/chat``)."""


def frames_of(body: bytes, content_type: str) -> list[bytes]:
    """An answer's body cut where the replay server cuts its frames: after each SSE event's blank
    line, at each AWS event-stream message (its 4-byte total length), after each line of an NDJSON
    stream (Ollama's), else one frame (a JSON body)."""
    if content_type.startswith(NDJSON):
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


def _plain(body: bytes, coding: str) -> bytes | None:
    """The body without its content coding, or None when it cannot be undone."""
    try:
        if coding == "gzip":
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if coding == "deflate":
            return zlib.decompress(body)
    except zlib.error:
        return None
    return body if coding in ("", "identity") else None


def create_proxy(recorder: Recorder, client: httpx.AsyncClient | None = None,
                 faults: Recipe | None = None) -> Starlette:
    """The proxy app in front of `recorder`'s upstream; `faults` applied to every model answer."""
    upstream = recorder.upstream
    http = client or httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False)
    counted = [0]

    async def handle(request: Request) -> Response:
        body = await request.body()
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        incoming = request.headers.items()
        ex = Exchange(request.method, target, list(incoming), body)
        sent = {k.lower() for k, _ in incoming}
        req = http.build_request(request.method, upstream + target, content=body,
                                 headers=[(k, v) for k, v in incoming if k.lower() not in _NOT_FORWARDED])
        for name in _HTTPX_DEFAULTS:
            if name not in sent and name in req.headers:
                del req.headers[name]
        started = time.monotonic()
        try:
            resp = await http.send(req, stream=True)
        except httpx.HTTPError as exc:
            return JSONResponse({"error": {"message": f"stopbench record: the upstream {upstream} did not answer: "
                                                     f"{type(exc).__name__}: {exc}",
                                           "type": "upstream_unreachable"}}, status_code=502)
        ex.status = resp.status_code
        ex.response_headers = list(resp.headers.multi_items())
        dialect = model_wire(target) if faults is not None else None
        if faults is not None and dialect is not None:
            counted[0] += 1
            return await faulted(faults, resp, ex, dialect, counted[0], started)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    ex.chunks.append((time.monotonic() - started, chunk))
                    yield chunk
            except httpx.HTTPError as exc:
                ex.ended = f"the upstream broke the connection ({type(exc).__name__})"
                raise
            except BaseException:  # cancelled or closed: the client went away mid-body
                ex.ended = "the client went away before the end"
                raise
            finally:
                try:  # recorded before anything is awaited: a cancelled task would not get past an await
                    recorder.add(ex)
                except Exception as exc:  # the client has its answer; the recording says what it lost
                    recorder.problems.append(f"{ex.method} {ex.target}: not recorded: {type(exc).__name__}: {exc}")
                await resp.aclose()

        out = StreamingResponse(relay(), status_code=resp.status_code)
        out.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in resp.headers.multi_items()
                           if k.lower() not in _HOP]
        return out

    async def faulted(recipe: Recipe, resp: httpx.Response, ex: Exchange, dialect: str, number: int,
                      started: float) -> Response:
        """The upstream's whole answer, recorded as it came, then sent as `recipe` delivers it."""

        try:
            async for chunk in resp.aiter_raw():
                ex.chunks.append((time.monotonic() - started, chunk))
        except httpx.HTTPError as exc:
            ex.ended = f"the upstream broke the connection ({type(exc).__name__})"
        except BaseException:
            ex.ended = "the client went away before the end"
            raise
        finally:
            plan = _deliver(recipe, ex, resp, dialect, number)
            try:  # recorded before anything is awaited: a cancelled task would not get past an await
                recorder.add(ex)
            except Exception as exc:
                recorder.problems.append(f"{ex.method} {ex.target}: not recorded: {type(exc).__name__}: {exc}")
            await resp.aclose()
        return PlanResponse(plan, WRITE_TIMEOUT)

    def _deliver(recipe: Recipe, ex: Exchange, resp: httpx.Response, dialect: str, number: int) -> Plan:
        """The plan of the upstream's answer as `recipe` delivers it; what it did noted on `ex`."""
        from bench.faults import inject

        headers = [(k.lower(), v) for k, v in resp.headers.multi_items()
                   if k.lower() not in _HOP and k.lower() != "content-length"]
        end: Literal["close", "cut"] = "cut" if ex.ended else "close"
        content_type = (resp.headers.get("content-type") or "").lower()
        body = _plain(ex.body, (resp.headers.get("content-encoding") or "").lower().strip())
        if body is None:
            recorder.problems.append(f"{ex.method} {ex.target}: no fault injected (a body in a content coding "
                                     "the proxy cannot undo)")
            return Plan(ex.status, tuple(headers), (Frame(ex.body),), end)
        headers = [(k, v) for k, v in headers if k != "content-encoding"]
        if not content_type.startswith(("text/event-stream", EVENTSTREAM, NDJSON)):
            headers.append(("content-length", str(len(body))))
        plan = Plan(ex.status, tuple(headers), tuple(Frame(f) for f in frames_of(body, content_type)), end)
        plan, injected = inject(recipe, plan, wire=dialect, request_index=number, key=recorder.name)
        if injected:
            ex.injected = (number, recipe.name, injected)
        return plan

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{rest:path}", handle, methods=methods)])
