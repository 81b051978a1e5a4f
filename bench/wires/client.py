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
a stream, and a connection that broke, have none. Its ``retry_after`` is how long the provider asked
the client to wait before it asks again (:func:`retry_after`), when it said.

Two broken answers are errors too, not replies: a stream that ended without its terminal event (no
finish and no end marker: Chat's ``[DONE]``, Anthropic's ``message_stop``, a Responses
``response.completed``/``incomplete``/``failed``, Bedrock's ``messageStop``) is a transport cut
(:func:`cut_error`, kind ``stream_cut``), and a frame that does not parse is a broken stream
(:func:`broken_frame`, kind ``stream_error``); both are transient, so the loop resends them.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from bench.engine.model import ERROR_KINDS, Dialect, ErrorKind, Finish
from bench.wires.capture import error_kind

MAX_TOKENS = 4096
"""The max_tokens every request sends, so that a reply cut at the limit shows as usage reaching it."""


def chat_messages(prompt: str, system: str | None) -> list[dict[str, Any]]:
    """A chat's first messages where the system text is a message of its own (Chat Completions, Ollama,
    Cohere): the system message when there is one, then the prompt."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return messages


def function_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The loop's tools as Chat Completions' ``{"type": "function", "function": {...}}`` entries (what
    Ollama and Cohere take too)."""
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t["parameters"]}} for t in tools]


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
    retry_after: float | None = None
    """Seconds the provider asked the client to wait before asking again (None: it did not say)."""


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def _seconds(text: str) -> float | None:
    """A duration as OpenAI's ``x-ratelimit-reset-*`` (``1s``, ``6m0s``, ``20ms``) and Google's
    ``retryDelay`` (``1s``, ``0.5s``) write it, else a bare number of seconds; None if neither."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def retry_after(headers: Mapping[str, str] | None, body: Any = None, *, now: float | None = None) -> float | None:
    """How long the provider asked to wait, in seconds, or None when it did not say. In this order:
    ``retry-after-ms`` (OpenAI), ``Retry-After`` in seconds or as an HTTP date (RFC 9110 10.2.3;
    OpenAI, Anthropic), OpenAI's ``x-ratelimit-reset-requests``/``-tokens`` (the later of the two),
    and a Google ``RetryInfo`` detail's ``retryDelay`` in the error body (Gemini sends no header).
    Bedrock documents no hint: None, and the loop backs off on its own."""
    h = {k.lower(): v for k, v in (headers or {}).items()}
    if (ms := h.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    if (ra := h.get("retry-after")) is not None:
        seconds = _seconds(ra)
        if seconds is not None:
            return seconds
        try:
            when = parsedate_to_datetime(ra).timestamp()
        except (TypeError, ValueError):
            pass
        else:
            return max(0.0, when - (time.time() if now is None else now))
    resets = [s for k in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
              if k in h and (s := _seconds(h[k])) is not None]
    if resets:
        return max(resets)
    details = body.get("details") if isinstance(body, dict) else None
    for d in details if isinstance(details, list) else ():
        if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = _seconds(str(d.get("retryDelay", "")))
            if delay is not None:
                return delay
    return None


def cut_error(marker: str) -> ReplyError:
    """A stream that ended without its finish and without `marker` (its terminal event): cut in
    transport, not a finish (kind ``stream_cut``, as the catalogue's cut streams)."""
    return ReplyError("stream_cut", None, "stream_cut", f"the stream ended without a finish or {marker}")


def broken_frame(exc: Exception) -> ReplyError:
    """A frame of the stream that does not parse (kind ``stream_error``): a broken answer to resend."""
    return ReplyError("stream_error", None, type(exc).__name__, f"a frame that does not parse: {exc}")


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
    out = reply_error(status, kind or type(exc).__name__, message, in_stream=in_stream)
    response = getattr(exc, "response", None)
    wait = retry_after(getattr(response, "headers", None), err)
    return out if wait is None else replace(out, retry_after=wait)


def transport_error(exc: BaseException) -> ReplyError:
    """A transport failure: a timeout by its class (the clients' APITimeoutError, httpx's
    TimeoutException), else a connection that failed or broke."""
    timeout = isinstance(exc, httpx.TimeoutException) or any(
        c.__name__ in ("TimeoutException", "APITimeoutError") for c in type(exc).__mro__)
    kind: ErrorKind = "timeout" if timeout else "connection_reset"
    return ReplyError(kind, None, type(exc).__name__, f"{type(exc).__name__}: {exc}")


def caught(exc: BaseException, errors: tuple[type[BaseException], type[BaseException]]) -> ReplyError:
    """The error in place of a reply for what a request raised (one of `errors`, the client's API and
    connection error classes, or an ``httpx.HTTPError``): a transport failure, else the provider's error."""
    api_error, connection_error = errors
    if isinstance(exc, api_error) and not isinstance(exc, connection_error):
        return status_error(exc)
    return transport_error(exc)


def transport_errors() -> tuple[type[BaseException], ...]:
    """httpx's transport errors, and those of the httpx fork (``httpx2``) recent ``openai`` and
    ``anthropic`` releases stream with, which they do not wrap while a stream is read (a connection
    broken mid-stream raises ``httpx2.RemoteProtocolError``); call it after the client is loaded."""
    fork = sys.modules.get("httpx2")
    return (httpx.HTTPError,) if fork is None else (httpx.HTTPError, fork.HTTPError)


def client_errors(mod: Any) -> tuple[type[BaseException], type[BaseException]]:
    """(the client's API error base class, its connection error class)."""
    return mod.APIError, mod.APIConnectionError


class OfficialClient:
    """What the conversations over an official client package (``openai``, ``anthropic``) share: the
    client with its retries off (the loop decides what to resend, and counts it), the package's error
    classes (:func:`client_errors`) and the transport errors it lets through (:func:`transport_errors`),
    and the model asked. `package` is the client's package, imported by the caller: it loads only for a loop."""

    def __init__(self, client: Any, package: Any, model: str) -> None:
        self.client = client.with_options(max_retries=0)
        self.errors = client_errors(package)
        self.transport = transport_errors()
        self.model = model
