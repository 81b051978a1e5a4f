"""Amazon Bedrock Converse: a recorded ``ConverseResponse`` body, or the events of a ConverseStream
as botocore yields them (each a one-key object: ``{"contentBlockDelta": {...}}``).

* ``text`` blocks are joined into ``content`` (None when there is none); ``reasoningContent``
  blocks into ``reasoning``; ``toolUse`` blocks become tool calls whose arguments are the ``input``
  object as compact JSON, or, when streamed, the ``toolUse.input`` pieces joined verbatim.
* ``stopReason`` comes from the body or from ``messageStop``; the usage from ``usage`` or the
  ``metadata`` event.
* An exception event inside a stream (``throttlingException`` and the like) is ``finish: error``,
  kind ``stream_error``, its member name kept as the code.
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
    dumps_args,
    finish_of,
    int_of,
    obj_of,
    provider_error,
    text_of,
)

DIALECT: Final[Dialect] = "bedrock-converse"

STREAM_EVENTS = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                           "messageStop", "metadata"})
STREAM_EXCEPTIONS = frozenset({"internalServerException", "modelStreamErrorException", "validationException",
                               "throttlingException", "serviceUnavailableException"})


def looks_like(obj: JSON) -> bool:
    if not isinstance(obj, dict):
        return False
    if len(obj) == 1 and next(iter(obj)) in STREAM_EVENTS | STREAM_EXCEPTIONS:
        return True
    return "stopReason" in obj and isinstance(obj.get("output"), dict)


def _usage(obj: JSON) -> Usage | None:
    usage = obj_of(obj).get("usage")
    if not isinstance(usage, dict):
        return None
    return Usage(int_of(usage.get("inputTokens")), int_of(usage.get("outputTokens")))


def _reasoning_text(block: dict[str, JSON]) -> str:
    return text_of(obj_of(obj_of(block.get("reasoningContent")).get("reasoningText")).get("text")) or ""


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``ConverseResponse`` (or an error body, with its status) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if "output" not in obj and "message" in obj and status is not None and status >= 400:
        code = text_of(obj.get("__type"))
        return ImportedTurn(Turn("error", None, error=provider_error(status, code, text_of(obj.get("message")))),
                            DIALECT)
    message = obj_of(obj_of(obj.get("output")).get("message"))
    blocks = message.get("content")
    if not isinstance(blocks, list):
        raise ValueError("a ConverseResponse without output.message.content")
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        block = obj_of(block)
        if "text" in block:
            texts.append(text_of(block.get("text")) or "")
        elif "reasoningContent" in block:
            thinking.append(_reasoning_text(block))
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            calls.append(ToolCall(text_of(use.get("toolUseId")) or "", text_of(use.get("name")) or "",
                                  dumps_args(use.get("input", {}))))
        else:
            unknown[f"bedrock-converse: content block {sorted(block)}"] += 1
    raw = text_of(obj.get("stopReason"))
    turn = Turn(finish_of(DIALECT, raw), raw, content="".join(texts) if texts else None, tool_calls=tuple(calls),
                reasoning="".join(thinking) if thinking else None, usage=_usage(obj))
    return ImportedTurn(turn, DIALECT)


@dataclass(slots=True)
class _Block:
    text: Pieces = field(default_factory=Pieces)
    reasoning: Pieces = field(default_factory=Pieces)
    id: str = ""
    name: str = ""
    use: bool = False
    partial: Pieces = field(default_factory=lambda: Pieces(""))


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed botocore's stream events in order, then call :meth:`finish`."""

    unknown: Counter[str]
    notes: list[str] = field(default_factory=list)
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: str | None = None
    stopped: bool = False
    usage: Usage | None = None
    error: TurnError | None = None

    def _block(self, data: dict[str, JSON]) -> _Block:
        index = data.get("contentBlockIndex")
        return self.blocks.setdefault(index if isinstance(index, int) else len(self.blocks), _Block())

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        kind, data = next(iter(obj.items())) if isinstance(obj, dict) and len(obj) == 1 else (event_name, obj)
        data = obj_of(data)
        if kind in STREAM_EXCEPTIONS:
            self.error = provider_error(None, kind, text_of(data.get("message")), in_stream=True)
        elif kind == "contentBlockStart":
            use = obj_of(obj_of(data.get("start")).get("toolUse"))
            b = self._block(data)
            b.use, b.id, b.name = True, text_of(use.get("toolUseId")) or "", text_of(use.get("name")) or ""
        elif kind == "contentBlockDelta":
            delta, b = obj_of(data.get("delta")), self._block(data)
            if "text" in delta:
                b.text.add(text_of(delta.get("text")) or "")
            elif "reasoningContent" in delta:
                b.reasoning.add(text_of(obj_of(delta["reasoningContent"]).get("text")) or "")
            elif "toolUse" in delta:
                b.partial.add(text_of(obj_of(delta["toolUse"]).get("input")) or "")
            else:
                self.unknown[f"bedrock-converse: delta {sorted(delta)}"] += 1
        elif kind == "messageStop":
            self.stopped, self.stop_reason = True, text_of(data.get("stopReason"))
        elif kind == "metadata":
            self.usage = _usage(data)
        elif kind not in ("messageStart", "contentBlockStop"):
            self.unknown[f"bedrock-converse: event '{kind}'"] += 1

    def finish(self) -> ImportedTurn:
        if not self.stopped and self.error is None:
            self.notes.append("stream ended without messageStop")
        ordered = [b for _, b in sorted(self.blocks.items())]
        texts = [b.text.text() or "" for b in ordered if not b.use and b.text]
        thinking = [b.reasoning.text() or "" for b in ordered if b.reasoning]
        calls = tuple(ToolCall(b.id, b.name, b.partial.text() or "") for b in ordered if b.use)
        content = "".join(texts) if texts else None
        reasoning = "".join(thinking) if thinking else None
        if self.error is not None:
            turn = Turn("error", None, content=content, tool_calls=calls, reasoning=reasoning, error=self.error,
                        usage=self.usage)
        else:
            turn = Turn(finish_of(DIALECT, self.stop_reason), self.stop_reason, content=content, tool_calls=calls,
                        reasoning=reasoning, usage=self.usage)
        return ImportedTurn(turn, DIALECT, notes=self.notes)
