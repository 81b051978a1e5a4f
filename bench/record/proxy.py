"""The recording proxy: a Starlette app that passes every request on to the upstream and its answer
back unchanged, chunk by chunk, and hands each finished exchange to a :class:`~bench.record.recording.Recorder`.

The client sees the upstream's status, headers (less the hop-by-hop ones, which belong to each
connection) and body bytes as they came: each chunk the upstream sends is written to the client
as soon as it arrives (one ASGI body message per chunk, which uvicorn writes at once), so SSE
framing, blank lines, event order and the AWS event-stream framing pass through as they are. When
the upstream breaks the connection mid-body, the proxy breaks the client's too. The request goes
on with the client's own headers (credentials included: the upstream needs them), less ``host``
and the hop-by-hop ones; the upstream client (httpx) adds no header the client did not send.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.record.recording import Exchange, Recorder

_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
                  "proxy-authenticate"})
_NOT_FORWARDED = _HOP | {"host", "content-length"}
_HTTPX_DEFAULTS = ("accept", "accept-encoding", "user-agent", "connection")
TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""A model's answer may take minutes; connecting may not."""


def create_proxy(recorder: Recorder, client: httpx.AsyncClient | None = None) -> Starlette:
    """The proxy app in front of `recorder`'s upstream."""
    upstream = recorder.upstream
    http = client or httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False)

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

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{rest:path}", handle, methods=methods)])
