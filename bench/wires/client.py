"""What the reference loop's client of every wire shares: one model request and its assembled reply.

A loop needs three things from an API: ask (and get the reply assembled from the stream, with tool
call arguments as the raw string the model produced, cut-off JSON included), append the reply to
the conversation, and append tool results and user messages. Each wire with a client does that with
the same methods (its ``client.py``, over the official ``openai`` or ``anthropic`` package: Chat
Completions, Anthropic Messages, OpenAI Responses, stateless), so a loop is written once
(:mod:`bench.loops.reference`).

Every request streams: only a stream shows what a truncated reply really carried (Anthropic's
``input_json_delta`` is the only place cut-off arguments reach a client). The clients' own retries
are switched off (``max_retries=0``): the loop decides what to resend, and counts it.

Errors are caught, never raised: a reply with ``error`` set is what the loop decides on. Its
``status`` is the HTTP status when the server answered with an error status; an error event inside
a stream, and a connection that broke, have none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from bench.engine.model import ERROR_KINDS, Dialect, ErrorKind, Finish
from bench.wires.capture import error_kind

MAX_TOKENS = 4096
"""The max_tokens every request sends, so that a reply cut at the limit shows as usage reaching it."""



@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a reply; `arguments` is the raw string (maybe not JSON)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ReplyError:
    """What went wrong in place of a reply: its kind, the HTTP status (None inside a stream or for a
    broken connection), the provider's error type or code as sent, and its message.

    The kind is all a loop decides on (with the status): it comes from the exception's class for a
    transport failure, else from the status and the provider's code (:func:`reply_error`), never
    from the message, which is kept for people."""

    kind: ErrorKind
    status: int | None
    code: str
    message: str


def reply_error(status: int | None, code: str, message: str, *, in_stream: bool = False) -> ReplyError:
    """An error the provider sent, with its kind: the code when it names a kind itself (the replay
    server sends the kind when the sequence recorded no code), else the provider code table and
    the status (:func:`bench.wires.capture.error_kind`, the importers' reading); an error event
    in a stream that names neither is ``stream_error``."""
    kind: ErrorKind = code if code in ERROR_KINDS else error_kind(status, code or None)
    if kind == "http_status" and status is None and in_stream:
        kind = "stream_error"
    return ReplyError(kind, status, code, message)


@dataclass(frozen=True, slots=True)
class Reply:
    """One model response as the loop received it."""

    finish_raw: str | None
    finish: Finish
    content: str | None = None
    calls: tuple[Call, ...] = ()
    end_turn: bool | None = None
    error: ReplyError | None = None
    raw: Any = field(default=None, compare=False, repr=False)
    """What the conversation needs to echo the reply (API-specific)."""
    refusal: str | None = None
    """The model's refusal text (chat ``refusal``, a Responses refusal part), whatever the finish."""
    at_limit: bool = False
    """The reply's output tokens reached the request's max_tokens: cut off, whatever the finish says."""


@dataclass(frozen=True, slots=True)
class Result:
    """A tool result to send back: `is_error` results tell the model the call failed."""

    call: Call
    text: str
    is_error: bool = False


class Conversation(Protocol):
    """One conversation with a model on one API."""

    api: Dialect

    def ask(self) -> Reply: ...

    def add_reply(self, reply: Reply) -> None: ...

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None: ...


def status_error(exc: Any) -> ReplyError:
    """An error from an official client: its status (a 2xx status means an error event in a
    stream), and the type and message from its body."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    kind = str(err.get("type") or err.get("code") or "") if isinstance(err, dict) else ""
    message = str(err.get("message", "")) if isinstance(err, dict) else str(getattr(exc, "message", exc))
    code = err.get("code") if isinstance(err, dict) else None
    in_stream = not isinstance(status, int) or status < 400
    if in_stream:
        # inside a stream: an OpenAI error event may carry the status as its code (OpenRouter does)
        status = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else None
    return reply_error(status, kind or type(exc).__name__, message, in_stream=in_stream)


def transport_error(exc: BaseException) -> ReplyError:
    """A transport failure: a timeout by its class (the clients' APITimeoutError, httpx's
    TimeoutException), else a connection that failed or broke."""
    timeout = isinstance(exc, httpx.TimeoutException) or type(exc).__name__ == "APITimeoutError"
    kind: ErrorKind = "timeout" if timeout else "connection_reset"
    return ReplyError(kind, None, type(exc).__name__, f"{type(exc).__name__}: {exc}")


def caught(exc: BaseException, errors: tuple[type[BaseException], type[BaseException]]) -> ReplyError:
    """The error in place of a reply for what a request raised (one of `errors`, the client's API and
    connection error classes, or an ``httpx.HTTPError``): a transport failure, else the provider's error."""
    api_error, connection_error = errors
    if isinstance(exc, api_error) and not isinstance(exc, connection_error):
        return status_error(exc)
    return transport_error(exc)


def client_errors(mod: Any) -> tuple[type[BaseException], type[BaseException]]:
    """(the client's API error base class, its connection error class)."""
    return mod.APIError, mod.APIConnectionError
