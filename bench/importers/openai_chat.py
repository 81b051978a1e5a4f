"""OpenAI Chat Completions: a ``chat.completion`` object, or ``chat.completion.chunk`` events.

Streams are assembled the way the wire allows, not the way the documentation hopes:

* the finish reason may come in its own empty-delta chunk, in the usage chunk, twice, or never
  (then ``finish_raw`` is None and ``finish`` is ``unknown``);
* a usage-only last chunk has ``choices: []``;
* tool-call deltas are keyed by their ``index``, which need not start at 0; continuation
  deltas may lack ``id`` and ``name``, and may repeat them (the first non-empty value is kept);
* ``arguments`` may be null or absent: nothing is appended, and a call that never received
  an arguments string gets ``""`` (the raw string received: none);
* an ``error`` object in a chunk makes the turn ``finish: error`` with that error; a finish
  reason sent before it is kept in ``finish_detail``;
* keep-alive comments are skipped, and a stream without ``[DONE]`` is accepted with a note.

Only choice 0 is assembled; other choices are counted as unknown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from bench.importers._common import (
    JSON,
    ImportedTurn,
    dumps_args,
    finish_of,
    int_of,
    iso_from_unix,
    obj_of,
    text_of,
)
from bench.model import Dialect, ToolCall, Turn, TurnError, Usage

DIALECT: Final[Dialect] = "openai-chat"


def looks_like(obj: JSON) -> bool:
    return isinstance(obj, dict) and (
        obj.get("object") in ("chat.completion", "chat.completion.chunk")
        or (isinstance(obj.get("choices"), list) and "output" not in obj))


def _meta(obj: dict[str, JSON], meta: dict[str, str]) -> None:
    for key, name in (("model", "model"), ("id", "id"), ("provider", "provider"),
                      ("system_fingerprint", "system_fingerprint")):
        value = obj.get(key)
        if isinstance(value, str) and value and name not in meta:
            meta[name] = value
    created = iso_from_unix(obj.get("created"))
    if created and "created" not in meta:
        meta["created"] = created


def _usage(obj: JSON) -> Usage | None:
    if not isinstance(obj, dict):
        return None
    return Usage(int_of(obj.get("prompt_tokens")), int_of(obj.get("completion_tokens")))


def _error(obj: JSON, status: int | None, default: str = "error") -> TurnError:
    """An error object as a TurnError: its ``type`` (or string ``code``), message, and an integer
    ``code`` that looks like an HTTP status as ``status``."""
    err = obj_of(obj)
    code = err.get("code")
    etype = text_of(err.get("type")) or (code if isinstance(code, str) and code else default)
    if status is None and isinstance(code, int) and 100 <= code < 600:
        status = code
    return TurnError(etype, text_of(err.get("message")) or "", status)


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``chat.completion`` object (or an ``{"error": ...}`` body) as a turn."""
    meta: dict[str, str] = {}
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    _meta(obj, meta)
    if "error" in obj and not obj.get("choices"):
        return ImportedTurn(Turn("error", None, error=_error(obj["error"], status)), DIALECT, meta)
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices and no error")
    if len(choices) > 1:
        unknown["openai-chat: choices beyond the first"] += len(choices) - 1
    choice = obj_of(choices[0])
    msg = obj_of(choice.get("message"))
    raw = text_of(choice.get("finish_reason"))
    calls = []
    for c in msg.get("tool_calls") or []:
        fn = obj_of(obj_of(c).get("function"))
        if not fn:
            unknown[f"openai-chat: tool call of type {c.get('type') if isinstance(c, dict) else c!r}"] += 1
            continue
        args = fn.get("arguments")
        calls.append(ToolCall(text_of(c.get("id")) or "", text_of(fn.get("name")) or "",
                              "" if args is None else dumps_args(args)))
    reasoning = text_of(msg.get("reasoning_content")) or text_of(msg.get("reasoning"))
    refusal = text_of(msg.get("refusal"))
    turn = Turn(finish=finish_of(DIALECT, raw), finish_raw=raw, content=text_of(msg.get("content")),
                tool_calls=tuple(calls), reasoning=reasoning, usage=_usage(obj.get("usage")),
                finish_detail=f"refusal: {refusal}" if refusal else None)
    return ImportedTurn(turn, DIALECT, meta)


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: str | None = None


