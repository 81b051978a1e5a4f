"""An Ollama ``/api/chat`` capture as a turn: one ``ChatResponse`` object, or its NDJSON stream.

* the text is ``message.content`` (every piece joined, in a stream), the thinking
  ``message.thinking``; a turn whose pieces are all empty has content None, as a turn that said
  nothing (Ollama sends ``content: ""`` on every object);
* tool calls are ``message.tool_calls`` (whole, on any object of a stream), their ``arguments`` an
  object kept as compact JSON in the order received; a call without an id gets ``""``;
* the finish is ``done_reason`` of the ``done: true`` object; a ``done: true`` without one (Ollama
  leaves it out when the generation ended on a closed connection: ollama/ollama v0.33.0-rc2 @
  fb307609, llm/server.go L249-265) keeps finish ``unknown`` and says so in ``finish_detail``;
* usage is ``prompt_eval_count`` and ``eval_count``;
* ``{"error": "..."}`` (a body, or a line of a stream: server/routes.go L2109-2124) is an error
  turn, its kind from the HTTP status (a line in a stream: ``stream_error``);
* a stream whose last object is not ``done: true`` and carries no error was cut.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires.capture import (
    JSON,
    ImportedTurn,
    NoDoneLine,
    Pieces,
    function_call,
    int_of,
    obj_of,
    provider_error,
    stream_turn,
    text_of,
)

DIALECT: Final[Dialect] = "ollama"

NO_REASON = "done: true without a done_reason"


def looks_like(obj: JSON) -> bool:
    """An object with Ollama's ``done`` flag beside a ``message`` or ``created_at``."""
    return isinstance(obj, dict) and isinstance(obj.get("done"), bool) and (
        isinstance(obj.get("message"), dict) or "created_at" in obj)


def is_error(obj: JSON) -> bool:
    """Ollama's error body: ``error`` is a string (OpenAI's is an object)."""
    return isinstance(obj, dict) and isinstance(obj.get("error"), str)


def _meta(obj: dict[str, JSON], meta: dict[str, str]) -> None:
    for key, name in (("model", "model"), ("created_at", "created")):
        value = obj.get(key)
        if isinstance(value, str) and value and name not in meta:
            meta[name] = value


def _usage(obj: dict[str, JSON]) -> Usage | None:
    if "prompt_eval_count" not in obj and "eval_count" not in obj:
        return None
    return Usage(int_of(obj.get("prompt_eval_count")), int_of(obj.get("eval_count")))


def _calls(msg: dict[str, JSON], unknown: Counter[str]) -> list[ToolCall]:
    out = []
    for c in msg.get("tool_calls") or []:
        if not obj_of(obj_of(c).get("function")):
            unknown["ollama: tool call without a function"] += 1
            continue
        out.append(function_call(c))
    return out


def _error(obj: dict[str, JSON], status: int | None, *, in_stream: bool = False) -> TurnError:
    return provider_error(status, None, text_of(obj.get("error")), in_stream=in_stream)


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``ChatResponse`` (or an ``{"error": ...}`` body) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    meta: dict[str, str] = {}
    _meta(obj, meta)
    if is_error(obj):
        return ImportedTurn(Turn("error", None, error=_error(obj, status)), DIALECT, meta)
    if not looks_like(obj):
        raise ValueError("no done flag and no error")
    asm = StreamAssembler(unknown)
    asm.feed(obj)
    return asm.finish()


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed the NDJSON objects of a stream in order, then call :meth:`finish`."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    content: Pieces = field(default_factory=Pieces)
    thinking: Pieces = field(default_factory=Pieces)
    calls: list[ToolCall] = field(default_factory=list)
    raw: str | None = None
    done: bool = False
    usage: Usage | None = None
    error: TurnError | None = None

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.unknown["ollama: a line that is not an object"] += 1
            return
        if is_error(obj):
            self.error = _error(obj, None, in_stream=True)
            return
        _meta(obj, self.meta)
        msg = obj_of(obj.get("message"))
        for key, into in (("content", self.content), ("thinking", self.thinking)):
            piece = msg.get(key)
            if isinstance(piece, str) and piece:
                into.add(piece)
        self.calls += _calls(msg, self.unknown)
        if obj.get("done") is True:
            self.done = True
            self.raw = text_of(obj.get("done_reason")) or None
            self.usage = _usage(obj)

    def finish(self) -> ImportedTurn:
        detail = NO_REASON if self.error is None and self.raw is None else None
        turn = stream_turn(DIALECT, self.raw, ended=self.done, error=self.error, content=self.content.text(),
                           tool_calls=tuple(self.calls), reasoning=self.thinking.text(), usage=self.usage,
                           detail=detail)
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)
