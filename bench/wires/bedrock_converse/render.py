"""A turn as an Amazon Bedrock Converse answer: a ``ConverseResponse`` body, or the ConverseStream
events in the AWS event-stream encoding (:mod:`.eventstream`).

The shapes are those of botocore's service model for bedrock-runtime (botocore 1.44.8,
``botocore/data/bedrock-runtime/2023-09-30/service-2.json``: ``ConverseResponse``,
``ConverseStreamOutput``). The body carries ``output.message.content`` blocks (``text``,
``reasoningContent``, ``toolUse`` with ``input`` as a JSON object: a raw arguments string that does
not parse to one is sent as ``{}``, as on the Anthropic JSON body), ``stopReason``, ``usage`` and
``metrics``. The stream is ``messageStart``; per block, ``contentBlockStart`` (tool uses only, as
Bedrock sends it), ``contentBlockDelta`` pieces (a tool use's ``input`` as its raw string, verbatim)
and ``contentBlockStop``; then ``messageStop`` with the ``stopReason`` and ``metadata`` with the
usage. Bedrock has no refusal field: a refusal's text goes out as text.

Errors: the HTTP status names the exception (the ``error.httpStatusCode`` of each exception shape
in the service model), sent as the ``x-amzn-ErrorType`` header (what botocore's rest-json parser
reads the error code from) with the body ``{"message": ...}``. Inside a stream an error is an
exception message (``:message-type: exception``) whose ``:exception-type`` is the member of
``ConverseStreamOutput`` for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import IN_STREAM_JSON_STATUS, Context, pieces, tool_input
from bench.wires.bedrock_converse import eventstream

EXCEPTIONS: Mapping[int, str] = {
    400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
    408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
    500: "InternalServerException", 503: "ServiceUnavailableException",
}
"""HTTP status -> the Converse exception of that status (service-2.json, each exception's
``httpStatusCode``). 429 is also ``ModelNotReadyException`` and 400 ``ServiceQuotaExceededException``
(ConverseStream's model, not Converse's); the first of each is the one sent."""

STREAM_EXCEPTIONS: Mapping[int, str] = {
    400: "validationException", 429: "throttlingException", 500: "internalServerException",
    503: "serviceUnavailableException",
}
"""HTTP status -> the in-stream exception member of ``ConverseStreamOutput``; any other status (and
an error without one) is ``modelStreamErrorException`` ('a streaming error occurred')."""

KIND_STATUS: Mapping[str, int] = {
    "rate_limit": 429, "quota": 429, "overloaded": 503, "server_error": 500, "timeout": 408,
    "context_overflow": 400, "invalid_request": 400, "authentication": 403, "permission": 403,
    "not_found": 404, "content_filter": 400, "stream_error": 424, "http_status": 500,
}
"""The HTTP status Bedrock answers an error of each kind with when the turn gives none (its
exception of that kind: throttling 429, model timeout 408, model stream error 424, ...)."""


def http_status(err: TurnError) -> int:
    """The status of an error answer: the turn's, else the usual one for its kind."""
    return err.status if err.status is not None else KIND_STATUS.get(err.kind, IN_STREAM_JSON_STATUS)


def exception_name(status: int) -> str:
    """The exception an HTTP error status names (a status with none: by its class)."""
    return EXCEPTIONS.get(status, "InternalServerException" if status >= 500 else "ValidationException")


def error_body(err: TurnError) -> dict[str, Any]:
    """Bedrock's error body: the message alone (the exception is in the header)."""
    return {"message": err.message}


def _usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    return {"inputTokens": i, "outputTokens": o, "totalTokens": i + o}


def _text(turn: Turn) -> str | None:
    return turn.content if turn.content is not None else turn.refusal


def blocks(turn: Turn) -> list[dict[str, Any]]:
    """The turn's content blocks as a ``ConverseResponse`` carries them (and a client echoes them)."""
    out: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        out.append({"reasoningContent": {"reasoningText": {"text": turn.reasoning}}})
    if (text := _text(turn)) is not None:
        out.append({"text": text})
    out += [{"toolUse": {"toolUseId": c.id, "name": c.name, "input": tool_input(c.arguments)}}
            for c in turn.tool_calls]
    return out


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``ConverseResponse`` (no ``stopReason`` when the turn has none)."""
    body: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": blocks(turn)}}}
    if ctx.finish_raw is not None:
        body["stopReason"] = ctx.finish_raw
    body["usage"] = _usage(turn)
    body["metrics"] = {"latencyMs": 0}
    return body


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as ConverseStream event-stream messages, ending with ``metadata`` (or the exception)."""
    out = [eventstream.event("messageStart", {"role": "assistant"})]
    index = 0

    def block(start: dict[str, Any] | None, deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        if start is not None:
            out.append(eventstream.event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        out.extend(eventstream.event("contentBlockDelta", {"contentBlockIndex": index, "delta": d}) for d in deltas)
        out.append(eventstream.event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1

    if turn.reasoning is not None:
        block(None, [{"reasoningContent": {"text": p}} for p in pieces(turn.reasoning)])
    if (text := _text(turn)) is not None:
        block(None, [{"text": p} for p in pieces(text)])
    for call in turn.tool_calls:
        # the raw string goes out as it is, even when it is not (or not yet) valid JSON
        block({"toolUse": {"toolUseId": call.id, "name": call.name}},
              [{"toolUse": {"input": p}} for p in pieces(call.arguments)])
    if turn.error is not None:
        kind = STREAM_EXCEPTIONS.get(http_status(turn.error), "modelStreamErrorException")
        out.append(eventstream.exception(kind, error_body(turn.error)))
        return out
    if ctx.finish_raw is not None:  # a turn without a finish ends its stream without one
        out.append(eventstream.event("messageStop", {"stopReason": ctx.finish_raw}))
    out.append(eventstream.event("metadata", {"usage": _usage(turn), "metrics": {"latencyMs": 0}}))
    return out
