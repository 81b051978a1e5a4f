"""OpenAI Responses: a ``response`` object, or its SSE events.

* The raw finish is ``status``, or ``incomplete/<reason>`` for ``status: incomplete`` with
  ``incomplete_details.reason`` (the key bench/wires/dialects.py uses); ``failed`` carries its error
  object into ``error`` (finish ``error``), ``end_turn`` is kept when the response has it.
* Output items: ``message`` items give ``content`` (their ``output_text`` parts joined; the
  ``refusal`` parts joined are the turn's ``refusal``; a message whose only parts are refusals has
  no content, None, not ``""``), ``function_call`` items give tool calls
  (``call_id``, ``name``, the raw ``arguments`` string), ``reasoning`` items give
  ``reasoning`` (summary text). Other item types are counted as unknown.
* Streamed, items are built from ``output_item.added``, the text and argument deltas and
  ``output_item.done``; the terminal event (``response.completed``, ``.incomplete``,
  ``.failed``) gives the status, and its ``output`` list wins when it is not empty. Delta pieces
  are listed and joined once, so assembly is linear in the stream's size.
* An ``error`` event is ``finish: error``.
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
    finish_of,
    int_of,
    iso_from_unix,
    obj_of,
    provider_error,
    text_of,
)

DIALECT: Final[Dialect] = "openai-responses"

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})
_QUIET = frozenset({
    "response.created", "response.in_progress", "response.queued", "response.content_part.added",
    "response.content_part.done", "response.output_text.done", "response.function_call_arguments.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done", "response.reasoning_text.done", "response.refusal.done",
    "response.output_text.annotation.added",
})
_KNOWN = TERMINAL | _QUIET | {
    "response.output_item.added", "response.output_item.done", "response.output_text.delta",
    "response.function_call_arguments.delta", "response.reasoning_summary_text.delta",
    "response.reasoning_text.delta", "response.refusal.delta", "error",
}
_QUIET_ITEMS = ("web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call")


def looks_like(obj: JSON) -> bool:
    return isinstance(obj, dict) and (obj.get("object") == "response"
                                      or str(obj.get("type", "")).startswith("response."))


def raw_finish(resp: dict[str, JSON]) -> str | None:
    status = text_of(resp.get("status"))
    if status == "incomplete":
        details = resp.get("incomplete_details")
        reason = text_of(details.get("reason")) if isinstance(details, dict) else None
        return f"incomplete/{reason}" if reason else "incomplete"
    return status


def _error(err: JSON, status: int | None, *, in_stream: bool = False) -> TurnError:
    e = obj_of(err)
    return provider_error(status, text_of(e.get("code")) or text_of(e.get("type")), text_of(e.get("message")),
                          in_stream=in_stream)


def _meta(resp: dict[str, JSON], meta: dict[str, str]) -> None:
    for key in ("model", "id"):
        if isinstance(resp.get(key), str):
            meta.setdefault(key, resp[key])
    created = iso_from_unix(resp.get("created_at"))
    if created:
        meta.setdefault("created", created)


@dataclass(slots=True)
class _Parts:
    texts: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    has_message: bool = False


def _items(items: list[JSON], unknown: Counter[str]) -> _Parts:
    out = _Parts()
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            out.has_message = True
            for part in item.get("content") or []:
                ptype = part.get("type") if isinstance(part, dict) else None
                if ptype == "output_text":
                    out.texts.append(text_of(part.get("text")) or "")
                elif ptype == "refusal":
                    out.refusals.append(text_of(part.get("refusal")) or "")
                else:
                    unknown[f"openai-responses: message part '{ptype}'"] += 1
        elif kind == "function_call":
            args = item.get("arguments")
            out.calls.append(ToolCall(text_of(item.get("call_id")) or text_of(item.get("id")) or "",
                                      text_of(item.get("name")) or "", args if isinstance(args, str) else ""))
        elif kind == "reasoning":
            for s in item.get("summary") or []:
                if isinstance(s, dict) and isinstance(s.get("text"), str):
                    out.reasoning.append(s["text"])
            for s in item.get("content") or []:
                if isinstance(s, dict) and isinstance(s.get("text"), str):
                    out.reasoning.append(s["text"])
        elif kind not in _QUIET_ITEMS:
            unknown[f"openai-responses: output item '{kind}'"] += 1
    return out


def _turn(resp: dict[str, JSON], parts: _Parts, status: int | None, *, in_stream: bool = False) -> Turn:
    raw = raw_finish(resp)
    usage = resp.get("usage")
    u = None
    if isinstance(usage, dict):
        u = Usage(int_of(usage.get("input_tokens")), int_of(usage.get("output_tokens")))
    end_turn = resp.get("end_turn") if isinstance(resp.get("end_turn"), bool) else None
    # a message with no text part at all is "" (the provider sent an empty message), unless its only
    # parts are refusals: then there is no content, and the refusal is kept apart
    content = "".join(parts.texts) if parts.texts else ("" if parts.has_message and not parts.refusals else None)
    reasoning = "".join(parts.reasoning) if parts.reasoning else None
    refusal = "".join(parts.refusals) or None
    if raw == "failed" or (resp.get("error") and raw not in ("completed", "incomplete")):
        return Turn("error", raw, content=content, tool_calls=tuple(parts.calls), reasoning=reasoning,
                    error=_error(resp.get("error"), status, in_stream=in_stream), usage=u, end_turn=end_turn,
                    refusal=refusal)
    return Turn(finish_of(DIALECT, raw), raw, content=content, tool_calls=tuple(parts.calls), reasoning=reasoning,
                usage=u, end_turn=end_turn, refusal=refusal)


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``response`` object (or an ``{"error": ...}`` body) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    meta: dict[str, str] = {}
    _meta(obj, meta)
    if "error" in obj and "output" not in obj:
        return ImportedTurn(Turn("error", None, error=_error(obj["error"], status)), DIALECT, meta)
    output = obj.get("output")
    if not isinstance(output, list):
        raise ValueError("a response without an output list")
    return ImportedTurn(_turn(obj, _items(output, unknown), status), DIALECT, meta)


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed the events' JSON objects in order, then call :meth:`finish`.

    Items come from ``output_item.added``/``.done``; delta pieces are kept per item in lists
    (`pieces`) and joined once at the end, into the items that no ``output_item.done`` completed."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    items: dict[int, dict[str, JSON]] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    pieces: dict[int, list[tuple[str, Pieces]]] = field(default_factory=dict)
    final: dict[str, JSON] | None = None
    error: TurnError | None = None

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        kind = obj.get("type") if isinstance(obj, dict) else None
        if not isinstance(kind, str):
            kind = event_name
        if kind not in _KNOWN:
            self.unknown[f"openai-responses: event '{kind}'"] += 1
            return
        assert isinstance(obj, dict)
        resp = obj.get("response")
        if isinstance(resp, dict) and (kind in TERMINAL or not self.meta):
            _meta(resp, self.meta)
        if kind in TERMINAL and isinstance(resp, dict):
            self.final = resp
        elif kind == "error":
            self.error = _error(obj, None, in_stream=True)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = obj.get("item")
            if isinstance(item, dict):
                index = self._index(obj)
                self.items[index] = dict(item)
                if kind == "response.output_item.done":
                    self.done.add(index)
        elif kind.endswith(".delta"):
            self._delta(kind, obj)

    def _index(self, obj: dict[str, JSON]) -> int:
        i = obj.get("output_index")
        return i if isinstance(i, int) else max(self.items, default=-1) + 1

    def _delta(self, kind: str, obj: dict[str, JSON]) -> None:
        index = self._index(obj)
        self.items.setdefault(index, {"type": "?"})
        part = {"response.function_call_arguments.delta": "arguments", "response.output_text.delta": "output_text",
                "response.refusal.delta": "refusal"}.get(kind, "summary_text")
        runs = self.pieces.setdefault(index, [])
        if not runs or runs[-1][0] != part:
            runs.append((part, Pieces()))
        runs[-1][1].add(text_of(obj.get("delta")) or "")

    def _assembled(self, index: int) -> dict[str, JSON]:
        """The item at `index`: as ``output_item.done`` gave it, else with its delta pieces joined in."""
        item = self.items[index]
        if index in self.done or index not in self.pieces:
            return item
        item = dict(item)
        for part, pieces in self.pieces[index]:
            text = pieces.text() or ""
            if part == "arguments":
                item["arguments"] = (text_of(item.get("arguments")) or "") + text
            elif part in ("output_text", "refusal"):
                key = "text" if part == "output_text" else "refusal"
                content = list(item.get("content") or [])
                content.append({"type": part, key: text})
                item["content"] = content
            else:  # reasoning summary or reasoning text
                summary = list(item.get("summary") or [])
                summary.append({"type": "summary_text", "text": text})
                item["summary"] = summary
        return item

    def finish(self) -> ImportedTurn:
        if self.error is not None and self.final is None:
            return ImportedTurn(Turn("error", None, error=self.error), DIALECT, self.meta, notes=self.notes)
        if self.final is None:
            self.notes.append("stream ended without a terminal response event")
            resp: dict[str, JSON] = {"status": None}
        else:
            resp = self.final
        output = resp.get("output")
        if isinstance(output, list) and output:
            parts = _items(output, self.unknown)
        else:
            parts = _items([self._assembled(i) for i in sorted(self.items)], self.unknown)
        return ImportedTurn(_turn(resp, parts, None, in_stream=True), DIALECT, self.meta, notes=self.notes)
