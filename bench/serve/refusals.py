"""What the replay server refuses, in one list: each rule, its HTTP status, and the body it answers with.

A request the server refuses is the client's problem: it is answered as the provider answers it and
consumes no turn. :data:`RULES` lists every rule: what it refuses, where, its status, what the run keeps
of it, and the one function that makes its answer. On a model endpoint or a token count the answer is
the wire's error body with the wire's error headers (:meth:`bench.wires.base.Wire.error_body`), in the
gateway's own shape where the gateway's API answers otherwise (:attr:`bench.wires.base.Wire.refused_as`:
Claude on Bedrock answers as Bedrock, ``{"message": ...}`` with the exception in ``x-amzn-ErrorType``);
the bench's own endpoints (the tool endpoint, the admin endpoints, an unknown path) answer in their own
words.

``docs/reference/server-refusals.md`` is generated from this list (:func:`page`): ``python -m
bench.serve.refusals > docs/reference/server-refusals.md`` writes it again, and
``tests/serve/test_refusal_list.py`` fails when the committed page differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope

from bench.engine.model import TurnError
from bench.serve.bad_requests import MAX_DEPTH
from bench.serve.deadline import within
from bench.wires.base import Refusal, Wire
from bench.wires.registry import names, wire

COMPRESSED_CODINGS = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd", "compress", "x-compress"})
"""The content codings that compress a body (IANA's HTTP Content Coding Registry): the server reads
none, and says so (415) rather than that the compressed bytes are not UTF-8."""

DEFAULT_MAX_BODY = 8 * 1024 * 1024
"""Bytes of a request body (``Session(max_body=...)``, ``--max-body``): past it the answer is 413."""
DEFAULT_READ_TIMEOUT = 30.0
"""Seconds a request body has to arrive (``Session(read_timeout=...)``): past it the answer is 408."""
HEADER_TIMEOUT = 10.0
"""Seconds a connection has to send a request's headers, from when it opens or its previous response
ends: an idle socket or a half-sent request line is closed then (bench.serve.server)."""
MAX_HEAD = 64 * 1024
"""Bytes of a request's line and headers: past it the answer is 400 and the connection closes."""
HEAD_TOO_LARGE = "Request line and headers too large."
"""The plain-text 400 of a request whose line and headers pass :data:`MAX_HEAD` (uvicorn's words)."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A refusal as it is answered: the HTTP status, the JSON body and the headers besides the content
    type; `note`: what the run keeps of it on the step it comes after (empty: nothing)."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def response(self) -> JSONResponse:
        return JSONResponse(self.body, status_code=self.status, headers=dict(self.headers))


class BodyError(Exception):
    """A request body the server refuses while reading it (:func:`read_body`): `status` and the one-line `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    @classmethod
    def compressed(cls, coding: str) -> BodyError:
        return cls(415, f"content-encoding {coding!r}: encoding not supported; send the body uncompressed")

    @classmethod
    def too_large(cls, limit: int, declared: str | None = None) -> BodyError:
        if declared is not None:
            return cls(413, f"request body of {declared} bytes is over the limit of {limit}")
        return cls(413, f"request body is over the limit of {limit} bytes")

    @classmethod
    def too_slow(cls, timeout: float) -> BodyError:
        return cls(408, f"request body did not arrive within {timeout:g} s")


# ------------------------------------------------------------------ a provider's words (model calls, token counts)

def provider_error(served: Wire, surface: str, status: int, code: str, message: str) -> Refused:
    """The provider's error answer on `served` (through gateway `surface`): its error body and headers.
    `code` is the provider's error type (``invalid_request_error``, ``not_found_error``)."""
    voice = wire(served.refused_as[surface]) if surface in served.refused_as else served
    err = TurnError("not_found" if code == "not_found_error" else "invalid_request", message, code=code)
    return Refused(status, voice.error_body(err), voice.error_headers(status))


def unreadable_body(served: Wire, surface: str, exc: BodyError) -> Refused:
    """A model call whose body is compressed, too large or too slow (:func:`read_body`)."""
    return provider_error(served, surface, exc.status, "invalid_request_error", exc.message)


def unreadable_count(served: Wire, surface: str, exc: BodyError) -> Refused:
    """A token count whose body is compressed, too large or too slow, with the wire's count error type."""
    return provider_error(served, surface, exc.status, served.count_refusal_code, exc.message)


def bad_request(served: Wire, surface: str, message: str) -> Refused:
    """A model call the provider refuses as malformed (:mod:`bench.serve.bad_requests`): 400, noted in the run."""
    return replace(provider_error(served, surface, 400, "invalid_request_error", message), note=f"refused: {message}")


def other_wire(served: Wire, surface: str, dialect: str) -> Refused:
    """A model call on another wire than the one the server serves alone (``--dialect``)."""
    return provider_error(served, surface, 404, "not_found_error", f"this server serves only the {dialect} API")


def unfollowable(served: Wire, refusal: Refusal) -> Refused:
    """A request following a reply the run cannot follow, or a conversation stored on the provider's side,
    answered as the wire words it (:mod:`bench.serve.threads`), with the wire's error headers."""
    return Refused(refusal.status, refusal.body, served.error_headers(refusal.status))


SCRIPT_ENDED_STATUS = 410


def script_ended(served: Wire, sequence: str, turns: int) -> Refused:
    """A model call past the end of a ``then: end`` sequence (410 is not retried by the official clients)."""
    detail = f"the script of sequence {sequence!r} ended: it has {turns} turn(s) and then: end"
    return Refused(SCRIPT_ENDED_STATUS, served.script_ended(detail), served.error_headers(SCRIPT_ENDED_STATUS))


# ------------------------------------------------------------------ the bench's own words

def no_such_endpoint(method: str, path: str) -> Refused:
    """A path no wire and no admin endpoint serves."""
    return Refused(404, {"error": {"message": f"no such endpoint: {method} {path}", "type": "not_found_error"}})


def tool_refused(status: int, message: str) -> Refused:
    """A call of the tool endpoint it cannot run: its body unreadable, not JSON, or not an object."""
    return Refused(status, {"content": message, "is_error": True})


def unknown_tool(name: str) -> tuple[int, str]:
    """A call of a tool no turn of the sequence calls: the status and the content the execution records."""
    return 404, f"unknown tool {name}"


def bad_run_request() -> Refused:
    """A switch of sequence (``POST /_stopbench/run``) whose body is not a JSON object."""
    return Refused(400, {"error": "expected a JSON object {\"sequence\": ID}"})


def unknown_sequence(name: object) -> Refused:
    """A switch to a sequence the server's catalogue does not have."""
    return Refused(404, {"error": f"no sequence {name!r} in this server's catalogue"})


# ------------------------------------------------------------------ reading a body

async def read_body(scope: Scope, receive: Receive, limit: int, timeout: float) -> bytes:
    """The request's body, read off the ASGI messages as Starlette's ``Request.stream`` reads them.
    Raises :class:`BodyError`: 415 for a compressed body, 413 past `limit` bytes (declared or sent),
    408 when it does not arrive within `timeout` seconds."""
    coding = _header(scope, b"content-encoding")
    if coding is not None and COMPRESSED_CODINGS & {c.strip().lower() for c in coding.split(",")}:
        raise BodyError.compressed(coding)
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyError.too_large(limit, declared)
    try:
        return await within(_chunks(receive, limit), timeout)
    except TimeoutError:
        raise BodyError.too_slow(timeout) from None


async def _chunks(receive: Receive, limit: int) -> bytes:
    """The body's chunks joined; :class:`BodyError` 413 as soon as they pass `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyError.too_large(limit)
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name` (lower case), as Starlette's ``Headers.get`` reads it."""
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


# ------------------------------------------------------------------ the list

@dataclass(frozen=True, slots=True)
class Rule:
    """One thing the server refuses: what, where, the status, what the run keeps, what makes the answer
    (its function, or where uvicorn's connection makes it), and for the docs the answer it makes on a
    wire (`sample`), when a wire words it."""

    name: str
    refuses: str
    where: str
    status: str
    keeps: str
    made_by: Callable[..., object] | str
    sample: Callable[[Wire, str], Refused] | None = None


_MODEL = "model call"
_TOOL = "tool endpoint"
_RUN = "`POST /_stopbench/run`"
_RECORD = "a `refused` record"
_NOTE = "a `refused` record, and a note on the step it follows"
_CONNECTION = "`bench.serve.server._Deadline`"

RULES: tuple[Rule, ...] = (
    Rule("compressed", "a body with a compressing `content-encoding` (gzip, deflate, br, zstd, compress)",
         _MODEL, "415", _RECORD, unreadable_body,
         lambda w, s: unreadable_body(w, s, BodyError.compressed("gzip"))),
    Rule("too-large", f"a body over `--max-body` bytes ({DEFAULT_MAX_BODY // 1024 // 1024} MiB), declared in "
         "`content-length` or sent", _MODEL,
         "413", _RECORD, unreadable_body,
         lambda w, s: unreadable_body(w, s, BodyError.too_large(DEFAULT_MAX_BODY))),
    Rule("too-slow", f"a body that has not arrived within `--read-timeout` seconds ({DEFAULT_READ_TIMEOUT:g})",
         _MODEL, "408", _RECORD,
         unreadable_body,
         lambda w, s: unreadable_body(w, s, BodyError.too_slow(DEFAULT_READ_TIMEOUT))),
    Rule("count-body", "a token count's body compressed, too large or too slow, as the three rules above",
         "token count", "415, 413, 408", "a `side` record", unreadable_count,
         lambda w, s: unreadable_count(w, s, BodyError.too_large(DEFAULT_MAX_BODY))),
    Rule("not-json", "a body that is not JSON (`NaN` and `Infinity` included) or not UTF-8", _MODEL, "400", _NOTE,
         bad_request, lambda w, s: bad_request(w, s, "the body is not valid JSON: NaN is not a JSON value")),
    Rule("too-deep", f"a body nesting arrays and objects deeper than {MAX_DEPTH} levels", _MODEL, "400", _NOTE,
         bad_request, lambda w, s: bad_request(w, s, f"the body is nested deeper than {MAX_DEPTH} levels")),
    Rule("not-an-object", "a body that is JSON but not an object", _MODEL, "400", _NOTE, bad_request,
         lambda w, s: bad_request(w, s, "the body is not a JSON object")),
    Rule("conversation", "a conversation field missing (where the wire requires it), of the wrong type, or "
         "with a part the wire's reader cannot read", _MODEL, "400", _NOTE, bad_request,
         lambda w, s: bad_request(w, s, f"{w.conversation_field[0]}: a required field is missing")),
    Rule("other-wire", "a model call on another wire than `--dialect`'s", _MODEL, "404", _RECORD, other_wire,
         lambda w, s: other_wire(w, s, next(n for n in names() if n != w.name))),
    Rule("unfollowable", "a request following a reply the run did not give or did not finish (Anthropic "
         "threads, Responses `previous_response_id`), or adding to a Responses `conversation`", _MODEL,
         "the wire's: 404 or 400", _RECORD, unfollowable),
    Rule("script-ended", "a model call past the end of a `then: end` sequence (consuming no turn; the run is "
         "then `running`)", _MODEL, "410", "a `past_end` record", script_ended,
         lambda w, s: script_ended(w, "a-sequence", 2)),
    Rule("tool-body", "a tool call whose body is compressed, too large, too slow, not JSON or not an object",
         _TOOL, "415, 413, 408, 400", "nothing", tool_refused),
    Rule("unknown-tool", "a tool no turn of the sequence calls", _TOOL, "404", "the execution, failed",
         unknown_tool),
    Rule("bad-run-request", "a switch of sequence whose body is not a JSON object (or is over 4096 bytes)", _RUN,
         "400", "nothing", bad_run_request),
    Rule("unknown-sequence", "a switch to a sequence the server's catalogue does not have", _RUN, "404",
         "nothing", unknown_sequence),
    Rule("no-such-endpoint", "a path no wire and no admin endpoint serves", "any path", "404", "a `side` record",
         no_such_endpoint),
    Rule("head-too-large", f"a request line and headers over {MAX_HEAD // 1024} KiB", "any path",
         "400, plain text, and the connection closed", "nothing", _CONNECTION),
    Rule("headers-too-slow", f"a connection that has not sent a request's headers within {HEADER_TIMEOUT:g} s of "
         "opening or of its previous response", "any path", "none: the connection closed", "nothing", _CONNECTION),
)
"""Every rule the server refuses by, those of a model call in the order a request meets them."""


# ------------------------------------------------------------------ the docs page

def _made_by(rule: Rule) -> str:
    made = rule.made_by
    return made if isinstance(made, str) else f"`{made.__name__}`"


def _voices() -> list[tuple[Wire, str]]:
    """Each wire on its own paths, then each gateway that answers otherwise."""
    out: list[tuple[Wire, str]] = [(wire(n), "") for n in names()]
    return out + [(wire(n), surface) for n in names() for surface in wire(n).refused_as]


def page() -> str:
    """The Markdown page of :data:`RULES`: the rules, then each rule's answer per wire."""
    lines = ["# What the replay server refuses", "",
             "<!-- generated from bench/serve/refusals.py: python -m bench.serve.refusals > "
             "docs/reference/server-refusals.md -->", "",
             "Every request the replay server refuses, in the order a request meets the checks. A refusal "
             "consumes no turn; on a model endpoint it is answered as the provider answers it. Generated from "
             "`bench/serve/refusals.py` (`RULES`); `tests/serve/test_refusal_list.py` fails when this page "
             "differs from what the list generates: write it again with "
             "`python -m bench.serve.refusals > docs/reference/server-refusals.md`.", "",
             "| rule | refuses | where | status | the run keeps | made by |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| `{r.name}` | {r.refuses} | {r.where} | {r.status} | {r.keeps} | {_made_by(r)} |"
              for r in RULES]
    lines += ["", "## The answer on each wire", "",
              "What each rule a wire words answers there (a sample message). A token count words its "
              "body errors with the wire's count error type; the tool endpoint answers "
              f"`{json.dumps(tool_refused(400, '...').body)}`.", ""]
    for rule in RULES:
        if rule.sample is None:
            continue
        lines += [f"### `{rule.name}`", "", "| wire | gateway | status | headers | body |",
                  "| --- | --- | --- | --- | --- |"]
        for served, surface in _voices():
            got = rule.sample(served, surface)
            headers = ", ".join(f"`{k}: {v}`" for k, v in got.headers.items())
            lines.append(f"| {served.name} | {surface or 'its own'} | {got.status} | {headers} | "
                         f"`{json.dumps(got.body, ensure_ascii=False)}` |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(page())
