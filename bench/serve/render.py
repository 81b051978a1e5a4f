"""Render one turn as a provider's response: plain JSON or the SSE events of a real stream.

Three wire formats (the served *dialects*): OpenAI Chat Completions, Anthropic Messages and OpenAI
Responses. A turn's `finish_raw` is sent verbatim when the endpoint speaks the sequence's own
dialect; on another endpoint the canonical `finish` is translated with that dialect's table
(:func:`finish_for`). A raw finish of None is sent as none at all (null, or no terminal event).

A tool call's `arguments` is a raw string that may be invalid JSON; it is sent verbatim wherever
the wire carries a string (Chat `function.arguments`, Responses `arguments`, Anthropic streaming
`input_json_delta.partial_json`). Anthropic's JSON body needs an object for `tool_use.input`: a
string that does not parse to an object is sent as ``{}`` (see docs/serve.md).

A turn with an `error` is an error in place of a response, served as :func:`error_mode` says: an
HTTP status with the provider's error body, an in-stream error event after whatever output the
turn has (in JSON mode, where there is no stream, the status or 500 stands in for it), or a
connection cut off mid-response. On the Responses wire a turn
whose raw finish is ``failed`` is a response with status ``failed`` carrying the error object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires import dialects
from bench.wires.delivery import error_mode

Wire: TypeAlias = Literal["openai-chat", "anthropic", "openai-responses", "gemini"]
WIRES: tuple[Wire, ...] = ("openai-chat", "anthropic", "openai-responses", "gemini")

CHUNK = 24
"""Characters per text or arguments delta in a stream (a real stream arrives in pieces)."""

IN_STREAM_JSON_STATUS = 500
"""HTTP status answering a JSON-mode request whose turn carries an error without a status."""


@dataclass(frozen=True, slots=True)
class Context:
    """What a rendering needs besides the turn: ids, the model name, the finish string to send."""

    response_id: str
    model: str
    finish_raw: str | None
    include_usage: bool = False


@dataclass(frozen=True, slots=True)
class Rendered:
    """An HTTP answer: a status and either a JSON body or a list of SSE frames (bytes); `cut`: the
    connection is closed after the frames, without ending the body."""

    status: int
    body: dict[str, Any] | None = None
    frames: tuple[bytes, ...] = ()
    cut: bool = False
    media: str = "text/event-stream; charset=utf-8"
    settle: float = 0.0
    """Seconds to wait before the last frame, so that it reaches the client as a read of its own
    (Google's in-stream error, which the JS client detects only as a whole read: bench/serve/gemini.py)."""

    @property
    def streaming(self) -> bool:
        return self.body is None


def finish_for(wire: Wire, sequence_dialect: Dialect, turn: Turn) -> str | None:
    """The raw finish string to send on `wire` for `turn` of a sequence in `sequence_dialect`.

    A refusal on Anthropic is its own stop_reason, whatever the turn's finish (a chat refusal
    arrives with finish ``stop``)."""
    if wire == "anthropic" and turn.refusal is not None and turn.error is None:
        return "refusal"
    if wire == sequence_dialect or turn.finish_raw is None:
        return turn.finish_raw
    if wire == "gemini" and turn.finish == "tool_calls":
        return "STOP"  # Gemini has no tool-call finish: calls arrive as parts with STOP (bench/serve/gemini.py)
    if turn.finish == "unknown":
        # never a string that means something else (Anthropic's pause_turn means resume): the wire's
        # own 'reason unknown' string where it has one, else the raw string as it is
        return dialects.UNSPECIFIED.get(wire, turn.finish_raw)
    mapped = dialects.default_raw(wire, turn.finish)
    # no string of this wire means this finish (unknown, or error on Chat/Anthropic): send the raw
    # string as it is; it maps to unknown on this wire, like a server's own invention would
    return mapped if mapped is not None else turn.finish_raw


def render(wire: Wire, turn: Turn, ctx: Context, stream: bool) -> Rendered:
    """The answer to one request of `wire`, in JSON or as a stream."""
    err = turn.error
    mode = error_mode(turn)
    if err is not None and mode == "http":
        return Rendered(err.status or IN_STREAM_JSON_STATUS, body=error_body(wire, err))
    failed_response = wire == "openai-responses" and ctx.finish_raw == "failed"
    if not stream:
        if mode == "cut":  # the JSON body breaks off half-way
            text = json.dumps(_JSON[wire](turn, ctx), ensure_ascii=False)
            return Rendered(200, frames=(text[:len(text) // 2].encode(),), cut=True, media="application/json")
        if err is not None and mode != "end" and not failed_response:
            return Rendered(err.status or IN_STREAM_JSON_STATUS, body=error_body(wire, err))
        return Rendered(200, body=_JSON[wire](turn, ctx))  # (a stream cut, asked without a stream: no finish)
    frames = tuple(_STREAM[wire](turn, ctx))
    if mode == "cut":
        return Rendered(200, frames=frames[:-1], cut=True)  # the output, without the error event
    if mode == "end":
        return Rendered(200, frames=frames[:-1])  # the output, then the stream ends: no finish, no error event
    return Rendered(200, frames=frames)


def error_body(wire: Wire, err: TurnError) -> dict[str, Any]:
    """The provider's error body (for an HTTP error status, or inside a stream).

    The error's `code` and `message` are echoed as data, never read: the body's type is the
    recorded code, else the kind; an OpenAI body's `code` is the status when the turn gives one
    (OpenRouter's in-stream errors do), else the recorded code, else the kind."""
    name = err.code or err.kind
    if wire == "anthropic":
        return {"type": "error", "error": {"type": name, "message": err.message}}
    code: str | int = err.status if err.status is not None else name
    return {"error": {"message": err.message, "type": name, "param": None, "code": code}}


def script_ended(wire: Wire, detail: str) -> dict[str, Any]:
    """The error body answering a request past the end of a `then: end` sequence."""
    return error_body(wire, TurnError("invalid_request", detail, code="script_ended"))


def pieces(text: str, size: int = CHUNK) -> list[str]:
    """`text` cut into deltas; the empty string is one empty delta."""
    if not text:
        return [""]
    return [text[i:i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def at_request_limit(turn: Turn, recorded: int | None, wire: Wire, request: dict[str, Any]) -> Turn:
    """`turn` as served to a request: a recorded cut at the recording's max_tokens (output_tokens
    equal to `recorded`, `Sequence.max_tokens`) is served at this request's own limit, so the
    truncation stays visible as usage.output_tokens == max_tokens to a client asking with another
    limit. Any other turn, or a request without a limit, is served as recorded."""
    u = turn.usage
    if recorded is None or u is None or u.output_tokens != recorded:
        return turn
    fields = {"openai-chat": ("max_completion_tokens", "max_tokens"), "anthropic": ("max_tokens",),
              "openai-responses": ("max_output_tokens",)}.get(wire, ())
    asked = next((n for f in fields if type(n := request.get(f)) is int and n > 0), None)
    return turn if asked is None else replace(turn, usage=Usage(u.input_tokens, asked))


# ---------------------------------------------------------------- OpenAI Chat Completions


def _chat_usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    return {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}


def _chat_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _chat_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.reasoning is not None:
        message["reasoning_content"] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [_chat_call(c) for c in turn.tool_calls]
    if turn.refusal is not None:
        message["refusal"] = turn.refusal
    body: dict[str, Any] = {
        "id": ctx.response_id, "object": "chat.completion", "created": 0, "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": ctx.finish_raw, "logprobs": None}],
        # always sent, as the API does (zeros when the turn recorded none): clients read it unguarded
        "usage": _chat_usage(turn),
    }
    return body


def _chat_stream(turn: Turn, ctx: Context) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({"id": ctx.response_id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    out = [chunk({"role": "assistant", "content": None if turn.content is None else ""})]
    if turn.reasoning is not None:
        out += [chunk({"reasoning_content": p}) for p in pieces(turn.reasoning)]
    if turn.content:
        out += [chunk({"content": p}) for p in pieces(turn.content)]
    if turn.refusal:
        out += [chunk({"refusal": p}) for p in pieces(turn.refusal)]
    for i, call in enumerate(turn.tool_calls):
        out.append(chunk({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                          "function": {"name": call.name, "arguments": ""}}]}))
        if call.arguments:
            out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                    for p in pieces(call.arguments)]
    if turn.error is not None:  # in-stream error: the stream breaks off where the turn's content ends
        out.append(sse(error_body("openai-chat", turn.error)))
        return out
    # the finish reason in its own chunk with an empty delta (what OpenAI sends); null when none
    out.append(chunk({}, ctx.finish_raw))
    if ctx.include_usage:
        out.append(sse({"id": ctx.response_id, "object": "chat.completion.chunk", "created": 0,
                        "model": ctx.model, "choices": [], "usage": _chat_usage(turn)}))
    out.append(sse("[DONE]"))
    return out


# ---------------------------------------------------------------- Anthropic Messages


def tool_input(arguments: str) -> dict[str, Any]:
    """`tool_use.input` for a JSON body: the arguments' object, or {} when they are not one."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _anthropic_usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    return {"input_tokens": u.input_tokens if u else 0, "output_tokens": u.output_tokens if u else 0}


def _anthropic_text(turn: Turn) -> str | None:
    """The text block's text: the content, or a refusal's text when there is no content (Anthropic
    has no refusal field: its refusal is stop_reason ``refusal`` with the text as text)."""
    return turn.content if turn.content is not None else turn.refusal


def _anthropic_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        blocks.append({"type": "thinking", "thinking": turn.reasoning, "signature": ""})
    if (text := _anthropic_text(turn)) is not None:
        blocks.append({"type": "text", "text": text})
    for call in turn.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call.arguments)})
    return blocks


def _anthropic_message(turn: Turn, ctx: Context, content: list[dict[str, Any]],
                       stop: str | None) -> dict[str, Any]:
    return {"id": ctx.response_id, "type": "message", "role": "assistant", "model": ctx.model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": _anthropic_usage(turn)}


def _anthropic_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    return _anthropic_message(turn, ctx, _anthropic_blocks(turn), ctx.finish_raw)


def _anthropic_stream(turn: Turn, ctx: Context) -> list[bytes]:
    start = _anthropic_message(turn, ctx, [], None)
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
    if (text := _anthropic_text(turn)) is not None:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(text)])
    for call in turn.tool_calls:
        # the raw string goes out as it is, even when it is not (or not yet) valid JSON
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(call.arguments)]
        block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas)
    if turn.error is not None:
        out.append(sse(error_body("anthropic", turn.error), "error"))
        return out
    out.append(sse({"type": "message_delta", "delta": {"stop_reason": ctx.finish_raw, "stop_sequence": None},
                    "usage": {"output_tokens": _anthropic_usage(turn)["output_tokens"]}}, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


# ---------------------------------------------------------------- OpenAI Responses


def responses_status(raw: str | None) -> tuple[str | None, str | None]:
    """``incomplete/max_output_tokens`` as (status, incomplete reason); None as (None, None)."""
    if raw is None:
        return None, None
    status, _, reason = raw.partition("/")
    return status, reason or None


def _responses_items(turn: Turn, ctx: Context) -> list[dict[str, Any]]:
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


def _responses_object(turn: Turn, ctx: Context, status: str | None, output: list[dict[str, Any]],
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


def _responses_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    status = responses_status(ctx.finish_raw)[0]
    return _responses_object(turn, ctx, status, _responses_items(turn, ctx), final=True)


def _responses_stream(turn: Turn, ctx: Context) -> list[bytes]:
    out: list[bytes] = []

    def ev(kind: str, **fields: Any) -> None:
        out.append(sse({"type": kind, "sequence_number": len(out), **fields}, kind))

    ev("response.created", response=_responses_object(turn, ctx, "in_progress", [], final=False))
    ev("response.in_progress", response=_responses_object(turn, ctx, "in_progress", [], final=False))
    items = _responses_items(turn, ctx)
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
    ev(terminal, response=_responses_object(turn, ctx, status, items, final=True))
    return out


_JSON = {"openai-chat": _chat_json, "anthropic": _anthropic_json, "openai-responses": _responses_json}
_STREAM = {"openai-chat": _chat_stream, "anthropic": _anthropic_stream, "openai-responses": _responses_stream}
