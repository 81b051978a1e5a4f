"""A turn as an OpenAI Chat Completions answer: a ``chat.completion`` body or its chunk stream.

A call's `arguments` is the raw string, sent verbatim (``function.arguments``), valid JSON or not.
The finish reason arrives in a chunk of its own with an empty delta (what OpenAI sends); usage is
always in the body and, when the request asks with ``stream_options.include_usage``, in a last chunk.
A call streams as OpenAI streams it, its id and name in one chunk and its arguments in the next ones,
except to Mistral's own client (:data:`MISTRAL`), which gets it whole in one delta as Mistral streams it.
"""

from __future__ import annotations

from typing import Any

from bench.engine.model import ToolCall, Turn
from bench.wires.base import Context, openai_error_body, pieces, sse
from bench.wires.openai_chat import azure

MISTRAL = "mistral"
"""The surface of Mistral's own client: each streamed call whole in one delta, id, name and arguments
together, as Mistral's API streams it (the recorded stream of ``rec-mistral-stream-tool-call``;
microsoft/semantic-kernel#6316: "Tool calls from MistralAI will be contained entirely in a single
chunk"). Its official client parses each streamed call into a model that requires ``function.name``
(mistralai 3.7.0 ``client/models/functioncall.py`` lines 20-23), so it fails on OpenAI's framing, whose
arguments deltas carry no name. The path is OpenAI's, and a path of the bench's own would be a set-up
step Mistral's docs lack: the client is told by the ``User-Agent`` its SDK sends with every request,
``mistral-client-python/<version>`` (mistralai 3.7.0 ``client/_hooks/custom_user_agent.py`` lines 8-20,
registered for every request by ``client/_hooks/registration.py`` line 24), the wire's
:attr:`~bench.wires.base.Wire.agent_surfaces`. Any other client (OpenAI's sends ``OpenAI/Python ...``)
gets OpenAI's framing, byte for byte."""


def _usage(turn: Turn) -> dict[str, int]:
    u = turn.usage
    i, o = (u.input_tokens, u.output_tokens) if u is not None else (0, 0)
    return {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _gateway(turn: Turn, ctx: Context) -> dict[str, Any]:
    """What the gateway the request came through adds to the choice (Azure's filter results: :mod:`.azure`)."""
    return azure.choice_filters(turn) if ctx.surface == azure.SURFACE else {}


def response_json(turn: Turn, ctx: Context) -> dict[str, Any]:
    """The whole turn as one ``chat.completion``."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.reasoning is not None:
        message["reasoning_content"] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [_call(c) for c in turn.tool_calls]
    if turn.refusal is not None:
        message["refusal"] = turn.refusal
    body: dict[str, Any] = {
        "id": ctx.response_id, "object": "chat.completion", "created": 0, "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": ctx.finish_raw, "logprobs": None,
                     **_gateway(turn, ctx)}],
        # always sent, as the API does (zeros when the turn recorded none): clients read it unguarded
        "usage": _usage(turn),
    }
    return body


def stream_frames(turn: Turn, ctx: Context) -> list[bytes]:
    """The turn as ``chat.completion.chunk`` events, ending with ``[DONE]`` (or the error event)."""
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse({"id": ctx.response_id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None, **extra}]})

    out = [chunk({"role": "assistant", "content": None if turn.content is None else ""})]
    if turn.reasoning is not None:
        out += [chunk({"reasoning_content": p}) for p in pieces(turn.reasoning)]
    if turn.content:
        out += [chunk({"content": p}) for p in pieces(turn.content)]
    if turn.refusal:
        out += [chunk({"refusal": p}) for p in pieces(turn.refusal)]
    for i, call in enumerate(turn.tool_calls):
        if ctx.surface == MISTRAL:  # whole, arguments cut off or not: the client requires a name on each
            out.append(chunk({"tool_calls": [{"index": i, **_call(call)}]}))
            continue
        out.append(chunk({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                          "function": {"name": call.name, "arguments": ""}}]}))
        if call.arguments:
            out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                    for p in pieces(call.arguments)]
    if turn.error is not None:  # in-stream error: the stream breaks off where the turn's content ends
        out.append(sse(openai_error_body(turn.error)))
        return out
    # the finish reason in its own chunk with an empty delta (what OpenAI sends); null when none
    out.append(chunk({}, ctx.finish_raw, **_gateway(turn, ctx)))
    if ctx.include_usage:
        out.append(sse({"id": ctx.response_id, "object": "chat.completion.chunk", "created": 0,
                        "model": ctx.model, "choices": [], "usage": _usage(turn)}))
    out.append(sse("[DONE]"))
    return out
