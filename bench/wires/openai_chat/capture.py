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

* ``message.refusal``, or a streamed refusal's ``delta.refusal`` pieces joined like the content,
  is the turn's ``refusal`` whatever the finish says (a refusal arrives with finish ``stop``);
* a legacy ``function_call`` (``message.function_call`` or ``delta.function_call`` pieces, finish
  ``function_call``) is a tool call with no id (the legacy wire has none), noted;
* a legacy ``/v1/completions`` ``text_completion`` (``choices[].text``, whole or streamed) is read
  as a chat turn whose content is that text, noted (the finish strings are the chat ones);
* usage sent in Groq's extension (``x_groq.usage``) is read when the chunk has no ``usage``;
* Azure's ``content_filter_results`` on the choice are kept in ``finish_detail`` (compact JSON; in
  a stream, per category the last result, a ``filtered: true`` one winning);
* an ``error`` body's integer ``status`` (Azure's content-filter 400) is its HTTP status.

Every piece of text is collected in a list and joined once (:class:`~bench.wires.capture.Pieces`),
so assembly is linear in the stream's size.

Only choice 0 is assembled; other choices are counted as unknown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

import orjson

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires.capture import (
    JSON,
    ImportedTurn,
    Pieces,
    dumps_args,
    finish_of,
    function_call,
    int_of,
    iso_from_unix,
    obj_of,
    provider_error,
    text_of,
)

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


def _usage_of(obj: dict[str, JSON]) -> Usage | None:
    """``usage``, or Groq's ``x_groq.usage`` (its streams put the usage there, in the last chunk)."""
    if obj.get("usage") is not None:
        return _usage(obj.get("usage"))
    return _usage(obj_of(obj.get("x_groq")).get("usage"))


