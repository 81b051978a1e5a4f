"""An HTTP error status as each wire's provider sends it: the error type or code, the words, the
retry headers. The body itself is the wire's own error renderer's (``Wire.render`` of an error turn,
as for an error a sequence records); this table only chooses what that error says, and adds the
retry hint a recipe asks for.

Sources (read 2026-12):

- OpenAI (Chat Completions, Responses): https://platform.openai.com/docs/guides/error-codes#api-errors
  (429 "Rate limit reached for requests", 500 "The server had an error while processing your
  request", 503 "The engine is currently overloaded"), and
  https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers (``x-ratelimit-*``).
  The ``openai`` Python client reads ``retry-after-ms`` and ``retry-after`` and waits that long when
  it is between 0 and 60 s (openai-python ``_base_client.py``, ``_calculate_retry_timeout``).
- Anthropic: https://docs.anthropic.com/en/api/errors (429 ``rate_limit_error``, 500 ``api_error``,
  529 ``overloaded_error``) and https://docs.anthropic.com/en/api/rate-limits#response-headers
  (``retry-after``: "the number of seconds to wait until you can retry the request";
  ``anthropic-ratelimit-requests-remaining``).
- Gemini: https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes (429
  ``RESOURCE_EXHAUSTED``, 500 ``INTERNAL``, 503 ``UNAVAILABLE``); the retry hint is a
  ``google.rpc.RetryInfo`` detail with ``retryDelay`` (https://cloud.google.com/apis/design/errors#retryinfo),
  not a header; the bench sends both when a recipe gives ``retry_after``.
- Bedrock Converse: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
  (``ThrottlingException`` 429, ``ServiceUnavailableException`` 503, ``InternalServerException``
  500), named in the ``x-amzn-ErrorType`` header by the wire's renderer. Bedrock documents no
  ``Retry-After``; botocore backs off on its own. The bench sends the header only when a recipe asks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.engine.model import ErrorKind, Turn, TurnError
from bench.serve.respond import Plan, json_plan
from bench.wires.base import Context
from bench.wires.capture import error_kind
from bench.wires.registry import wire as wire_of


@dataclass(frozen=True, slots=True)
class Shape:
    """What one provider says with one error status."""

    code: str | None
    """The error type or code the body carries (None: the wire's renderer names it from the status)."""
    message: str
    headers: tuple[tuple[str, str], ...] = ()
    """Headers the provider sends with it besides ``retry-after``."""


_OPENAI: Mapping[int, Shape] = {
    429: Shape("rate_limit_exceeded", "Rate limit reached for requests. Please try again later.",
               (("x-ratelimit-remaining-requests", "0"),)),
    500: Shape("server_error", "The server had an error while processing your request. Sorry about that!"),
    503: Shape(None, "The engine is currently overloaded, please try again later."),
}
_ANTHROPIC: Mapping[int, Shape] = {
    429: Shape("rate_limit_error", "Number of requests has exceeded your rate limit.",
               (("anthropic-ratelimit-requests-remaining", "0"),)),
    500: Shape("api_error", "Internal server error"),
    529: Shape("overloaded_error", "Overloaded"),
}
_GEMINI: Mapping[int, Shape] = {
    429: Shape(None, "Resource has been exhausted (e.g. check quota)."),
    500: Shape(None, "An internal error has occurred."),
    503: Shape(None, "The model is overloaded. Please try again later."),
}
_BEDROCK: Mapping[int, Shape] = {
    429: Shape("ThrottlingException", "Too many requests, please wait before trying again."),
    500: Shape("InternalServerException", "The request processing has failed because of an unknown error."),
    503: Shape("ServiceUnavailableException", "The service isn't currently available. Try again later."),
}

SHAPES: Mapping[str, Mapping[int, Shape]] = {
    "openai-chat": _OPENAI, "openai-responses": _OPENAI, "anthropic": _ANTHROPIC, "gemini": _GEMINI,
    "bedrock-converse": _BEDROCK,
}
"""Wire -> status -> the provider's error for it (the module docstring cites each)."""


def shape(wire: str, status: int) -> Shape:
    """The provider's error for `status` on `wire`; a status the table does not hold gets the
    wire's renderer's default words."""
    return SHAPES.get(wire, _OPENAI).get(status) or Shape(None, f"HTTP {status} (injected by a stopbench fault)")


def status_plan(wire: str, status: int, retry_after: int | None, message: str | None) -> tuple[Plan, ErrorKind]:
    """The answer carrying HTTP `status` on `wire`, rendered by the wire's own error renderer, with
    ``retry-after`` when `retry_after` is given; and the error's kind."""
    got = shape(wire, status)
    kind = error_kind(status, got.code)
    err = TurnError(kind, message if message is not None else got.message, status=status, code=got.code)
    out = wire_of(wire).render(Turn("error", error=err), Context("", "", None), False)
    body: Any = out.body
    headers = dict(out.headers)
    headers.update(got.headers)
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
        if wire == "gemini" and isinstance(body, dict) and isinstance(body.get("error"), dict):
            body = json.loads(json.dumps(body))  # a copy to add the RetryInfo detail to
            details = body["error"].setdefault("details", [])
            details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"})
    return json_plan(body, out.status, headers), kind
