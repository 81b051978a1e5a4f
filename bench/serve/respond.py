"""Write one response: a delivery plan (status, headers, frames, how it ends) sent over ASGI.

The model endpoint builds one :class:`Plan` per response (:func:`plan` turns a wire's
:class:`~bench.wires.base.Rendered` answer into one); fault recipes rewrite plans (bench/faults);
:class:`PlanResponse` writes them.

How the frames go out: when nothing asks for frame-by-frame delivery (`one_by_one` False and no
frame with a delay) they are joined and written at once, so a client's first read may hold the whole
body; otherwise each frame is its own write, after its delay. A response whose client stops reading
for `write_timeout` seconds is cut off and logged as one line: written at once, it has one deadline,
armed only if a write waits (bench.serve.deadline); frame by frame, one deadline moved on at every
write (delays do not count). A plan ending in ``"cut"`` breaks the connection after its last frame
instead of ending the body.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from bench.serve.deadline import within
from bench.wires.base import Rendered

__all__ = ["CutConnection", "Frame", "Plan", "PlanResponse", "Template", "json_plan", "plan", "raw_headers"]

LOG = logging.getLogger("uvicorn.error")
"""Where a cut is logged: uvicorn's error log, so that it lands where the server's other messages do."""


@dataclass(frozen=True, slots=True)
class Frame:
    data: bytes
    """Bytes to write (already rendered)."""
    delay: float = 0.0
    """Seconds to wait before writing it."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How one response is delivered. `headers` are sent as given (a JSON plan carries its
    content-length; a stream has none and goes out chunked)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    frames: tuple[Frame, ...]
    end: Literal["close", "cut"]
    """``"close"``: the body ends cleanly; ``"cut"``: the connection is broken after the last frame."""
    one_by_one: bool = False
    """True: each frame is its own write (pacing, faults); False: frames without delays are coalesced."""

    @property
    def coalesced(self) -> bool:
        """Whether the frames go out as one write."""
        return not self.one_by_one and not any(f.delay for f in self.frames)


class CutConnection(Exception):
    """Raised after a response has started, to make the server drop the connection mid-body."""


class _QuietCut(logging.Filter):
    """Keeps uvicorn from logging a traceback for a cut the bench asked for (a plan's ``cut`` end, or a
    write timeout already logged as one line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, CutConnection)


LOG.addFilter(_QuietCut())
_JSON = JSONResponse(None)


def json_plan(body: Any, status: int, headers: dict[str, str] | None = None) -> Plan:
    """A JSON body as one frame, rendered as Starlette's JSONResponse renders it, with its length."""
    data = _JSON.render(body)
    given = tuple((k.lower(), v) for k, v in (headers or {}).items())
    keys = {k for k, _ in given}
    head = (*given, *((("content-length", str(len(data))),) if "content-length" not in keys else ()),
            *((("content-type", "application/json"),) if "content-type" not in keys else ()))
    return Plan(status, head, (Frame(data),), "close")


def plan(out: Rendered) -> Plan:
    """The plan of a wire's answer: its JSON body, or its frames (a `settle` is a delay before the
    last one, so that it reaches the client as a read of its own)."""
    if out.body is not None:
        return json_plan(out.body, out.status, dict(out.headers))
    frames = [Frame(f) for f in out.frames]
    if out.settle and frames:
        frames[-1] = Frame(frames[-1].data, out.settle)
    head = (("content-type", out.media), ("cache-control", "no-cache"), *out.headers.items())
    return Plan(out.status, head, tuple(frames), "cut" if out.cut else "close")


