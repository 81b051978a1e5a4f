"""The edge-case tags of a sequence, derived from its turns: the same rules for every corpus source.

A catalogue sequence carries the tags its author gave it; a production trace carries none. So that
the corpus counts edge cases the same way whatever the source, :func:`turn_tags` derives them from
the fields of each turn, deterministically, with the catalogue's tag names (``truncation``,
``cut-json``, ``dropped-calls``, ...). A sequence's tags are the union over its turns; a sequence
with none of them is ``normal``. The author's own tags are not counted (they mix topics such as
``seed002`` with edge cases, and a production trace has none to compare them with).
"""

from __future__ import annotations

import json
from typing import Any

from bench.engine.model import Sequence, Turn
from bench.wires.registry import wires

__all__ = ["EDGE_TAGS", "TRANSIENT_KINDS", "sequence_tags", "stop_with_calls", "turn_tags"]

EDGE_TAGS: tuple[str, ...] = (
    "truncation",       # finish length: the reply was cut off
    "cut-json",         # a tool call whose arguments are not valid JSON (an empty string counts as none)
    "content-filter",   # finish content_filter
    "refusal",          # the model's refusal text (Turn.refusal, where the model has it)
    "error",            # an error in place of a response (finish error)
    "transient",        # an error of a kind that may pass on a retry (rate limit, overloaded, 5xx, timeout, cut)
    "context-window",   # an error saying the request exceeds the context window
    "unknown-finish",   # a finish string the dialect's table does not know (or none sent)
    "missing-finish",   # no finish string sent at all, and no error
    "dropped-calls",    # finish tool_calls, but no call arrived
    "stop-with-calls",  # a stop finish carrying calls, on a wire that has a tool finish (Chat, Anthropic, Bedrock)
    "empty-stop",       # a stop with neither text nor calls
    "parallel",         # more than one call in a turn
    "tool-call-id",     # a call id that is empty or repeated within the turn
    "tool-call-name",   # a call whose name is blank
    "reasoning",        # reasoning text
    "steer",            # a user message that arrived during the response
    "end-turn-false",   # the Responses API's end_turn: false
)
"""Every tag a turn can get, in report order; ``normal`` (a sequence with none) follows them."""

TRANSIENT_KINDS = frozenset({"rate_limit", "overloaded", "server_error", "timeout", "connection_refused",
                             "connection_reset", "stream_cut", "stream_error"})
"""Error kinds (SPEC 1) that a retry may get past."""

_TOOL_FINISH_DIALECTS = frozenset(w.name for w in wires() if w.has_tool_finish())
"""Wires with a finish string for tool calls (:meth:`bench.wires.base.Wire.has_tool_finish`); on the others
a turn with calls says stop."""


def stop_with_calls(turn: Turn, dialect: str) -> bool:
    """Whether `turn` says stop yet carries calls on a wire where calls have their own finish."""
    return turn.finish == "stop" and bool(turn.tool_calls) and dialect in _TOOL_FINISH_DIALECTS


def _is_json(arguments: str) -> bool:
    if not arguments:
        return True
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True


def _error_kind(turn: Turn) -> str:
    err: Any = turn.error
    if err is None:
        return ""
    return str(getattr(err, "kind", None) or getattr(err, "type", ""))


def turn_tags(turn: Turn, dialect: str) -> list[str]:
    """The tags of one turn, in :data:`EDGE_TAGS` order (a plain turn has none)."""
    out: list[str] = []
    finish = turn.finish
    calls = turn.tool_calls
    if finish == "length":
        out.append("truncation")
    if calls and not all(_is_json(c.arguments) for c in calls):
        out.append("cut-json")
    if finish == "content_filter":
        out.append("content-filter")
    if getattr(turn, "refusal", None):
        out.append("refusal")
    if finish == "error":
        out.append("error")
        kind = _error_kind(turn)
        if kind in TRANSIENT_KINDS or (turn.error is not None and turn.error.status is not None
                                       and (turn.error.status == 429 or turn.error.status >= 500)):
            out.append("transient")
        if kind in ("context_overflow", "context_length_exceeded"):
            out.append("context-window")
    if finish == "unknown":
        out.append("unknown-finish")
    if turn.finish_raw is None and finish != "error":
        out.append("missing-finish")
    if finish == "tool_calls" and not calls:
        out.append("dropped-calls")
    if stop_with_calls(turn, dialect):
        out.append("stop-with-calls")
    if finish == "stop" and not calls and not (turn.content or "").strip():
        out.append("empty-stop")
    if len(calls) > 1:
        out.append("parallel")
    if calls:
        ids = [c.id for c in calls]
        if "" in ids or len(set(ids)) != len(ids):
            out.append("tool-call-id")
        if any(not c.name.strip() for c in calls):
            out.append("tool-call-name")
    if turn.reasoning:
        out.append("reasoning")
    if turn.steer:
        out.append("steer")
    if turn.end_turn is False:
        out.append("end-turn-false")
    return out


def sequence_tags(seq: Sequence) -> tuple[str, ...]:
    """The union of the turns' tags in :data:`EDGE_TAGS` order, or ``("normal",)``."""
    seen: set[str] = set()
    for turn in seq.turns:
        seen.update(turn_tags(turn, seq.dialect))
    return tuple(t for t in EDGE_TAGS if t in seen) or ("normal",)
