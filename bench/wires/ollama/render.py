"""A turn as an Ollama ``/api/chat`` answer: one ``ChatResponse`` object, or its NDJSON stream.

Ollama answers a chat with ``{"model", "created_at", "message": {"role", "content", "thinking",
"tool_calls"}, "done", "done_reason", ...metrics}`` (ollama/ollama v0.33.0-rc2 @ fb307609,
api/types.go L197-230 ``Message``/``ToolCall``, L520-553 ``ChatResponse``; docs/api.md L487-535).
A stream is one such object per line (``application/x-ndjson``, server/routes.go L2097-2124
``streamResponse``): the text and thinking in pieces with ``done: false``, then a last object with
``done: true``, the ``done_reason`` and the counts. Tool calls arrive whole in one object (Ollama
parses them out of the model's output before sending them, routes.go L2806-2822), their arguments
a JSON object; a raw string that is not one is sent as ``{}``, as on the other object wires.
``content`` is always sent (a string, empty when the turn has none: the field has no
``omitempty``); ``done_reason`` is left out when the turn has none (``omitempty``, as Ollama does
for a generation ended by a closed connection, llm/server.go L249-265).

Errors are ``{"error": "<message>"}`` (routes.go L2109-2124): with the HTTP status before any
output, or as a line of its own after it. The status is the turn's, else 500, as Ollama answers
an error without a status of its own (routes.go L2111-2114).
"""

from __future__ import annotations

import json
from typing import Any

from bench.engine.model import ToolCall, Turn, TurnError
from bench.wires.base import Context, pieces, tool_input

CREATED_AT = "1970-01-01T00:00:00Z"
"""The ``created_at`` of every served object (the replay server's answers do not depend on the clock)."""


def error_body(err: TurnError) -> dict[str, Any]:
    """Ollama's error body: the message alone (its code and kind are not on this wire)."""
    return {"error": err.message or err.code or err.kind}


def line(obj: dict[str, Any]) -> bytes:
    """One NDJSON line."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def text(turn: Turn) -> str | None:
    """The message's text: the content, or a refusal's text when there is no content (the wire has no
    refusal field)."""
    return turn.content if turn.content is not None else turn.refusal


def _call(n: int, call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"function": {"index": n, "name": call.name, "arguments": tool_input(call.arguments)}}
    if call.id:
        out["id"] = call.id
    return out


def _metrics(turn: Turn) -> dict[str, int]:
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    return {"total_duration": 0, "load_duration": 0, "prompt_eval_count": i, "prompt_eval_duration": 0,
            "eval_count": o, "eval_duration": 0}


def _object(ctx: Context, message: dict[str, Any], done: bool) -> dict[str, Any]:
    return {"model": ctx.model, "created_at": CREATED_AT, "message": {"role": "assistant", **message}, "done": done}


def _last(turn: Turn, ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
    out = _object(ctx, message, True)
    if ctx.finish_raw is not None:
        out["done_reason"] = ctx.finish_raw
    out.update(_metrics(turn))
    return out


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``ChatResponse``."""
    message: dict[str, Any] = {"content": text(turn) or ""}
    if turn.reasoning is not None:
        message["thinking"] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [_call(n, c) for n, c in enumerate(turn.tool_calls)]
    return _last(turn, ctx, message)


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as NDJSON lines: thinking and text in pieces, the calls in one object, then the
    ``done: true`` object (or the error line)."""
    out: list[bytes] = []
    if turn.reasoning:
        out += [line(_object(ctx, {"content": "", "thinking": p}, False)) for p in pieces(turn.reasoning)]
    if said := text(turn):
        out += [line(_object(ctx, {"content": p}, False)) for p in pieces(said)]
    if turn.tool_calls:
        calls = [_call(n, c) for n, c in enumerate(turn.tool_calls)]
        out.append(line(_object(ctx, {"content": "", "tool_calls": calls}, False)))
    if turn.error is not None:
        out.append(line(error_body(turn.error)))
        return out
    out.append(line(_last(turn, ctx, {"content": ""})))
    return out
