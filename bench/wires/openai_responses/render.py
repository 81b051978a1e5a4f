"""A turn as an OpenAI Responses answer: a ``response`` object or its event stream.

A raw finish ``incomplete/max_output_tokens`` is status ``incomplete`` with that reason; a turn
whose raw finish is ``failed`` is a response with status ``failed`` carrying the error object (a
200 body, not an error status). A call's `arguments` is the raw string, sent verbatim. A stream
without a finish ends without a terminal event.
"""

from __future__ import annotations

from typing import Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import Context, pieces, sse


def responses_status(raw: str | None) -> tuple[str | None, str | None]:
    """``incomplete/max_output_tokens`` as (status, incomplete reason); None as (None, None)."""
    if raw is None:
        return None, None
    status, _, reason = raw.partition("/")
    return status, reason or None


def _items(turn: Turn, ctx: Context) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        items.append({"type": "reasoning", "id": f"rs_{ctx.response_id}", "status": "completed",
                      "summary": [{"type": "summary_text", "text": turn.reasoning}]})
    if turn.content is not None or turn.refusal is not None:
        parts: list[dict[str, Any]] = []
        if turn.content is not None:
            parts.append({"type": "output_text", "text": turn.content, "annotations": []})
        if turn.refusal is not None:
            parts.append({"type": "refusal", "refusal": turn.refusal})
        items.append({"type": "message", "id": f"msg_{ctx.response_id}", "role": "assistant",
                      "status": "completed", "content": parts})
    for i, call in enumerate(turn.tool_calls):
        items.append({"type": "function_call", "id": f"fc_{ctx.response_id}_{i}", "call_id": call.id,
                      "name": call.name, "arguments": call.arguments, "status": "completed"})
    return items


def _object(turn: Turn, ctx: Context, status: str | None, output: list[dict[str, Any]],
                      final: bool) -> dict[str, Any]:
    reason = responses_status(ctx.finish_raw)[1] if final else None
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    error = None
    if final and status == "failed":
        err = turn.error or TurnError("server_error", "the response failed")
        error = {"code": err.code or err.kind, "message": err.message}
    body: dict[str, Any] = {
        "id": ctx.response_id, "object": "response", "created_at": 0, "status": status, "model": ctx.model,
        "output": output, "error": error,
        "incomplete_details": {"reason": reason} if reason else None,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}} if final else None,
    }
    if final and turn.end_turn is not None:
        body["end_turn"] = turn.end_turn
    return body


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``response`` object."""
    status = responses_status(ctx.finish_raw)[0]
    return _object(turn, ctx, status, _items(turn, ctx), final=True)


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as Responses stream events, ending with its terminal event (or the error event)."""
    out: list[bytes] = []

    def ev(kind: str, **fields: Any) -> None:
        out.append(sse({"type": kind, "sequence_number": len(out), **fields}, kind))

    ev("response.created", response=_object(turn, ctx, "in_progress", [], final=False))
    ev("response.in_progress", response=_object(turn, ctx, "in_progress", [], final=False))
    items = _items(turn, ctx)
    for n, item in enumerate(items):
        kind = item["type"]
        if kind == "message":
            ev("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "content": []})
            for c, done in enumerate(item["content"]):
                key = "text" if done["type"] == "output_text" else "refusal"  # an output_text or a refusal part
                text, part = done[key], {**done, key: ""}
                kw: dict[str, Any] = {"logprobs": []} if key == "text" else {}
                ev("response.content_part.added", output_index=n, item_id=item["id"], content_index=c, part=part)
                for p in pieces(text):
                    ev(f"response.{'output_text' if key == 'text' else 'refusal'}.delta", output_index=n,
                       item_id=item["id"], content_index=c, delta=p, **kw)
                ev(f"response.{'output_text' if key == 'text' else 'refusal'}.done", output_index=n,
                   item_id=item["id"], content_index=c, **{key: text}, **kw)
                ev("response.content_part.done", output_index=n, item_id=item["id"], content_index=c, part=done)
        elif kind == "function_call":
            ev("response.output_item.added", output_index=n,
               item={**item, "status": "in_progress", "arguments": ""})
            for p in pieces(item["arguments"]):
                ev("response.function_call_arguments.delta", output_index=n, item_id=item["id"], delta=p)
            ev("response.function_call_arguments.done", output_index=n, item_id=item["id"],
               arguments=item["arguments"], name=item["name"])
        else:
            ev("response.output_item.added", output_index=n, item={**item, "summary": []})
        ev("response.output_item.done", output_index=n, item=item)
    if turn.error is not None and ctx.finish_raw != "failed":
        ev("error", code=turn.error.code or turn.error.kind, message=turn.error.message, param=None)
        return out
    status = responses_status(ctx.finish_raw)[0]
    if status is None:  # no finish sent: the stream ends without a terminal event
        return out
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete",
                "failed": "response.failed"}.get(status, "response.completed")
    ev(terminal, response=_object(turn, ctx, status, items, final=True))
    return out
