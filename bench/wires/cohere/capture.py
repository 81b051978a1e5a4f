"""A Cohere v2 capture as a turn: one ``V2ChatResponse`` body, or its event stream.

* the text is the ``text`` content items (joined), else a turn with calls' ``tool_plan``; the
  ``thinking`` items are the reasoning;
* tool calls are ``message.tool_calls`` (ids, names, ``arguments`` a string kept as received); in
  a stream, ``tool-call-start`` opens the call at its ``index`` and ``tool-call-delta`` pieces add
  to its arguments;
* the finish is ``finish_reason`` (in a stream, ``message-end``'s ``delta.finish_reason``), the
  usage ``usage.tokens`` (else ``usage.billed_units``);
* a ``message-end`` with ``delta.error`` is an in-stream error (kind ``stream_error``), its finish
  kept in ``finish_detail``; an error body (``{"message": ...}``, no ``finish_reason``) is an
  error turn, its kind from the HTTP status;
* ``citation-start``/``-end`` and ``debug`` events are counted as unknown, as are other types;
* a stream without ``message-end`` was cut.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires.capture import (
    JSON,
    ImportedTurn,
    NoDoneLine,
    Pieces,
    finish_of,
    function_call,
    obj_of,
    provider_error,
    stream_turn,
    text_of,
)

DIALECT: Final[Dialect] = "cohere"

STREAM_EVENTS = frozenset({"message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
                           "tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end",
                           "message-end", "debug"})
"""The event types of a v2 chat stream (cohere-ai/cohere-python 7.0.9 @ bc495daa,
src/cohere/v2/types/v2chat_stream_response.py L27-222)."""


def looks_like(obj: JSON) -> bool:
    """A v2 chat body (``finish_reason`` beside a ``message`` object, no ``choices``) or a stream event."""
    if not isinstance(obj, dict):
        return False
    if obj.get("type") in STREAM_EVENTS:
        return True
    return "finish_reason" in obj and isinstance(obj.get("message"), dict) and "choices" not in obj


def _usage(value: JSON) -> Usage | None:
    usage = obj_of(value)
    counts = obj_of(usage.get("tokens")) or obj_of(usage.get("billed_units"))
    if not counts:
        return None
    return Usage(_count(counts.get("input_tokens")), _count(counts.get("output_tokens")))


def _count(value: JSON) -> int:
    """A token count as Cohere sends it (a number, a float in the SDK's types), else 0."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return int(value) if ok else 0


def _text(items: JSON, kind: str) -> str | None:
    found = [str(i[kind]) for i in items if isinstance(i, dict) and i.get("type", kind) == kind
             and isinstance(i.get(kind), str)] if isinstance(items, list) else []
    return "".join(found) if found else None


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``V2ChatResponse`` (or a ``{"message": ...}`` error body) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    meta = {"id": obj["id"]} if isinstance(obj.get("id"), str) else {}
    if "finish_reason" not in obj and isinstance(obj.get("message"), str):
        return ImportedTurn(Turn("error", None, error=provider_error(status, None, obj["message"])), DIALECT, meta)
    msg = obj_of(obj.get("message"))
    if not msg:
        raise ValueError("no message and no error")
    calls = [function_call(c) for c in msg.get("tool_calls") or []]
    content = _text(msg.get("content"), "text")
    if content is None and calls:
        content = text_of(msg.get("tool_plan"))
    raw = text_of(obj.get("finish_reason"))
    turn = Turn(finish_of(DIALECT, raw), raw, content=content, tool_calls=tuple(calls),
                reasoning=_text(msg.get("content"), "thinking"), usage=_usage(obj.get("usage")))
    return ImportedTurn(turn, DIALECT, meta)


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: Pieces = field(default_factory=Pieces)


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed the events of a v2 chat stream in order, then call :meth:`finish`."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    text: Pieces = field(default_factory=Pieces)
    thinking: Pieces = field(default_factory=Pieces)
    plan: Pieces = field(default_factory=Pieces)
    calls: dict[int, _Call] = field(default_factory=dict)
    raw: str | None = None
    ended: bool = False
    usage: Usage | None = None
    error: TurnError | None = None

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.unknown["cohere: an event that is not an object"] += 1
            return
        kind = obj.get("type") or event_name
        msg = obj_of(obj_of(obj.get("delta")).get("message"))
        if kind == "message-start":
            if isinstance(obj.get("id"), str):
                self.meta.setdefault("id", obj["id"])
        elif kind in ("content-start", "content-delta"):
            item = obj_of(msg.get("content"))
            for key, into in (("text", self.text), ("thinking", self.thinking)):
                if isinstance(item.get(key), str):
                    into.add(item[key])
        elif kind == "tool-plan-delta":
            if isinstance(msg.get("tool_plan"), str):
                self.plan.add(msg["tool_plan"])
        elif kind in ("tool-call-start", "tool-call-delta"):
            self._call(obj, msg)
        elif kind == "message-end":
            self._end(obj_of(obj.get("delta")))
        elif kind not in ("content-end", "tool-call-end"):
            self.unknown[f"cohere: event {kind}"] += 1

    def _call(self, obj: dict[str, JSON], msg: dict[str, JSON]) -> None:
        index = obj.get("index")
        call = self.calls.setdefault(index if isinstance(index, int) else len(self.calls), _Call())
        tc = obj_of(msg.get("tool_calls"))
        fn = obj_of(tc.get("function"))
        if isinstance(tc.get("id"), str) and not call.id:
            call.id = tc["id"]
        if isinstance(fn.get("name"), str) and not call.name:
            call.name = fn["name"]
        if isinstance(fn.get("arguments"), str):
            call.arguments.add(fn["arguments"])

    def _end(self, delta: dict[str, JSON]) -> None:
        self.ended = True
        self.raw = text_of(delta.get("finish_reason"))
        self.usage = _usage(delta.get("usage")) or self.usage
        if isinstance(delta.get("error"), str):
            self.error = provider_error(None, None, delta["error"], in_stream=True)

    def finish(self) -> ImportedTurn:
        calls = tuple(ToolCall(c.id, c.name, c.arguments.text() or "") for _, c in sorted(self.calls.items()))
        content = self.text.text()
        if content is None and calls:
            content = self.plan.text()
        detail = f"finish_reason {self.raw!r} with the error" if self.error is not None and self.raw else None
        turn = stream_turn(DIALECT, self.raw, ended=self.ended, error=self.error, content=content, tool_calls=calls,
                           reasoning=self.thinking.text(), usage=self.usage, detail=detail)
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)
