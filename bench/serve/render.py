"""Render one turn as a provider's response: plain JSON or the SSE events of a real stream.

Each served wire (the *dialects*: OpenAI Chat Completions, Anthropic Messages, OpenAI Responses,
Gemini) renders its own answers (:meth:`bench.wires.base.Wire.render`, in ``bench/wires/<wire>/``);
this module is the server's wire-agnostic entry to them. A turn's `finish_raw` is sent verbatim
when the endpoint speaks the sequence's own dialect; on another endpoint the canonical `finish` is
translated with that dialect's table (:func:`finish_for`). A raw finish of None is sent as none at
all (null, or no terminal event).

A tool call's `arguments` is a raw string that may be invalid JSON; it is sent verbatim wherever
the wire carries a string (Chat `function.arguments`, Responses `arguments`, Anthropic streaming
`input_json_delta.partial_json`). A wire whose JSON carries an object (Anthropic's `tool_use.input`,
Gemini's `functionCall.args`) gets ``{}`` for a string that does not parse to an object (see docs/serve.md).

A turn with an `error` is an error in place of a response, served as :func:`error_mode` says: an
HTTP status with the provider's error body, an in-stream error event after whatever output the
turn has (in JSON mode, where there is no stream, the status or 500 stands in for it), or a
connection cut off mid-response. On the Responses wire a turn
whose raw finish is ``failed`` is a response with status ``failed`` carrying the error object.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeAlias

from bench.engine.model import Dialect, Turn, Usage
from bench.wires.base import CHUNK, IN_STREAM_JSON_STATUS, Context, Rendered, pieces, sse, tool_input
from bench.wires.delivery import error_mode
from bench.wires.registry import names, wire

__all__ = ["CHUNK", "IN_STREAM_JSON_STATUS", "WIRES", "Context", "Rendered", "WireName", "at_request_limit",
           "error_mode", "finish_for", "pieces", "render", "sse", "tool_input"]

WireName: TypeAlias = Dialect
"""A served wire's name (the wire itself is a :class:`bench.wires.base.Wire`, :func:`bench.wires.registry.wire`)."""
WIRES: tuple[WireName, ...] = names()


def finish_for(name: WireName, sequence_dialect: Dialect, turn: Turn) -> str | None:
    """The raw finish string to send on wire `name` for `turn` of a sequence in `sequence_dialect`
    (:meth:`bench.wires.base.Wire.finish_for`).

    A refusal on Anthropic is its own stop_reason, whatever the turn's finish (a chat refusal
    arrives with finish ``stop``); Gemini has no tool-call finish (calls arrive as parts with ``STOP``)."""
    return wire(name).finish_for(sequence_dialect, turn)


def render(name: WireName, turn: Turn, ctx: Context, stream: bool) -> Rendered:
    """The answer to one request of wire `name`, in JSON or as a stream."""
    return wire(name).render(turn, ctx, stream)


def at_request_limit(turn: Turn, recorded: int | None, name: WireName, request: dict[str, Any]) -> Turn:
    """`turn` as served to a request: a recorded cut at the recording's max_tokens (output_tokens
    equal to `recorded`, `Sequence.max_tokens`) is served at this request's own limit, so the
    truncation stays visible as usage.output_tokens == max_tokens to a client asking with another
    limit. The limit is read where the wire carries it (:meth:`bench.wires.base.Wire.max_tokens`: a
    top-level field on Chat, Anthropic and Responses, Gemini's ``generationConfig.maxOutputTokens``,
    Bedrock's ``inferenceConfig.maxTokens``). Any other turn, or a request without a positive limit,
    is served as recorded."""
    u = turn.usage
    if recorded is None or u is None or u.output_tokens != recorded:
        return turn
    asked = wire(name).max_tokens(request)
    return turn if asked is None or asked <= 0 else replace(turn, usage=Usage(u.input_tokens, asked))
