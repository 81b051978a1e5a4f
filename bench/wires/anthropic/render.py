"""A turn as an Anthropic Messages answer: a ``message`` body or its event stream.

Anthropic's JSON body needs an object for ``tool_use.input``: a raw arguments string that does not
parse to an object is sent as ``{}`` (see docs/serve.md); the stream sends the raw string as it is
(``input_json_delta.partial_json``), valid JSON or not. Anthropic has no refusal field: a refusal
is stop_reason ``refusal`` with its text as text, and its ``stop_details`` (``{type: refusal,
category, explanation}``, on the message and on ``message_delta`` in a stream: "stop_details arrives on
the message_delta event alongside stop_reason", platform.claude.com handle-streaming-refusals) is the
turn's ``finish_detail`` when that is such an object (what the Anthropic importer keeps), else left out.
"""

from __future__ import annotations

import json
from typing import Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import Context, pieces, sse, tool_input


def error_body(err: TurnError) -> dict[str, Any]:
    """Anthropic's error body; its type is the recorded code, else the kind (echoed, never read)."""
    return {"type": "error", "error": {"type": err.code or err.kind, "message": err.message}}


def _usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    return {"input_tokens": u.input_tokens if u else 0, "output_tokens": u.output_tokens if u else 0}


def _text(turn: Turn) -> str | None:
    """The text block's text: the content, or a refusal's text when there is no content."""
    return turn.content if turn.content is not None else turn.refusal


def blocks(turn: Turn) -> list[dict[str, Any]]:
    """The turn's content blocks as a JSON body carries them (and as a client echoes them back)."""
    out: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        out.append({"type": "thinking", "thinking": turn.reasoning, "signature": ""})
    if (text := _text(turn)) is not None:
        out.append({"type": "text", "text": text})
    for call in turn.tool_calls:
        out.append({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call.arguments)})
    return out


def stop_details(turn: Turn, stop: str | None) -> dict[str, Any] | None:
    """A refusal's ``stop_details``: the turn's ``finish_detail`` when it is the refusal object, else None."""
    if stop != "refusal" or turn.finish_detail is None:
        return None
    try:
        value = json.loads(turn.finish_detail)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value.get("type") == "refusal" else None


def _message(turn: Turn, ctx: Context, content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    body = {"id": ctx.response_id, "type": "message", "role": "assistant", "model": ctx.model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": _usage(turn)}
    if (details := stop_details(turn, stop)) is not None:
        body["stop_details"] = details
    return body


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``message``."""
    return _message(turn, ctx, blocks(turn), ctx.finish_raw)


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as Messages stream events, ending with ``message_stop`` (or the error event)."""
    start = _message(turn, ctx, [], None)
    start["usage"] = {"input_tokens": start["usage"]["input_tokens"], "output_tokens": 0}
    out = [sse({"type": "message_start", "message": start}, "message_start")]
    index = 0

    def block(first: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(sse({"type": "content_block_start", "index": index, "content_block": first},
                       "content_block_start"))
        out.extend(sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
                   for d in deltas)
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if turn.reasoning is not None:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": p} for p in pieces(turn.reasoning)]
              + [{"type": "signature_delta", "signature": ""}])
    if (text := _text(turn)) is not None:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(text)])
    for call in turn.tool_calls:
        # the raw string goes out as it is, even when it is not (or not yet) valid JSON
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(call.arguments)]
        block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas)
    if turn.error is not None:
        out.append(sse(error_body(turn.error), "error"))
        return out
    delta: dict[str, Any] = {"stop_reason": ctx.finish_raw, "stop_sequence": None}
    if (details := stop_details(turn, ctx.finish_raw)) is not None:
        delta["stop_details"] = details
    out.append(sse({"type": "message_delta", "delta": delta,
                    "usage": {"output_tokens": _usage(turn)["output_tokens"]}}, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out
