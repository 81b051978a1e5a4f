"""A turn's tool calls are never served to a request that offers no tools.

A model offered no tools cannot call one: a real provider answers such a request in text (AutoGen's
final reflection request is one: the history, no tools). So when a request carries no tools and the
turn answering it has calls, the server serves the turn's text alone, with the wire's normal end in
place of a tool-call finish (any other finish, e.g. a cut-off, stays; a call with a blank name,
which names no tool, is served as it is), and marks the step
(:data:`WITHHELD`) so the cell and the table can show that the client was not served the turn as
written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.engine.model import Dialect, Turn
from bench.wires import dialects
from bench.wires.base import offers_tools

WITHHELD = "tool calls withheld: the request offered no tools"
"""The note on a step whose turn's calls were not served."""


def without_calls(turn: Turn, body: dict[str, Any], dialect: Dialect,
                  offered: bool | None = None) -> tuple[Turn, str]:
    """The turn as served to `body` and the step's note: the turn itself and no note when the
    request offers tools or the turn calls no tool; else the turn without the calls that name a
    tool, a tool-call finish replaced by the normal end of the sequence's dialect when no call is
    left.

    A call with a blank name names no tool: it is a glitch of the stream (an accumulator keyed on
    the index; a recorded OpenRouter stream repeats a call's id and name in its deltas, simonw/llm
    tests/cassettes/test_tools_streaming/test_tools_streaming_variant_a.yaml), not the model's
    choice of a tool, and is served as recorded whatever the request offers (a program whose tools
    come from such a sequence is offered none).
    `offered`: whether the request offers tools as its wire says it
    (:meth:`bench.wires.base.Wire.offers_tools`); None: as :func:`offers_tools` reads `body`.
    """
    if (offers_tools(body) if offered is None else offered) or not any(c.name for c in turn.tool_calls):
        return turn, ""
    left = tuple(c for c in turn.tool_calls if not c.name)
    if left or turn.finish != "tool_calls":
        return replace(turn, tool_calls=left), WITHHELD
    return replace(turn, tool_calls=(), finish="stop", finish_raw=dialects.default_raw(dialect, "stop")), WITHHELD