def _http_status(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600 else None


def _error(obj: JSON, status: int | None, *, in_stream: bool = False) -> TurnError:
    """An error object as a TurnError: the provider's string ``code`` (else its ``type``) as the
    code, an integer ``code`` or ``status`` that is an HTTP status as the status."""
    err = obj_of(obj)
    code = err.get("code")
    name = code if isinstance(code, str) and code else text_of(err.get("type"))
    status = status or _http_status(code) or _http_status(err.get("status"))
    return provider_error(status, name, text_of(err.get("message")), in_stream=in_stream)


def _error_detail(obj: JSON) -> str | None:
    """Azure's content-filter error: which categories its ``innererror`` says were filtered."""
    inner = obj_of(obj_of(obj).get("innererror"))
    result = inner.get("content_filter_result")
    return f"content_filter_result: {orjson.dumps(result).decode()}" if isinstance(result, dict) and result else None


def _filters(value: JSON) -> str | None:
    return f"content_filter_results: {orjson.dumps(value).decode()}" if isinstance(value, dict) and value else None


def _detail(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return "; ".join(kept) if kept else None


_LEGACY_CALL_NOTE = "a legacy function_call was read as a tool call (the legacy wire gives it no id)"
_COMPLETION_NOTE = "a legacy text_completion (/v1/completions): its text was read as the content"


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``chat.completion`` object (or an ``{"error": ...}`` body) as a turn."""
    meta: dict[str, str] = {}
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    _meta(obj, meta)
    if "error" in obj and not obj.get("choices"):
        turn = Turn("error", None, error=_error(obj["error"], status), finish_detail=_error_detail(obj["error"]))
        return ImportedTurn(turn, DIALECT, meta)
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices and no error")
    if len(choices) > 1:
        unknown["openai-chat: choices beyond the first"] += len(choices) - 1
    choice = obj_of(choices[0])
    msg = obj_of(choice.get("message"))
    raw = text_of(choice.get("finish_reason"))
    notes: list[str] = []
    content = text_of(msg.get("content"))
    if "message" not in choice and "text" in choice:
        content = text_of(choice.get("text"))
        notes.append(_COMPLETION_NOTE)
    calls = []
    for c in msg.get("tool_calls") or []:
        fn = obj_of(obj_of(c).get("function"))
        if not fn:
            unknown[f"openai-chat: tool call of type {c.get('type') if isinstance(c, dict) else c!r}"] += 1
            continue
        calls.append(function_call(c))
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        args = legacy.get("arguments")
        calls.append(ToolCall("", text_of(legacy.get("name")) or "", "" if args is None else dumps_args(args)))
        notes.append(_LEGACY_CALL_NOTE)
    reasoning = text_of(msg.get("reasoning_content")) or text_of(msg.get("reasoning"))
    refusal = text_of(msg.get("refusal"))
    turn = Turn(finish=finish_of(DIALECT, raw), finish_raw=raw, content=content,
                tool_calls=tuple(calls), reasoning=reasoning, usage=_usage_of(obj),
                finish_detail=_filters(choice.get("content_filter_results")), refusal=refusal or None)
    return ImportedTurn(turn, DIALECT, meta, notes=notes)


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: Pieces = field(default_factory=Pieces)


def _merge_filters(into: dict[str, JSON], results: JSON) -> None:
    """Per category the latest result, except that a ``filtered: true`` one is never replaced."""
    if not isinstance(results, dict):
        return
    for category, value in results.items():
        if obj_of(into.get(category)).get("filtered") is True:
            continue
        into[category] = value


@dataclass(slots=True)
class StreamAssembler:
    """Feed ``chat.completion.chunk`` (or legacy ``text_completion``) objects in order, then call
    :meth:`finish`. Each chunk costs time in its own size only: pieces are listed, joined at the end."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    content: Pieces = field(default_factory=Pieces)
    reasoning: Pieces = field(default_factory=Pieces)
    refusal: Pieces = field(default_factory=Pieces)
    calls: dict[int, _Call] = field(default_factory=dict)
    legacy_call: _Call | None = None
    filters: dict[str, JSON] = field(default_factory=dict)
    finishes: list[str] = field(default_factory=list)
    usage: Usage | None = None
    error: TurnError | None = None
    completion: bool = False
    done: bool = False
    chunks: int = 0

    def feed_done(self) -> None:
        self.done = True

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.unknown["openai-chat: chunk that is not an object"] += 1
            return
        self.chunks += 1
        if self.chunks == 1 or "id" not in self.meta:
            _meta(obj, self.meta)
        if obj.get("error") is not None:
            self.error = _error(obj["error"], None, in_stream=True)
        usage = _usage_of(obj)
        if usage is not None:
            self.usage = usage
        choices = obj.get("choices")
        if choices is None:
            if obj.get("error") is None and usage is None:
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
                self.content.add(piece)
            refusal = delta.get("refusal")
            if isinstance(refusal, str):
                self.refusal.add(refusal)
            for key in ("reasoning_content", "reasoning"):
                think = delta.get(key)
                if isinstance(think, str):
                    self.reasoning.add(think)
                    break
            for tc in delta.get("tool_calls") or []:
                self._tool_delta(tc)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                self._legacy_delta(legacy)
        elif isinstance(choice.get("text"), str):  # a legacy text_completion chunk
            self.completion = True
            self.content.add(choice["text"])
        if "content_filter_results" in choice:
            _merge_filters(self.filters, choice.get("content_filter_results"))
        raw = choice.get("finish_reason")
        if isinstance(raw, str):
            self.finishes.append(raw)

    def _legacy_delta(self, fn: dict[str, JSON]) -> None:
        call = self.legacy_call
        if call is None:
            call = self.legacy_call = _Call()
        if isinstance(fn.get("name"), str) and fn["name"] and not call.name:
            call.name = fn["name"]
        args = fn.get("arguments")
        if isinstance(args, str):
            call.arguments.add(args)

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
                call.arguments.add(args)

    def finish(self) -> ImportedTurn:
        if not self.done:
            self.notes.append("stream ended without [DONE]")
        distinct = list(dict.fromkeys(self.finishes))
        if len(self.finishes) > 1:
            self.notes.append(f"finish_reason sent {len(self.finishes)} times: {', '.join(self.finishes)}")
        raw = self.finishes[-1] if self.finishes else None
        if raw is None:
            self.notes.append("no chunk carried a finish_reason")
        ordered = sorted(self.calls.items())
        if self.legacy_call is not None:
            ordered.append((max(self.calls, default=-1) + 1, self.legacy_call))
            self.notes.append(_LEGACY_CALL_NOTE)
        calls = tuple(ToolCall(c.id, c.name, c.arguments.text() or "") for _, c in ordered)
        for i, c in sorted(self.calls.items()):
            if not c.arguments:
                self.notes.append(f"tool call at index {i} never received an arguments string")
        if self.calls and min(self.calls) != 0:
            self.notes.append(f"tool-call indices start at {min(self.calls)}")
        if self.completion:
            self.notes.append(_COMPLETION_NOTE)
        detail = _filters(self.filters) if self.filters else None
        common = {"content": self.content.text(), "tool_calls": calls, "reasoning": self.reasoning.text(),
                  "usage": self.usage, "refusal": self.refusal.text() or None}
        if self.error is not None:
            before = f"finish_reason {' then '.join(repr(r) for r in distinct)} before the error" if distinct else None
            turn = Turn("error", None, error=self.error, finish_detail=_detail(before, detail), **common)  # type: ignore[arg-type]
        else:
            turn = Turn(finish_of(DIALECT, raw), raw, finish_detail=detail, **common)  # type: ignore[arg-type]
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)
