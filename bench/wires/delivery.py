"""How the replay server delivers a turn's error: the one rule the server renders by and the ports
that model what their loop receives read (bench.error_mode), so the two cannot drift apart."""

from __future__ import annotations

from typing import Literal, TypeAlias

from bench.engine.model import Turn

ErrorMode: TypeAlias = Literal["http", "stream", "cut", "end"]

_CUT_KINDS = ("connection_reset", "connection_refused")
"""Kinds served by breaking the connection: the server has already accepted it, so a refused
connection is served like a reset one (the client sees a transport error either way)."""


def error_mode(turn: Turn) -> ErrorMode | None:
    """How a turn's error is served (None: the turn has no error), read from its kind and status only.

    ``cut``: a connection that breaks (``connection_reset``, ``connection_refused``) with no status:
    the response starts, carries the turn's partial output, and the connection is closed without
    ending the body. ``end``: ``stream_cut``: the output is streamed and the stream ends cleanly,
    with no finish and no error event. ``stream``: an in-stream error (``stream_error``), or output
    before the error (content, reasoning or tool calls), or no status: the output is streamed, then
    the provider's error event, carrying the status as its code if any. ``http``: otherwise, that
    HTTP status with the provider's error body.
    """
    err = turn.error
    if err is None:
        return None
    if err.status is None and err.kind in _CUT_KINDS:
        return "cut"
    if err.kind == "stream_cut":
        return "end"
    has_output = turn.content is not None or turn.reasoning is not None or bool(turn.tool_calls)
    if err.status is None or err.kind == "stream_error" or has_output:
        return "stream"
    return "http"