@dataclass(frozen=True, slots=True)
class Template:
    """A plan rendered once with a placeholder for the response id, and its frames split at the
    placeholder: :meth:`fill` gives the plan of one request, :meth:`respond` its response, without
    rendering again."""

    plan: Plan
    parts: tuple[tuple[bytes, ...], ...]
    whole: tuple[bytes, ...]
    """The frames joined, split at the placeholder (what :meth:`fill` gives with ``whole=True``)."""
    raw_headers: tuple[tuple[bytes, bytes], ...]
    """The plan's headers as written (:func:`raw_headers`)."""
    length_at: int | None
    """Where the content-length header is among them (a JSON answer), None without one (a stream)."""
    coalesced: bool
    """The plan's :attr:`Plan.coalesced`."""

    @classmethod
    def of(cls, p: Plan, placeholder: str) -> Template:
        mark = placeholder.encode()
        head = raw_headers(p)
        at = next((i for i, (k, _) in enumerate(head) if k == b"content-length"), None)
        return cls(p, tuple(tuple(f.data.split(mark)) for f in p.frames),
                   tuple(b"".join(f.data for f in p.frames).split(mark)), head, at, p.coalesced)

    def fill(self, response_id: str, whole: bool = False) -> Plan:
        """The plan with `response_id` where the placeholder was (an ASCII id: the same in JSON as
        raw), and a content-length that counts it. `whole`: a plan whose frames would be coalesced
        anyway comes as one frame of the same bytes (nothing will rewrite its frames: no fault recipe)."""
        rid = response_id.encode()
        p = self.plan
        if whole and self.coalesced and p.frames:
            frames: tuple[Frame, ...] = (Frame(rid.join(self.whole)),)
        else:
            frames = tuple(f if len(parts) == 1 else Frame(rid.join(parts), f.delay)
                           for f, parts in zip(p.frames, self.parts, strict=True))
        head = p.headers
        if self.length_at is not None:  # a JSON answer: its length with this id
            size = str(sum(len(f.data) for f in frames))
            head = tuple((k, size if k == "content-length" else v) for k, v in head)
        return Plan(p.status, head, frames, p.end, p.one_by_one)

    def respond(self, response_id: str, write_timeout: float) -> PlanResponse:
        """The response of :meth:`fill` with ``whole=True``, without building its plan: the bytes and
        headers a request without a fault recipe gets."""
        if not self.coalesced or not self.plan.frames:
            return PlanResponse(self.fill(response_id, whole=True), write_timeout)
        body = response_id.encode().join(self.whole)
        head = self.raw_headers
        if self.length_at is not None:
            listed = list(head)
            listed[self.length_at] = (b"content-length", str(len(body)).encode())
            head = tuple(listed)
        return PlanResponse.written(self.plan.status, head, body, self.plan.end, write_timeout)


def raw_headers(p: Plan) -> tuple[tuple[bytes, bytes], ...]:
    """A plan's headers as ASGI sends them: lower-case names, both Latin-1 encoded."""
    return tuple((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in p.headers)


class PlanResponse(Response):
    """A Starlette response delivering a :class:`Plan`."""

    def __init__(self, delivery: Plan, write_timeout: float) -> None:
        self.status_code = delivery.status
        self.background = None
        self.plan: Plan | None = delivery
        self.end = delivery.end
        self.write_timeout = write_timeout
        self.raw_headers = list(raw_headers(delivery))
        self.whole = b"".join(f.data for f in delivery.frames) if delivery.coalesced else None

    @classmethod
    def written(cls, status: int, head: tuple[tuple[bytes, bytes], ...], body: bytes, end: Literal["close", "cut"],
                write_timeout: float) -> PlanResponse:
        """The response of a coalesced plan of status `status`, raw headers `head` and bytes `body`."""
        self = cls.__new__(cls)
        self.status_code = status
        self.background = None
        self.plan = None
        self.end = end
        self.write_timeout = write_timeout
        self.raw_headers = list(head)
        self.whole = body
        return self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if self.whole is not None:  # one deadline for the whole: no frame waits, a stalled client stalls it
                await within(self._write_whole(send), self.write_timeout)
            else:
                await self._write_frames(send)
        except TimeoutError:
            client = scope.get("client")
            who = f"{client[0]}:{client[1]}" if client else "a client"
            LOG.warning("stopbench serve: %s stopped reading for %g s; its response to %s %s was cut off",
                        who, self.write_timeout, scope.get("method", ""), scope.get("path", ""))
            raise CutConnection("write timeout") from None
        if self.end == "cut":
            raise CutConnection("the plan cuts the connection here")

    async def _write_whole(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.whole, "more_body": True})
        if self.end == "close":
            await self._end(send)

    async def _write_frames(self, send: Send) -> None:
        """Frame by frame, the deadline moved on at every write and stopped during a frame's delay."""
        p = self.plan
        assert p is not None  # a response built by written() is whole
        loop = asyncio.get_running_loop()
        async with asyncio.timeout_at(loop.time() + self.write_timeout) as deadline:
            await send({"type": "http.response.start", "status": p.status, "headers": self.raw_headers})
            for frame in p.frames:
                if frame.delay > 0:
                    deadline.reschedule(None)
                    await asyncio.sleep(frame.delay)
                deadline.reschedule(loop.time() + self.write_timeout)
                await send({"type": "http.response.body", "body": frame.data, "more_body": True})
            if p.end == "close":
                await self._end(send)

    @staticmethod
    async def _end(send: Send) -> None:
        # a message of its own: the server waits here for a client that stopped reading to take what
        # was written (uvicorn drains before a send, not after)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
