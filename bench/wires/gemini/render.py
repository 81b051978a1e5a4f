"""The Gemini API on the replay server: a turn as a ``generateContent`` answer, a stream, or an error.

Google's Generative Language API (``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent``) answers with a ``GenerateContentResponse``: one candidate whose
``content.parts`` carry the text, thought parts (``thought: true``) and ``functionCall`` parts, and
a ``finishReason``. There is no tool-call finish: a call arrives as a part with ``STOP``
(https://ai.google.dev/api/generate-content#FinishReason). The stream is the same object in pieces:
as server-sent events with ``alt=sse`` (what the official clients ask for), or, without it, one JSON
array whose elements are the pieces. The last piece carries the finish reason and the usage; a turn
whose raw finish is None ends its stream without one. An error inside a stream arrives as Google
sends it: the bare JSON error object, not an event (an element of the array form).

A call's arguments are a JSON object on this wire (``functionCall.args``); a raw string that is not
an object is sent as ``{}``, as on the Anthropic JSON body. A call's id goes out as
``functionCall.id`` when the turn has one (the Gemini API sends ids only on some models; a client
without one makes its own). A turn without a finish, output or calls whose ``finish_detail`` is
``promptFeedback.blockReason NAME[: message]`` (what the Gemini importer writes for a blocked
prompt) is served as Google serves it: no candidates, the ``promptFeedback``.

Errors are the ``google.rpc.Status`` body Google returns, ``{"error": {"code", "message",
"status"}}``: the HTTP status is the turn's, or the usual one for its kind; ``status`` is the
turn's recorded ``code`` when that is one of Google's status names, else the name of the HTTP
status (https://cloud.google.com/apis/design/errors#handling_errors). In a stream the same object
arrives as a piece, after the turn's output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import IN_STREAM_JSON_STATUS, Context, Rendered, pieces, tool_input
from bench.wires.delivery import error_mode

ID_PREFIX = "gemini-"
"""The prefix of a served ``responseId``."""

RPC_STATUS: Mapping[int, str] = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    409: "ABORTED", 412: "FAILED_PRECONDITION", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED",
    500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
"""HTTP status -> google.rpc code name (https://cloud.google.com/apis/design/errors#handling_errors)."""

KIND_STATUS: Mapping[str, int] = {
    "rate_limit": 429, "quota": 429, "overloaded": 503, "server_error": 500, "timeout": 504,
    "context_overflow": 400, "invalid_request": 400, "authentication": 401, "permission": 403,
    "not_found": 404, "content_filter": 400, "stream_error": 500, "http_status": 500,
}
"""The HTTP status Google answers an error of each kind with, when the turn gives none."""

ERROR_SETTLE = 0.05
"""Seconds before an in-stream error, so that it arrives as a read of its own (see :func:`render`)."""

_BLOCK = "promptFeedback.blockReason "


def http_status(err: TurnError) -> int:
    """The HTTP status of an error answer: the turn's, else the usual one for its kind, else 500."""
    if err.status is not None:
        return err.status
    return KIND_STATUS.get(err.kind, IN_STREAM_JSON_STATUS)


def error_body(err: TurnError) -> dict[str, Any]:
    """Google's error body for `err` (the ``google.rpc.Status`` object under ``error``)."""
    code = http_status(err)
    body: dict[str, Any] = {"code": code, "message": err.message, "status": RPC_STATUS.get(code, "UNKNOWN")}
    if err.code:  # the recorded code, echoed as data (the status name comes from the HTTP status alone)
        body["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": err.code}]
    return {"error": body}


def retry_hint(body: Any, retry_after: int) -> Any:
    """`body` (an error body) with a ``google.rpc.RetryInfo`` detail saying to wait `retry_after` seconds,
    Google's retry hint (https://cloud.google.com/apis/design/errors#retryinfo); a copy, the body untouched."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return body
    out = json.loads(json.dumps(body))
    out["error"].setdefault("details", []).append(
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"})
    return out


def script_ended(detail: str) -> dict[str, Any]:
    """The answer to a request past the end of a ``then: end`` sequence (served with 410)."""
    return {"error": {"code": 410, "message": detail, "status": "FAILED_PRECONDITION"}}


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A ``functionCall`` part: the arguments as an object, the id only when there is one."""
    fc: dict[str, Any] = {"name": name, "args": tool_input(arguments)}
    if call_id:
        fc["id"] = call_id
    return {"functionCall": fc}


