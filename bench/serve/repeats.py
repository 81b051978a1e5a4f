"""Fresh call ids for a turn served again (``Session(fresh_repeat_ids=True)``).

A real provider gives every response new call ids. A turn served more than once (the last turn of a
``then: repeat`` sequence, or a turn an ``after:`` route goes back to: guard-ab-cycle's two rounds in
a cycle) stands for a model that answers the same way again, not for one that reuses ids: served the
same id again, a client that keys its history by call id merges the rounds into one (Mastra) or
suppresses the call as one it completed (the OpenAI Agents SDK for JavaScript). With fresh ids on,
the k-th serve of a turn after its first (k = 1, 2, ...) serves each non-blank id with the suffix
``-r<k>``. A sequence tagged :data:`ID_TAG` is about call ids (ids reused across rounds, ids
numbered per round): its ids are served as written every time.

Off by default: a port's replay sees the sequence's ids as written, repeats included, and some
ports model what their loop does with an id seen before (Claude Code's duplicate-id, the OpenAI
Agents SDK's reused-id error, Hermes' sanitizer, observed against the server serving the ids as
written), so conformance must serve them so.
"""

from __future__ import annotations

from dataclasses import replace

from bench.engine.model import Sequence, Turn

ID_TAG = "tool-call-id"
"""The tag of the sequences whose point is their call ids: served as written."""


def repeat_number(sequence: Sequence, index: int, served_before: int) -> int:
    """Which repeat of turn `index` a request is answered with: 0 for the turn's first serve or for
    a sequence about call ids; else `served_before` (how often this run served the turn already)."""
    if ID_TAG in sequence.tags:
        return 0
    return served_before


def with_fresh_ids(turn: Turn, repeat: int) -> Turn:
    """`turn` with the ids of repeat number `repeat` (the turn itself for 0; blank ids stay blank)."""
    if repeat == 0 or not turn.tool_calls:
        return turn
    return replace(turn, tool_calls=tuple(replace(c, id=f"{c.id}-r{repeat}") if c.id else c
                                          for c in turn.tool_calls))