@dataclass(slots=True)
class StreamAssembler:
    """Feed ``chat.completion.chunk`` objects in order, then call :meth:`finish`."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    content: str | None = None
    reasoning: str | None = None
    calls: dict[int, _Call] = field(default_factory=dict)
    finishes: list[str] = field(default_factory=list)
    usage: Usage | None = None
    error: TurnError | None = None
    done: bool = False
    chunks: int = 0

    def feed_done(self) -> None:
        self.done = True

    def feed(self, obj: JSON) -> None:
        if not isinstance(obj, dict):
            self.unknown["openai-chat: chunk that is not an object"] += 1
            return
        self.chunks += 1
        _meta(obj, self.meta)
        if obj.get("error") is not None:
            self.error = _error(obj["error"], None, "stream_error")
        if obj.get("usage") is not None:
            self.usage = _usage(obj.get("usage"))
        choices = obj.get("choices")
        if choices is None:
            if obj.get("error") is None and obj.get("usage") is None:
                self.unknown["openai-chat: chunk without choices"] += 1
            return
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            if choice.get("index", 0) != 0:
                self.unknown["openai-chat: choices beyond the first"] += 1
                continue
            self._choice(choice)

    def _choice(self, choice: dict[str, JSON]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            piece = delta.get("content")
            if isinstance(piece, str):
                self.content = (self.content or "") + piece
            for key in ("reasoning_content", "reasoning"):
                think = delta.get(key)
                if isinstance(think, str):
                    self.reasoning = (self.reasoning or "") + think
                    break
            for tc in delta.get("tool_calls") or []:
                self._tool_delta(tc)
        raw = choice.get("finish_reason")
        if isinstance(raw, str):
            self.finishes.append(raw)

    def _tool_delta(self, tc: JSON) -> None:
        if not isinstance(tc, dict):
            self.unknown["openai-chat: tool call delta that is not an object"] += 1
            return
        index = tc.get("index")
        if not isinstance(index, int):
            index = max(self.calls, default=-1) if tc.get("id") is None else len(self.calls)
            self.notes.append("a tool-call delta without an index was given one")
        call = self.calls.setdefault(index, _Call())
        if isinstance(tc.get("id"), str) and tc["id"] and not call.id:
            call.id = tc["id"]
        fn = tc.get("function")
        if isinstance(fn, dict):
            if isinstance(fn.get("name"), str) and fn["name"] and not call.name:
                call.name = fn["name"]
            args = fn.get("arguments")
            if isinstance(args, str):
                call.arguments = (call.arguments or "") + args

    def finish(self) -> ImportedTurn:
        if not self.done:
            self.notes.append("stream ended without [DONE]")
        distinct = list(dict.fromkeys(self.finishes))
        if len(self.finishes) > 1:
            self.notes.append(f"finish_reason sent {len(self.finishes)} times: {', '.join(self.finishes)}")
        raw = self.finishes[-1] if self.finishes else None
        if raw is None:
            self.notes.append("no chunk carried a finish_reason")
        calls = tuple(ToolCall(c.id, c.name, c.arguments if c.arguments is not None else "")
                      for _, c in sorted(self.calls.items()))
        for i, c in sorted(self.calls.items()):
            if c.arguments is None:
                self.notes.append(f"tool call at index {i} never received an arguments string")
        if self.calls and min(self.calls) != 0:
            self.notes.append(f"tool-call indices start at {min(self.calls)}")
        if self.error is not None:
            detail = f"finish_reason {' then '.join(repr(r) for r in distinct)} before the error" if distinct else None
            turn = Turn("error", None, content=self.content, tool_calls=calls, reasoning=self.reasoning,
                        error=self.error, usage=self.usage, finish_detail=detail)
        else:
            turn = Turn(finish_of(DIALECT, raw), raw, content=self.content, tool_calls=calls,
                        reasoning=self.reasoning, usage=self.usage)
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)
