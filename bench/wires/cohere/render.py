"""A turn as a Cohere v2 ``/v2/chat`` answer: a ``V2ChatResponse`` body or its event stream.

The body is ``{"id", "finish_reason", "message": {"role": "assistant", "content", "tool_plan",
"tool_calls"}, "usage"}`` (cohere-ai/cohere-python 7.0.9 @ bc495daa, src/cohere/v2/types/
v2chat_response.py L14-22; src/cohere/types/assistant_message_response.py L18-26). The text of a
turn that calls tools is its ``tool_plan`` (the model's plan before the calls), that of any other
turn a ``text`` content item; thinking is a ``thinking`` content item. A call's ``arguments`` is a
string on this wire (src/cohere/types/tool_call_v2function.py L11-12), sent verbatim, valid JSON or not.

The stream is server-sent events, each named by its ``type`` (src/cohere/v2/types/
v2chat_stream_response.py L27-222): ``message-start``, ``content-start``/``-delta``/``-end`` for
thinking and text, ``tool-plan-delta`` pieces, ``tool-call-start``/``-delta``/``-end`` per call,
and ``message-end`` whose ``delta`` carries the ``finish_reason`` and the usage
(src/cohere/types/chat_message_end_event_delta.py L13-19). An error after the output is a
``message-end`` with finish ``ERROR`` and the message in ``delta.error`` ("an error message if an
error occurred during the generation", L13-16).

Errors before any output are Cohere's error body ``{"message": "..."}`` with the HTTP status
(https://docs.cohere.com/v2/reference/errors: "the response will be an error object in the
following shape").
"""

from __future__ import annotations

from typing import Any

from bench.engine.model import ToolCall, Turn, TurnError
from bench.wires.base import Context, pieces, sse

ERROR_FINISH = "ERROR"
"""The finish of a ``message-end`` that carries an in-stream error."""


def error_body(err: TurnError) -> dict[str, Any]:
    """Cohere's error body: the message alone (echoed, never read)."""
    return {"message": err.message or err.code or err.kind}


def _usage(turn: Turn) -> dict[str, Any]:
    u = turn.usage
    counts = {"input_tokens": u.input_tokens if u else 0, "output_tokens": u.output_tokens if u else 0}
    return {"billed_units": dict(counts), "tokens": dict(counts)}


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def text(turn: Turn) -> str | None:
    """The turn's text: the content, or a refusal's text when there is no content (the wire has no
    refusal field)."""
    return turn.content if turn.content is not None else turn.refusal


def message(turn: Turn) -> dict[str, Any]:
    """The assistant message of a JSON body (and what a client echoes back)."""
    out: dict[str, Any] = {"role": "assistant"}
    said = text(turn)
    content: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        content.append({"type": "thinking", "thinking": turn.reasoning})
    if turn.tool_calls:
        if said is not None:
            out["tool_plan"] = said
        out["tool_calls"] = [_call(c) for c in turn.tool_calls]
    elif said is not None:
        content.append({"type": "text", "text": said})
    if content:
        out["content"] = content
    return out


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``V2ChatResponse``."""
    body: dict[str, Any] = {"id": ctx.response_id, "finish_reason": ctx.finish_raw, "message": message(turn),
                            "usage": _usage(turn)}
    if ctx.finish_raw is None:
        del body["finish_reason"]
    return body


def _event(data: dict[str, Any]) -> bytes:
    return sse(data, data["type"])


def _content(index: int, kind: str, text: str) -> list[bytes]:
    """One content item: its start, its pieces, its end."""
    out = [_event({"type": "content-start", "index": index,
                   "delta": {"message": {"content": {"type": kind, kind: ""}}}})]
    out += [_event({"type": "content-delta", "index": index, "delta": {"message": {"content": {kind: p}}}})
            for p in pieces(text)]
    out.append(_event({"type": "content-end", "index": index}))
    return out


def _calls(turn: Turn) -> list[bytes]:
    out: list[bytes] = []
    if said := text(turn):
        out += [_event({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}})
                for p in pieces(said)]
    for i, call in enumerate(turn.tool_calls):
        first = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(_event({"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": first}}}))
        out += [_event({"type": "tool-call-delta", "index": i,
                        "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}}})
                for p in pieces(call.arguments) if call.arguments]
        out.append(_event({"type": "tool-call-end", "index": i}))
    return out


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as Cohere v2 stream events, ending with ``message-end``."""
    out = [_event({"id": ctx.response_id, "type": "message-start",
                   "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
                                         "citations": []}}})]
    index = 0
    if turn.reasoning is not None:
        out += _content(index, "thinking", turn.reasoning)
        index += 1
    if turn.tool_calls:
        out += _calls(turn)
    elif (said := text(turn)) is not None:
        out += _content(index, "text", said)
    delta: dict[str, Any] = {}
    if turn.error is not None:
        delta = {"finish_reason": ERROR_FINISH, "error": error_body(turn.error)["message"]}
    elif ctx.finish_raw is not None:
        delta = {"finish_reason": ctx.finish_raw}
    delta["usage"] = _usage(turn)
    out.append(_event({"type": "message-end", "delta": delta}))
    return out
