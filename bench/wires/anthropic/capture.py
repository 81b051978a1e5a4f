"""Anthropic Messages: a ``message`` object, or the SSE events of a streamed message.

* ``text`` blocks are joined into ``content`` (None when there is none); ``thinking`` blocks
  into ``reasoning``; ``tool_use`` blocks become tool calls whose arguments are the ``input``
  object as compact JSON, or, when streamed, the ``input_json_delta`` pieces joined verbatim
  (possibly cut-off JSON).
* ``server_tool_use`` and its result blocks are run by the server, not the loop: they are not
  tool calls, and are noted.
* ``stop_reason`` comes from the object or from ``message_delta``; ``stop_details`` (a refusal's
  category and explanation) is kept as compact JSON in ``finish_detail``.
* A second ``message_start`` before ``message_stop`` means two generations spliced into one
  stream (vercel/ai#18402): the partial first message is dropped, as a fresh message starts,
  and a note says what was dropped.
* An ``error`` event, or an ``{"type": "error"}`` body, is ``finish: error``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires.capture import (
    JSON,
    ImportedTurn,
    NoDoneLine,
    Pieces,
    dumps_args,
    finish_of,
    int_of,
    obj_of,
    provider_error,
    text_of,
)

DIALECT: Final[Dialect] = "anthropic"

STREAM_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                           "message_delta", "message_stop", "ping", "error"})
_SERVER_BLOCKS = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                  "code_execution_tool_result", "mcp_tool_use", "mcp_tool_result")
_QUIET_BLOCKS = ("redacted_thinking",)


def looks_like(obj: JSON) -> bool:
    return isinstance(obj, dict) and (obj.get("type") in STREAM_EVENTS | {"message"}
                                      or ("stop_reason" in obj and "content" in obj))


def _error(obj: JSON, status: int | None, *, in_stream: bool = False) -> TurnError:
    err = obj_of(obj_of(obj).get("error"))
    return provider_error(status, text_of(err.get("type")), text_of(err.get("message")), in_stream=in_stream)


def _detail(obj: JSON) -> str | None:
    return orjson.dumps(obj).decode() if isinstance(obj, dict) and obj else None


def _meta(msg: dict[str, JSON], meta: dict[str, str]) -> None:
    for key in ("model", "id"):
        if isinstance(msg.get(key), str) and key not in meta:
            meta[key] = msg[key]


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``message`` object (or an error body) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    meta: dict[str, str] = {}
    _meta(obj, meta)
    if obj.get("type") == "error":
        return ImportedTurn(Turn("error", None, error=_error(obj, status)), DIALECT, meta)
    blocks = obj.get("content")
    if not isinstance(blocks, list):
        raise ValueError("a message without a content list")
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    notes: list[str] = []
    server = 0
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(text_of(block.get("text")) or "")
        elif kind == "thinking":
            thinking.append(text_of(block.get("thinking")) or "")
        elif kind == "tool_use":
            calls.append(ToolCall(text_of(block.get("id")) or "", text_of(block.get("name")) or "",
                                  dumps_args(block.get("input", {}))))
        elif kind in _SERVER_BLOCKS:
            server += kind in ("server_tool_use", "mcp_tool_use")
        elif kind not in _QUIET_BLOCKS:
            unknown[f"anthropic: content block '{kind}'"] += 1
    if server:
        notes.append(f"{server} server tool call(s) run by the provider (not tool calls for the loop)")
    raw = text_of(obj.get("stop_reason"))
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
    turn = Turn(finish_of(DIALECT, raw), raw, content="".join(texts) if texts else None,
                tool_calls=tuple(calls), reasoning="".join(thinking) if thinking else None,
                usage=Usage(int_of(usage.get("input_tokens")), int_of(usage.get("output_tokens"))) if usage else None,
                finish_detail=_detail(obj.get("stop_details")))
    return ImportedTurn(turn, DIALECT, meta, notes=notes)


@dataclass(slots=True)
class _Block:
    """One content block of a stream; its text and input pieces are listed and joined once."""

    kind: str
    text: Pieces = field(default_factory=lambda: Pieces(""))
    id: str = ""
    name: str = ""
    start_input: JSON = None
    partial: Pieces = field(default_factory=Pieces)


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed the events' JSON objects in order, then call :meth:`finish`."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    blocks: dict[int, _Block] = field(default_factory=dict)
    started: bool = False
    stopped: bool = False
    stop_reason: str | None = None
    stop_details: JSON = None
    input_tokens: int = 0
    output_tokens: int = 0
    has_usage: bool = False
    error: TurnError | None = None

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        kind = obj.get("type") if isinstance(obj, dict) else None
        if not isinstance(kind, str):
            kind = event_name
        if kind not in STREAM_EVENTS:
            self.unknown[f"anthropic: event '{kind}'"] += 1
            return
        assert isinstance(obj, dict)
        getattr(self, "_" + kind)(obj)

    def _message_start(self, obj: dict[str, JSON]) -> None:
        msg = obj_of(obj.get("message"))
        if self.started and not self.stopped:
            dropped = [f"{b.kind} {b.name or ''}".strip()
                       + (f" (input so far {b.partial.text()!r})" if b.partial else "")
                       for _, b in sorted(self.blocks.items())]
            self.notes.append(f"second message_start ({msg.get('id')}) before message_stop of "
                              f"{self.meta.get('id')}: dropped the partial message's "
                              f"{len(self.blocks)} block(s): {'; '.join(dropped) or 'none'}")
            self.meta.pop("id", None)
            self.meta.pop("model", None)
            self.blocks.clear()
            self.stop_reason, self.stop_details = None, None
        self.started, self.stopped = True, False
        _meta(msg, self.meta)
        usage = msg.get("usage")
        if isinstance(usage, dict):
            self.has_usage = True
            self.input_tokens = int_of(usage.get("input_tokens"))
            self.output_tokens = int_of(usage.get("output_tokens"))

    def _content_block_start(self, obj: dict[str, JSON]) -> None:
        block = obj_of(obj.get("content_block"))
        given = obj.get("index")
        index = given if isinstance(given, int) else len(self.blocks)
        kind = text_of(block.get("type")) or "?"
        b = _Block(kind, id=text_of(block.get("id")) or "", name=text_of(block.get("name")) or "",
                   start_input=block.get("input"))
        if kind == "text":
            b.text = Pieces(text_of(block.get("text")) or "")
        elif kind == "thinking":
            b.text = Pieces(text_of(block.get("thinking")) or "")
        elif kind not in ("tool_use", *_SERVER_BLOCKS, *_QUIET_BLOCKS):
            self.unknown[f"anthropic: content block '{kind}'"] += 1
        self.blocks[index] = b

    def _content_block_delta(self, obj: dict[str, JSON]) -> None:
        delta = obj_of(obj.get("delta"))
        index = obj.get("index")
        b = self.blocks.get(index) if isinstance(index, int) else None
        dkind = delta.get("type")
        if b is None:
            self.unknown["anthropic: delta for a block that was not started"] += 1
            return
        if dkind == "text_delta":
            b.text.add(text_of(delta.get("text")) or "")
        elif dkind == "thinking_delta":
            b.text.add(text_of(delta.get("thinking")) or "")
        elif dkind == "input_json_delta":
            b.partial.add(text_of(delta.get("partial_json")) or "")
        elif dkind not in ("signature_delta", "citations_delta"):
            self.unknown[f"anthropic: delta '{dkind}'"] += 1

    def _content_block_stop(self, obj: dict[str, JSON]) -> None:
        pass

    def _message_delta(self, obj: dict[str, JSON]) -> None:
        delta = obj_of(obj.get("delta"))
        if "stop_reason" in delta:
            self.stop_reason = text_of(delta.get("stop_reason"))
        if delta.get("stop_details") is not None:
            self.stop_details = delta.get("stop_details")
        usage = obj.get("usage")
        if isinstance(usage, dict):
            self.has_usage = True
            if "input_tokens" in usage:
                self.input_tokens = int_of(usage.get("input_tokens"))
            self.output_tokens = int_of(usage.get("output_tokens"))

    def _message_stop(self, obj: dict[str, JSON]) -> None:
        self.stopped = True

    def _ping(self, obj: dict[str, JSON]) -> None:
        pass

    def _error(self, obj: dict[str, JSON]) -> None:
        self.error = _error(obj, None, in_stream=True)

    def finish(self) -> ImportedTurn:
        if not self.stopped and self.error is None:
            self.notes.append("stream ended without message_stop")
        texts = [b.text.text() or "" for _, b in sorted(self.blocks.items()) if b.kind == "text"]
        thinking = [b.text.text() or "" for _, b in sorted(self.blocks.items()) if b.kind == "thinking"]
        calls = []
        server = 0
        for _, b in sorted(self.blocks.items()):
            if b.kind == "tool_use":
                args = (b.partial.text() or "") if b.partial else dumps_args(b.start_input or {})
                calls.append(ToolCall(b.id, b.name, args))
            elif b.kind in ("server_tool_use", "mcp_tool_use"):
                server += 1
        if server:
            self.notes.append(f"{server} server tool call(s) run by the provider (not tool calls for the loop)")
        usage = Usage(self.input_tokens, self.output_tokens) if self.has_usage else None
        common: dict[str, Any] = {"content": "".join(texts) if texts else None, "tool_calls": tuple(calls),
                  "reasoning": "".join(thinking) if thinking else None, "usage": usage}
        if self.error is not None:
            before = f"stop_reason {self.stop_reason!r} before the error" if self.stop_reason else None
            turn = Turn("error", None, error=self.error, finish_detail=before, **common)
        else:
            turn = Turn(finish_of(DIALECT, self.stop_reason), self.stop_reason,
                        finish_detail=_detail(self.stop_details), **common)
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)