def _usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    return {"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o}


def _block(turn: Turn) -> dict[str, str] | None:
    """The promptFeedback of a blocked prompt, when the turn is one (see the module docstring)."""
    detail = turn.finish_detail
    if (detail is None or not detail.startswith(_BLOCK) or turn.finish_raw is not None
            or turn.content is not None or turn.reasoning is not None or turn.tool_calls):
        return None
    reason, _, message = detail[len(_BLOCK):].partition(": ")
    feedback = {"blockReason": reason}
    if message:
        feedback["blockReasonMessage"] = message
    return feedback


def _parts(turn: Turn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        parts.append({"text": turn.reasoning, "thought": True})
    if turn.content is not None:
        parts.append({"text": turn.content})
    parts += [function_call(c.id, c.name, c.arguments) for c in turn.tool_calls]
    return parts


def _response(ctx: Context, parts: list[dict[str, Any]], finish: str | None,
              usage: dict[str, int] | None) -> dict[str, Any]:
    content: dict[str, Any] = {"role": "model"}
    if parts:
        content["parts"] = parts
    candidate: dict[str, Any] = {"content": content, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = usage
    body["modelVersion"] = ctx.model
    body["responseId"] = ctx.response_id
    return body


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``GenerateContentResponse``."""
    feedback = _block(turn)
    if feedback is not None:
        return {"promptFeedback": feedback, "usageMetadata": _usage(turn), "modelVersion": ctx.model,
                "responseId": ctx.response_id}
    return _response(ctx, _parts(turn), ctx.finish_raw, _usage(turn))


def stream_pieces(turn: Turn, ctx: Context, ended: bool = False) -> list[dict[str, Any]]:
    """The turn as the pieces of a stream: thoughts and text in deltas, each call whole (Gemini
    does not stream a call's arguments by default), the finish and usage on the last piece; an
    in-stream error as a last piece of its own. `ended`: the stream just stops after the output
    (a ``stream_cut`` error: no finish, no error)."""
    feedback = _block(turn)
    if feedback is not None:
        return [response_json(turn, ctx)]
    parts: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        parts += [{"text": p, "thought": True} for p in pieces(turn.reasoning)]
    if turn.content is not None:
        parts += [{"text": p} for p in pieces(turn.content)]
    calls = [function_call(c.id, c.name, c.arguments) for c in turn.tool_calls]
    groups: list[list[dict[str, Any]]] = [[p] for p in parts] + ([calls] if calls else [])
    out: list[dict[str, Any]] = []
    if turn.error is not None or ended:
        out = [_response(ctx, g, None, None) for g in groups]
        if turn.error is not None and not ended:
            out.append(error_body(turn.error))
        return out
    if not groups:
        groups = [[]]
    for n, group in enumerate(groups):
        last = n == len(groups) - 1
        out.append(_response(ctx, group, ctx.finish_raw if last else None, _usage(turn) if last else None))
    return out


def _sse(data: dict[str, Any]) -> bytes:
    # Google separates events with CRLF pairs; the official clients accept either
    return b"data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\r\n\r\n"


def render(turn: Turn, ctx: Context, stream: bool) -> Rendered:
    """The answer to one Gemini request: JSON, an SSE stream (``alt=sse``, `ctx.sse`) or a streamed JSON array.

    Errors follow :func:`bench.wires.delivery.error_mode`: ``http`` answers with the status and
    Google's error body; ``stream`` sends the output and then the error as a piece (in JSON mode
    the status stands in for it); ``cut`` drops the connection after the output.
    """
    err = turn.error
    mode = error_mode(turn)
    if err is not None and mode == "http":
        return Rendered(http_status(err), body=error_body(err))
    ended = mode == "end"
    if not stream:
        if ended:  # asked without a stream: the whole output, without a finish
            return Rendered(200, body=_response(ctx, _parts(turn), None, _usage(turn)))
        if mode == "cut":
            text = json.dumps(response_json(turn, ctx), ensure_ascii=False)
            return Rendered(200, frames=(text[:len(text) // 2].encode(),), cut=True, media="application/json")
        if err is not None:
            return Rendered(http_status(err), body=error_body(err))
        return Rendered(200, body=response_json(turn, ctx))
    chunks = stream_pieces(turn, ctx, ended)
    if mode == "cut":
        chunks = chunks[:-1]  # the output, without the error piece
    if ctx.sse:
        frames = [_sse(c) for c in chunks]
        if err is not None and mode == "stream":
            # Google sends an in-stream error as bare JSON, line by line, not as an event (what
            # both official clients parse: google-genai _api_client.py _iter_response_stream)
            frames[-1] = json.dumps(chunks[-1], ensure_ascii=False, indent=2).encode() + b"\n"
            # ... and the JS client (@google/genai) looks for it only in a network read that is the
            # bare JSON alone: sent together with the event before it, it is an "Incomplete JSON
            # segment" instead (retried by Gemini CLI), so it goes out a moment later
            return Rendered(200, frames=tuple(frames), settle=ERROR_SETTLE)
        return Rendered(200, frames=tuple(frames), cut=mode == "cut")
    frames = [(("[" if n == 0 else ",\r\n") + json.dumps(c, ensure_ascii=False)).encode()
              for n, c in enumerate(chunks)] or [b"["]
    if mode != "cut":
        frames.append(b"]")
    return Rendered(200, frames=tuple(frames), cut=mode == "cut", media="application/json; charset=UTF-8")
